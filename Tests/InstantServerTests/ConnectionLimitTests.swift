import Foundation
import InstantJSON
import InstantTesting
import Testing

@testable import InstantServer

/// Slow, silent, idle and oversized clients are cut off; long-polls, WebSockets and uploads that
/// keep moving are not; a flood of connections does not keep anyone out (issue 13, finding 4).
@Suite("Connection limits", .timeLimit(.minutes(10)))
struct ConnectionLimitTests {
    /// A timeout no test waits for.
    static let never = Duration.seconds(600)

    @Test func aHeadSentByteByByteIsAnsweredWith408AndClosed() async throws {
        // 8 s: on a busy machine (the whole suite, with PostgreSQL and server processes, on two
        // cores) the first byte may leave late, and a connection silent for the whole header
        // timeout is closed without an answer (the next test).
        try await LimitedServer.run(HTTPLimits(headerTimeout: .seconds(8), idleTimeout: Self.never)) { server in
            let connection = try await RawConnection.open(port: server.port)
            let head = "GET /healthcheck HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + String(repeating: "a", count: 1500)
            for byte in head.utf8 where !connection.isClosed {
                try? await connection.send([byte])
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(try await connection.closedByServer(), "a head that never completes is cut off")
            let answer = try await connection.answer(within: 1)
            #expect(answer?.status == 408)
            #expect(answer?.reason?.contains("--header-timeout") == true, "\(answer?.reason ?? "no answer")")
            #expect(answer?.headers["x-content-type-options"] == "nosniff")
        }
    }

    @Test func aConnectionThatSendsNothingIsClosedWithoutAnAnswer() async throws {
        try await LimitedServer.run(HTTPLimits(headerTimeout: .milliseconds(500), idleTimeout: Self.never)) { server in
            let connection = try await RawConnection.open(port: server.port)
            #expect(try await connection.closedByServer())
            #expect(!connection.hasUnreadBytes, "no request, so no answer")
        }
    }

    @Test func anIdleKeepAliveConnectionIsClosed() async throws {
        try await LimitedServer.run(HTTPLimits(headerTimeout: Self.never, idleTimeout: .milliseconds(500))) { server in
            let connection = try await RawConnection.open(port: server.port)
            try await connection.sendRequest("GET", "/healthcheck")
            #expect(try await connection.answer()?.status == 200)
            #expect(
                try await connection.closedByServer(), "the header timeout is too long to close it: the idle one did")
            #expect(!connection.hasUnreadBytes, "an idle connection is closed without an answer")
        }
    }

    @Test func aStalledBodyIsAnsweredWith408AndNothingIsStored() async throws {
        let limits = HTTPLimits(headerTimeout: Self.never, bodyTimeout: .seconds(2), idleTimeout: Self.never)
        try await LimitedServer.run(limits) { server in
            let pdf = TestPDF.make(pageCount: 1, contentSize: 20_000)
            let head =
                "POST /api/documents HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/pdf\r\n"
                + "Authorization: Token token=\"\(server.apiAuthToken)\"\r\nContent-Length: \(pdf.count)\r\n\r\n"
            let connection = try await RawConnection.open(
                port: server.port, sending: Array(head.utf8) + pdf.prefix(pdf.count / 2))
            let answer = try await connection.answer()
            #expect(answer?.status == 408)
            #expect(answer?.reason?.contains("--body-timeout") == true, "\(answer?.reason ?? "no answer")")
            #expect(try await connection.closedByServer())
            let list = try await RawConnection.request(
                port: server.port, "GET", "/api/documents", headers: LimitedServer.apiHeaders)
            #expect(list?.json?["document_count"] == 0, "half a body is never taken for a whole one")
        }
    }

