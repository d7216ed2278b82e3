import Foundation
import Hummingbird
import InstantTesting
import Testing

@testable import InstantServer

/// A method a path does not support is answered 405 with the methods it does, never 404 or 200
/// (issue 13, finding 9: TRACE answered 404).
@Suite("Methods a path does not support", .timeLimit(.minutes(10)))
struct MethodNotAllowedTests {
    @Test func aPathThatExistsAnswers405AndListsItsMethods() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let cases: [(HTTPRequest.Method, String, String)] = [
                (.trace, "/healthcheck", "GET"),
                (.trace, "/api/documents", "DELETE, GET, POST"),
                (.put, "/api/documents", "DELETE, GET, POST"),
                (.options, "/api/documents/\(id)/annotations", "DELETE, GET, POST, PUT"),
                (.patch, "/api/documents/\(id)/layers/team/annotations/a1", "DELETE, GET, PUT"),
                (.trace, "/i/d/\(id)/l/team/sync", "POST"),
                (.put, "/i/d/\(id)/listen", "GET"),
            ]
            for (method, path, allowed) in cases {
                let reply = try await client.request(method, path)
                #expect(reply.status == .methodNotAllowed, "\(method) \(path)")
                #expect(reply.headers[.allow] == allowed, "\(method) \(path)")
                #expect(reply.reason?.contains(allowed) == true, "\(reply.reason ?? "")")
            }
        }
    }

    @Test func otherPathsStay404AndMethodsNoRouteUsesAre501() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            #expect(try await client.request(.get, "/nowhere").status == .notFound)
            #expect(try await client.request(.post, "/api/documents/x/y/z").status == .notFound)
            let trace = try await client.request(.trace, "/nowhere")
            #expect(trace.status == .notImplemented)
            #expect(trace.reason?.contains("TRACE") == true)
            #expect(try await client.request(.get, "/healthcheck").status == .ok, "routes still answer")
        }
    }
}
