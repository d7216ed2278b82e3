import Foundation
import Hummingbird
import InstantTesting
import Testing

@testable import InstantServer

@Suite("Bad input", .timeLimit(.minutes(10)))
struct BadInputTests {
    /// Random bytes and odd JSON sent to every writing route get a 4xx answer with a reason, never
    /// a 5xx or a dropped connection, and nothing is written.
    @Test func garbageNeverBreaksTheServer() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            _ = try await client.json(.post, "/api/documents/\(id)/annotations", ["content": noteContent(id: "root")])
            let routes: [(HTTPRequest.Method, String)] = [
                (.post, "/api/documents"),
                (.post, "/api/documents/\(id)/annotations"),
                (.put, "/api/documents/\(id)/annotations"),
                (.delete, "/api/documents/\(id)/annotations"),
                (.put, "/api/documents/\(id)/annotations/root"),
                (.post, "/api/documents/\(id)/layers"),
                (.post, "/api/documents/\(id)/apply_instant_json"),
                (.post, "/api/documents/\(id)/form-field-values"),
                (.post, "/api/documents/\(id)/bookmarks"),
                (.post, "/api/documents/\(id)/annotations/root/comments"),
                (.post, "/api/revoke"),
            ]
            var generator = SeededGenerator(seed: 42)
            let oddJSON: [String] = [
                "null", "[]", "{}", "\"x\"", "12", "{\"annotations\": 5}", "{\"annotations\": [null]}",
                "{\"content\": []}", "{\"format\": null}", String(repeating: "[", count: 5000),
                "{\"comments\": [{\"content\": {\"text\": 1}}]}", "{\"jwts\": [1, 2]}", "{\"name\": \"\\u0000\"}",
            ]
            for (method, path) in routes {
                var bodies = oddJSON.map { Data($0.utf8) }
                for _ in 0..<5 {
                    let count = Int.random(in: 0..<512, using: &generator)
                    bodies.append(Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }))
                }
                for body in bodies {
                    for contentType in ["application/json", "multipart/form-data; boundary=q", "application/pdf"] {
                        let reply = try await client.request(
                            method, path, headers: [.contentType: contentType], body: body)
                        #expect(
                            (400..<500).contains(reply.status.code),
                            "\(method) \(path) \(contentType) \(String(decoding: body.prefix(60), as: UTF8.self)) → \(reply.status) \(String(decoding: reply.body.prefix(200), as: UTF8.self))"
                        )
                        #expect(
                            reply.reason?.isEmpty == false,
                            "\(method) \(path) \(contentType) \(String(decoding: body.prefix(60), as: UTF8.self)) → \(reply.status) \(String(decoding: reply.body.prefix(200), as: UTF8.self))"
                        )
                    }
                }
            }
            let annotations = try await client.request(.get, "/api/documents/\(id)/annotations")
            #expect(annotations.data?["annotations"]?.arrayValue?.count == 1)
            #expect(try await client.request(.get, "/api/documents").json?["document_count"] == 1)
            #expect(try await client.request(.get, "/api/documents/\(id)/layers").data == [])
        }
    }
}

/// A small deterministic random number generator (SplitMix64) so failures reproduce.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