    @Test func anUploadThatKeepsSendingIsNotCut() async throws {
        // Margins for a busy machine (the whole suite runs in parallel on two cores, where this
        // test's sender once stalled for more than 5 s): pauses of 75 ms against a 12 s timeout,
        // 15 s in all.
        let limits = HTTPLimits(headerTimeout: Self.never, bodyTimeout: .seconds(12), idleTimeout: Self.never)
        try await LimitedServer.run(limits) { server in
            let pdf = TestPDF.make(pageCount: 1, contentSize: 4000)
            let connection = try await RawConnection.open(port: server.port)
            try await connection.send(
                "POST /api/documents HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/pdf\r\n"
                    + "Authorization: Token token=\"\(server.apiAuthToken)\"\r\nContent-Length: \(pdf.count)\r\n\r\n")
            // 200 pieces 75 ms apart: the upload takes longer than the body timeout, each pause less.
            let pieceSize = pdf.count / 200 + 1
            for start in stride(from: 0, to: pdf.count, by: pieceSize) {
                try await connection.send(pdf[start..<min(pdf.count, start + pieceSize)])
                try await Task.sleep(for: .milliseconds(75))
            }
            let answer = try await connection.answer()
            #expect(answer?.status == 200, "\(answer?.reason ?? "no answer")")
            #expect(answer?.json?["data"]?["document_id"]?.stringValue != nil)
            await connection.close()
        }
    }

    @Test func anAnswerTheClientDoesNotReadIsCutOff() async throws {
        let limits = HTTPLimits(headerTimeout: .seconds(5), bodyTimeout: .milliseconds(300), idleTimeout: Self.never)
        try await LimitedServer.run(limits) { server in
            // Far more than the socket buffers of both ends hold.
            let pdf = TestPDF.make(pageCount: 1, contentSize: 24_000_000)
            // Stored directly, past the HTTP limits under test.
            let id = try await server.storage.storeDocument(pdf)
            let connection = try await RawConnection.open(
                port: server.port, reading: false,
                sending: RawConnection.request("GET", "/api/documents/\(id)/pdf", headers: LimitedServer.apiHeaders))
            connection.read()
            #expect(try await RawConnection.poll(30) { connection.receivedCount > 0 }, "the answer has begun")

            // A silent connection opened now is closed after the header timeout, longer than the
            // body timeout: by then the answer has stalled for longer than the body timeout.
            let witness = try await RawConnection.open(port: server.port)
            #expect(try await witness.closedByServer())
            try await connection.startReading()
            #expect(try await connection.closedByServer())
            #expect(connection.receivedCount < pdf.count, "the server gave up on the answer")
        }
    }

    @Test func anOversizedHeadIsAnsweredWith431AndClosed() async throws {
        try await LimitedServer.run(HTTPLimits(maxHeaderSize: 4096)) { server in
            let fits = try await RawConnection.request(
                port: server.port, "GET", "/healthcheck", headers: ["X-Big": String(repeating: "a", count: 3000)])
            #expect(fits?.status == 200, "a head below the limit is served")

            let connection = try await RawConnection.open(port: server.port)
            try await connection.sendRequest(
                "GET", "/healthcheck", headers: ["X-Big": String(repeating: "a", count: 8000)])
            let answer = try await connection.answer()
            #expect(answer?.status == 431)
            #expect(answer?.reason?.contains("--max-header-size") == true, "\(answer?.reason ?? "no answer")")
            #expect(try await connection.closedByServer())
        }
    }

    @Test func theConnectionsThatWaitedLongestMakeRoomForNewOnes() async throws {
        try await LimitedServer.run(HTTPLimits(headerTimeout: Self.never, idleTimeout: Self.never, maxConnections: 3)) {
            server in
            var connections: [RawConnection] = []
            for _ in 0..<3 {
                let connection = try await RawConnection.open(port: server.port)
                #expect(try await connection.healthcheck() == 200)
                connections.append(connection)
            }
            let (a, b, c) = (connections[0], connections[1], connections[2])

            let d = try await RawConnection.open(port: server.port)
            #expect(try await d.healthcheck() == 200, "a new connection is served at the limit")
            #expect(try await a.closedByServer(), "the connection that waited longest made room")
            #expect(!b.isClosed && !c.isClosed)

            #expect(try await b.healthcheck() == 200, "b still works, and now waited least")
            let e = try await RawConnection.open(port: server.port)
            #expect(try await e.healthcheck() == 200)
            #expect(try await c.closedByServer(), "c waited longest now, not b")
            #expect(try await b.healthcheck() == 200)
            #expect(try await d.healthcheck() == 200)
            for connection in [b, d, e] { await connection.close() }
        }
    }

    @Test func aFloodOfSilentConnectionsDoesNotKeepHealthcheckOut() async throws {
        try await LimitedServer.run(HTTPLimits(headerTimeout: Self.never, idleTimeout: Self.never, maxConnections: 8)) {
            server in
            var flood: [RawConnection] = []
            for _ in 0..<60 { flood.append(try await RawConnection.open(port: server.port)) }
            for _ in 0..<5 {
                let answer = try await RawConnection.request(port: server.port, "GET", "/healthcheck")
                #expect(answer?.status == 200)
            }
            #expect(try await RawConnection.poll(30) { flood.filter(\.isClosed).count >= 60 - 8 })
            for connection in flood { await connection.close() }
        }
    }

