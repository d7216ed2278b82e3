import Foundation
import InstantJSON
import InstantTesting
import Testing

@testable import InstantServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("InstantTesting helpers", .timeLimit(.minutes(10)))
struct InstantTestServerTests {
    @Test func theTestServerListensOnAnEphemeralPortAndStops() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let key = try await TestSigningKey(.es256)
        let server = try await InstantTestServer.start(
            storage: try InstantStorage.sqlite(directory: directory.url),
            importer: InstantPDFImporter(),
            jwt: key.jwtConfiguration
        )
        #expect(server.port > 0)
        var request = URLRequest(url: server.baseURL.appendingPathComponent("api/documents"))
        request.setValue("Token token=\"\(server.apiAuthToken)\"", forHTTPHeaderField: "Authorization")
        let (data, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(try JSONValue.parse(data)["document_count"] == 0)
        await server.stop()
        await #expect(throws: (any Error).self) {
            _ = try await URLSession.shared.data(from: server.baseURL.appendingPathComponent("healthcheck"))
        }
    }

    @Test func testPDFsAreDistinctAndDescribeTheirPages() {
        let one = TestPDF.make(pageCount: 2, title: "A (draft)", seed: 1)
        let two = TestPDF.make(pageCount: 2, title: "A (draft)", seed: 2)
        #expect(one != two)
        let text = String(decoding: one, as: UTF8.self)
        #expect(text.hasPrefix("%PDF-1.7"))
        #expect(text.contains("/Count 2"))
        #expect(text.contains("/Title (A \\(draft\\))"))
        #expect(text.hasSuffix("%%EOF\n"))
    }
}