    @Test func busyConnectionsAreNeverClosedToMakeRoom() async throws {
        let key = try await TestSigningKey(.es256)
        let limits = HTTPLimits(headerTimeout: Self.never, idleTimeout: Self.never, maxConnections: 2)
        // The polls wait (the default long-poll timeout, 600 s) until a change wakes them: with a
        // timeout of 10 s, on a loaded machine the first poll had ended before the third
        // connection came, and that connection took its room instead of being refused.
        try await LimitedServer.run(limits, jwt: key.jwtConfiguration) { server in
            let id = try await server.upload()
            let poll = try await server.longPoll(id, key: key)
            let first = try await RawConnection.open(port: server.port)
            #expect(try await first.healthcheck() == 200)

            // The long-poll is busy, so a new connection closes the waiting one...
            let second = try await RawConnection.open(port: server.port)
            #expect(try await second.healthcheck() == 200)
            #expect(try await first.closedByServer())

            // ...and when every connection is busy, a new one is refused with a reason.
            let secondPoll = try await server.longPoll(id, key: key, on: second)
            let refused = try await RawConnection.open(port: server.port)
            let answer = try await refused.answer()
            #expect(answer?.status == 503)
            #expect(answer?.reason?.contains("--max-connections") == true, "\(answer?.reason ?? "no answer")")

            // Neither poll was closed to make room: the second is still open, and the first answers
            // a change made beside the connections (through the storage, which wakes the polls).
            #expect(!secondPoll.isClosed, "the second long-poll was closed to make room")
            _ = try await server.storage.apply(
                [.put(StorageConformanceTests.annotation("woken"))],
                documentID: id, layer: "", onConditionFailure: .skipChange)
            let woken = try await poll.answer()
            #expect(woken?.status == 200, "the first long-poll was closed to make room")
            #expect(woken?.json?["revision"] == 1, "the first long-poll was woken by the change")
            #expect(try await secondPoll.answer()?.status == 200)
            await poll.close()
            await second.close()
        }
    }

    @Test func aLongPollOutlivesEveryTimeout() async throws {
        let key = try await TestSigningKey(.es256)
        // Long enough that a probe opened on a busy machine still sends its bytes in time.
        let short = Duration.seconds(6)
        let limits = HTTPLimits(headerTimeout: short, bodyTimeout: short, idleTimeout: short)
        try await LimitedServer.run(limits, jwt: key.jwtConfiguration) { server in
            let id = try await server.upload()
            let poll = try await server.longPoll(id, key: key)
            try await server.waitForTimeouts()
            try await server.addAnnotation(id)
            let answer = try await poll.answer()
            #expect(answer?.status == 200)
            #expect(answer?.json?["revision"] == 1, "the long-poll waited longer than the timeouts and was woken")
            await poll.close()
        }
    }

    @Test func aWebSocketOutlivesEveryTimeout() async throws {
        let key = try await TestSigningKey(.es256)
        // Long enough that a probe opened on a busy machine still sends its bytes in time.
        let short = Duration.seconds(6)
        let limits = HTTPLimits(headerTimeout: short, bodyTimeout: short, idleTimeout: short)
        try await LimitedServer.run(limits, jwt: key.jwtConfiguration) { server in
            let id = try await server.upload()
            let token = try await server.token(id, key)
            let socket = ListeningSocket(
                port: server.port, path: "/i/d/\(id)/listen?since=0&clientId=phone&jwt=\(token)")
            #expect(try await socket.message { $0["presence"] != nil } != nil)
            try await server.waitForTimeouts()
            try await server.addAnnotation(id)
            #expect(try await socket.message { $0["revision"]?.integerValue == 1 } != nil, "the socket is still open")
            await socket.close()
        }
    }
}

/// A live server with the given limits on an ephemeral port, for tests with raw connections.
struct LimitedServer {
    static let apiToken = "limited-api-token"
    static var apiHeaders: [String: String] { ["Authorization": "Token token=\"\(apiToken)\""] }

    let server: InstantTestServer
    let storage: InstantStorage
    let limits: HTTPLimits
    var port: Int { server.port }
    var apiAuthToken: String { server.apiAuthToken }

    /// Runs `body` against a new server, then stops the server.
    static func run(
        _ limits: HTTPLimits,
        jwt: JWTConfiguration? = nil,
        longPollTimeout: Duration = .seconds(600),
        _ body: (LimitedServer) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try InstantStorage.sqlite(directory: directory.url)
        let server = try await InstantTestServer.start(
            storage: storage,
            importer: InstantPDFImporter(),
            jwt: jwt,
            apiAuthToken: apiToken,
            longPollTimeout: longPollTimeout,
            httpLimits: limits
        )
        do {
            try await body(LimitedServer(server: server, storage: storage, limits: limits))
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    /// Uploads a PDF (by default one blank page) and returns the new document's id.
    func upload(_ pdf: Data = TestPDF.make(pageCount: 1)) async throws -> String {
        let answer = try await RawConnection.request(
            port: port, "POST", "/api/documents",
            headers: Self.apiHeaders.merging(["Content-Type": "application/pdf"]) { $1 },
            body: pdf)
        return try #require(answer?.json?["data"]?["document_id"]?.stringValue)
    }

    /// Adds a note to the document's default layer through the backend API.
    func addAnnotation(_ id: String) async throws {
        let answer = try await RawConnection.request(
            port: port, "POST", "/api/documents/\(id)/annotations",
            headers: Self.apiHeaders.merging(["Content-Type": "application/json"]) { $1 },
            body: JSONValue.object(["content": noteContent()]).encoded())
        #expect(answer?.status == 200, "\(answer?.reason ?? "no answer")")
    }

    /// A client token for the document.
    func token(_ id: String, _ key: TestSigningKey) async throws -> String {
        try await key.token(
            ClientClaims(
                documentID: id, permissions: ["read-document", "write"], userID: "alice",
                expiration: Date().addingTimeInterval(3600)))
    }

    /// The `Authorization` header of a client token for the document.
    func auth(_ id: String, _ key: TestSigningKey) async throws -> [String: String] {
        ["Authorization": "Token token=\"\(try await token(id, key))\""]
    }

    /// A long-poll on the document's default layer, waiting for a revision after 0, on a new
    /// connection or on `connection`. It returns once the server serves the long-poll: a
    /// `/healthcheck` sent with it in one write was answered.
    func longPoll(_ id: String, key: TestSigningKey, on connection: RawConnection? = nil) async throws
        -> RawConnection
    {
        let headers = try await auth(id, key).map { "\($0.key): \($0.value)\r\n" }.joined()
        let requests =
            "GET /healthcheck HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            + "GET /i/d/\(id)/listen?since=0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\(headers)\r\n"
        let polling: RawConnection
        if let connection {
            try await connection.send(requests)
            polling = connection
        } else {
            polling = try await RawConnection.open(port: port, sending: requests)
        }
        #expect(try await polling.answer()?.status == 200)
        return polling
    }

    /// Returns once every timeout of ``limits`` has cut off a connection opened now: one that
    /// sends nothing, one that sends half a head, one that answered a request and idles, and
    /// one that sends half a body. Whatever was open before has lived at least as long. Each
    /// sends its bytes with its connection (``RawConnection/open(port:reading:sending:)``).
    func waitForTimeouts() async throws {
        let silent = try await RawConnection.open(port: port)
        let halfHead = try await RawConnection.open(port: port, sending: "GET /healthcheck HTTP/1.1\r\n")
        let idle = try await RawConnection.open(port: port, sending: RawConnection.request("GET", "/healthcheck"))
        #expect(try await idle.answer()?.status == 200)
        let halfBody = try await RawConnection.open(
            port: port,
            sending:
                "POST /api/documents HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Token token=\"\(Self.apiToken)\"\r\n"
                + "Content-Length: 100\r\n\r\nhalf")
        for connection in [silent, halfHead, idle, halfBody] {
            #expect(try await connection.closedByServer())
        }
    }
}

extension RawConnection {
    /// Sends `GET /healthcheck` on this connection and returns the answer's status.
    func healthcheck() async throws -> Int? {
        try await sendRequest("GET", "/healthcheck")
        return try await answer()?.status
    }
}

extension RawConnection.Answer {
    /// The body as JSON.
    var json: JSONValue? { try? JSONValue.parse(body) }
}
