import Foundation
import HTTPTypes
import InstantJSON
import InstantTesting
import NIOCore
import NIOHTTPTypes
import Testing

@testable import InstantServer

/// Sync requests answered by the connection ahead of the router (``SyncRouteHandler``): the order
/// of answers on a connection, and answers like the router's.
@Suite("Sync requests ahead of the router")
struct SyncRouteHandlerTests {
    // MARK: The state machine, transition by transition

    static func head(_ method: HTTPRequest.Method, _ path: String, contentLength: Int? = nil) -> HTTPRequestPart {
        var fields = HTTPFields()
        if let contentLength { fields[.contentLength] = String(contentLength) }
        return .head(
            HTTPRequest(method: method, scheme: "http", authority: "127.0.0.1", path: path, headerFields: fields))
    }

    static let push = head(.post, "/i/d/doc/sync")
    static let other = head(.get, "/healthcheck")

    static func body(_ bytes: Int) -> HTTPRequestPart { .body(ByteBuffer(repeating: 1, count: bytes)) }

    static func machine(_ maxBodySize: Int) -> SyncRouteStateMachine {
        SyncRouteStateMachine(bodyLimit: InstantAPI.BodyLimit(bytes: maxBodySize, option: "--max-sync-body-size"))
    }

    /// Reads parts in turn, as the handler does, with the server's route; a token check it asks for
    /// passes at once unless `refusing` says otherwise.
    static func read(
        _ parts: [HTTPRequestPart], into machine: inout SyncRouteStateMachine, refusing refusal: APIError? = nil
    ) -> [String] {
        parts.map { part in
            let action = machine.read(part, isSyncRoute: { ClientRoutePath($0.path ?? "", route: "sync") })
            guard case .authorize = action else { return describe(action) }
            let outcome = machine.authorized(refusal.map { .failure($0) } ?? .success(NodeRelayTests.token("a")))
            return "authorize, then " + describe(outcome)
        }
    }

    static func describe(_ action: SyncRouteStateMachine.Action) -> String {
        switch action {
        case .none: "none"
        case .route(.head(let head)): "route head \(head.path ?? "")"
        case .route(.body): "route body"
        case .route(.end): "route end"
        case .authorize: "authorize"
        case .answer(let request):
            request.refusal.map { "refuse \($0.status.code)" } ?? "answer \(request.body.readableBytes) bytes"
        }
    }

    @Test func aSyncRequestIsGatheredAndAnsweredOthersGoToTheRouter() {
        var machine = Self.machine(100)
        #expect(machine.isIdle)
        #expect(Self.read([Self.push, Self.body(30)], into: &machine) == ["authorize, then none", "none"])
        // Its body arriving, the request is under way (the server's shutdown waits for it), and the
        // connection goes on reading it.
        #expect(!machine.isIdle)
        #expect(!machine.holdsReads)
        #expect(Self.read([Self.body(20), .end(nil)], into: &machine) == ["none", "answer 50 bytes"])
        #expect(machine.holdsReads)
        // What arrives meanwhile waits for the answer, in order.
        #expect(Self.read([Self.other, .end(nil)], into: &machine) == ["none", "none"])
        #expect(machine.nextWaitingPart() == nil)
        machine.answered()
        #expect(!machine.holdsReads)
        #expect(machine.isIdle)
        var waited: [String] = []
        while let part = machine.nextWaitingPart() {
            waited.append(Self.describe(machine.read(part, isSyncRoute: { _ in nil })))
        }
        #expect(waited == ["route head /healthcheck", "route end"])
    }

    @Test func aSyncRequestWaitsForTheRoutersAnswersBeforeIt() {
        var machine = Self.machine(100)
        #expect(Self.read([Self.other, .end(nil)], into: &machine) == ["route head /healthcheck", "route end"])
        #expect(
            Self.read([Self.push, Self.body(5), .end(nil)], into: &machine) == ["authorize, then none", "none", "none"])
        #expect(machine.holdsReads)
        #expect(Self.describe(machine.routerAnswered()) == "answer 5 bytes")
        // A second answer's end, or one the router wrote with nothing due, changes nothing.
        machine.answered()
        #expect(Self.describe(machine.routerAnswered()) == "none")
        #expect(Self.read([Self.push, .end(nil)], into: &machine) == ["authorize, then none", "answer 0 bytes"])
    }

    @Test func aBodyOverTheLimitIsRefusedAtOnceAndDropped() {
        var declared = Self.machine(10)
        #expect(
            Self.read(
                [Self.head(.post, "/i/d/doc/l/layer/sync", contentLength: 11), Self.body(11), .end(nil)],
                into: &declared)
                == ["refuse 413", "none", "none"])
        #expect(!declared.holdsReads)
        #expect(Self.read([Self.other], into: &declared) == ["route head /healthcheck"])

        var streamed = Self.machine(10)
        #expect(
            Self.read([Self.push, Self.body(6), Self.body(6), Self.body(6), .end(nil)], into: &streamed)
                == ["authorize, then none", "none", "refuse 413", "none", "none"])

        // Behind an answer the router owes, the refusal waits for it and the request's end.
        var behind = Self.machine(10)
        _ = Self.read([Self.other, .end(nil)], into: &behind)
        #expect(
            Self.read([Self.push, Self.body(11), .end(nil)], into: &behind) == ["authorize, then none", "none", "none"])
        #expect(Self.describe(behind.routerAnswered()) == "refuse 413")
    }

    /// The body of a request whose token is refused is not kept: the refusal is answered once the
    /// check ends, and the body dropped. Parts read during the check wait for it.
    @Test func theTokenIsCheckedBeforeTheBodyIsKept() {
        var machine = Self.machine(100)
        #expect(
            Self.read([Self.push], into: &machine, refusing: .unauthorized("no token")) == [
                "authorize, then refuse 401"
            ])
        #expect(
            Self.read([Self.body(50), .end(nil), Self.other], into: &machine) == [
                "none", "none", "route head /healthcheck",
            ])

        var checking = Self.machine(100)
        let head = checking.read(Self.push, isSyncRoute: { ClientRoutePath($0.path ?? "", route: "sync") })
        #expect(Self.describe(head) == "authorize")
        #expect(checking.holdsReads)
        #expect(Self.describe(checking.read(Self.body(5), isSyncRoute: { _ in nil })) == "none")
        #expect(Self.describe(checking.authorized(.success(NodeRelayTests.token("a")))) == "none")
        var replayed: [String] = []
        while let part = checking.nextWaitingPart() {
            replayed.append(Self.describe(checking.read(part, isSyncRoute: { _ in nil })))
        }
        #expect(replayed == ["none"])
        #expect(Self.read([.end(nil)], into: &checking) == ["answer 5 bytes"])
    }

    /// After the router's answer to a request that closes the connection (or the server's
    /// shutdown), sync requests are left to the router, which reads nothing more.
    @Test func afterAClosingRequestEverythingGoesToTheRouter() {
        var machine = Self.machine(100)
        var closing = HTTPFields()
        closing[.connection] = "close"
        let head = HTTPRequestPart.head(
            HTTPRequest(method: .get, scheme: "http", authority: "h", path: "/healthcheck", headerFields: closing))
        #expect(
            Self.read([head, .end(nil), Self.push], into: &machine) == [
                "route head /healthcheck", "route end", "route head /i/d/doc/sync",
            ])
        var listed = Self.machine(100)
        var options = HTTPFields()
        options[.connection] = "keep-alive, Close"
        let listing = HTTPRequestPart.head(
            HTTPRequest(method: .get, scheme: "http", authority: "h", path: "/healthcheck", headerFields: options))
        #expect(Self.read([listing, .end(nil), Self.push], into: &listed).last == "route head /i/d/doc/sync")
        var quiesced = Self.machine(100)
        quiesced.routeEverything()
        #expect(Self.read([Self.push], into: &quiesced) == ["route head /i/d/doc/sync"])
    }

    @Test func onlySyncPathsAreTaken() {
        func names(_ path: String) -> [String]? {
            ClientRoutePath(path, route: "sync").map { [$0.documentID, $0.layer] }
        }
        #expect(names("/i/d/doc/sync") == ["doc", ""])
        #expect(names("/i/d/doc/l/a%20b/sync?jwt=x") == ["doc", "a%20b"])
        #expect(names("/i/d/doc/sync?a/b") == ["doc", ""])
        #expect(
            ClientRoutePath("/i/d/doc/l/a/listen", route: "listen").map { [$0.documentID, $0.layer] } == ["doc", "a"])
        #expect(ClientRoutePath("/i/d/doc/l/a/sync", route: "listen") == nil)
        for path in [
            "/i/d/doc/sync/", "/i/d//sync", "/i/d/doc/l//sync", "/i/d/doc/listen", "/api/documents/doc/sync",
            "/i/d/doc/x/y/sync", "/i/d/doc/l/sync", "/i/d/doc/l/a/b/sync", "i/d/doc/sync", "/i/x/doc/sync",
            "/x/d/doc/sync", "/i/d/doc/m/a/sync", "/i/d/doc/sync/sync", "/", "", "/i/d/doc/l/a/b/c/sync",
            "/i/d/doc/sync#x",
        ] {
            #expect(names(path) == nil, "\(path)")
        }
    }

    // MARK: A live server

    /// Requests sent at once on one connection are answered in their order, whoever answers them;
    /// the connection stays open, and a request that asks to close it closes it after its answer.
    @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
        let fixture = try await SyncFixture()
        try await fixture.onDocument { client, port, id, token in
            let auth = ["Authorization": "Token token=\"\(token)\"", "Content-Type": "application/json"]
            func body(_ json: JSONValue) -> Data { json.encoded() }
            let push = body([
                "clientId": "c1", "pushId": 1, "baseRevision": 0, "changes": [put("n1", noteContent())],
            ])
            let pull = body(["clientId": "c2", "baseRevision": 0])
            // A request for the router first: the push's answer waits for its answer.
            var bytes = RawConnection.request("GET", "/healthcheck")
            bytes += RawConnection.request("POST", "/i/d/\(id)/sync", headers: auth, body: push)
            bytes += RawConnection.request("GET", "/healthcheck")
            bytes += RawConnection.request("POST", "/i/d/\(id)/sync", headers: auth, body: pull)
            bytes += RawConnection.request(
                "POST", "/i/d/\(id)/sync", headers: auth.merging(["Connection": "close"]) { $1 }, body: Data("{".utf8))
            let connection = try await RawConnection.open(port: port, sending: bytes)
            let first = try #require(try await connection.answer())
            #expect(first.status == 200)
            #expect(try JSONValue(parsing: first.body)["ok"] == true)
            let pushed = try #require(try await connection.answer())
            #expect(pushed.status == 200)
            #expect(try JSONValue(parsing: pushed.body)["revision"] == 1)
            let health = try #require(try await connection.answer())
            #expect(health.status == 200)
            #expect(try JSONValue(parsing: health.body)["ok"] == true)
            let pulled = try #require(try await connection.answer())
            #expect(pulled.status == 200)
            let records = try #require(try JSONValue(parsing: pulled.body)["records"]?.arrayValue)
            #expect(records.contains { $0["id"] == "n1" })
            let malformed = try #require(try await connection.answer())
            #expect(malformed.status == 400)
            #expect(malformed.reason?.contains("JSON") == true)
            #expect(try await connection.closedByServer())
        }
    }

    /// A token the server verified before is checked again without a wait: its refusals are those
    /// of the first check. Refusals decided at once while requests wait behind the router's answer
    /// still go out in order, and the requests after them are answered.
    @Test func refusalsDecidedAtOnceMatchTheFirstCheckAndKeepTheOrder() async throws {
        let fixture = try await SyncFixture()
        try await fixture.onDocument { _, port, id, token in
            let pull = JSONValue.object(["clientId": "c", "baseRevision": 0]).encoded()
            func auth(_ token: String) -> [String: String] { ["Authorization": "Token token=\"\(token)\""] }
            let refused = [
                (token: try await fixture.token(id, layer: "review"), reason: "layer 'review'"),
                (token: try await fixture.token("other"), reason: "document 'other'"),
                (token: try await fixture.token(id, permissions: ["write"]), reason: "read-document"),
            ]
            // First sight of each token: verified in a task.
            for (token, reason) in refused {
                let answer = try #require(
                    try await RawConnection.request(
                        port: port, "POST", "/i/d/\(id)/sync", headers: auth(token), body: pull))
                #expect(answer.status == 403)
                #expect(answer.reason?.contains(reason) == true, "\(answer.reason ?? "")")
            }
            // Then behind a request for the router: each is taken once the router has answered,
            // and refused at once.
            var bytes = RawConnection.request("GET", "/healthcheck")
            bytes += RawConnection.request("POST", "/i/d/\(id)/sync", body: pull)
            for (token, _) in refused {
                bytes += RawConnection.request("POST", "/i/d/\(id)/sync", headers: auth(token), body: pull)
            }
            bytes += RawConnection.request("GET", "/healthcheck")
            bytes += RawConnection.request("POST", "/i/d/\(id)/sync", headers: auth(token), body: pull)
            let connection = try await RawConnection.open(port: port, sending: bytes)
            #expect(try #require(try await connection.answer()).status == 200)
            let anonymous = try #require(try await connection.answer())
            #expect(anonymous.status == 401)
            for (_, reason) in refused {
                let answer = try #require(try await connection.answer())
                #expect(answer.status == 403)
                #expect(answer.reason?.contains(reason) == true, "\(answer.reason ?? "")")
            }
            let health = try #require(try await connection.answer())
            #expect(health.status == 200)
            #expect(try JSONValue(parsing: health.body)["ok"] == true)
            let pulled = try #require(try await connection.answer())
            #expect(pulled.status == 200)
            #expect(try JSONValue(parsing: pulled.body)["revision"] == 0)
        }
    }

    /// The answers carry what the router's answers carry (a request that expects `100 Continue` is
    /// left to the router, so both are compared), and are counted under the route's template.
    @Test func answersCarryTheRoutersHeadersAndMetrics() async throws {
        let fixture = try await SyncFixture()
        try await fixture.onDocument { client, port, id, _ in
            let token = try await fixture.token(id, layer: "review")
            let pull = JSONValue.object(["clientId": "c", "baseRevision": 0]).encoded()
            let headers = ["Authorization": "Token token=\"\(token)\"", "X-Request-Id": "trace-7"]
            let path = "/i/d/\(id)/l/review/sync"
            let taken = try #require(
                try await RawConnection.request(port: port, "POST", path, headers: headers, body: pull))
            let routed = try #require(
                try await RawConnection.request(
                    port: port, "POST", path, headers: headers.merging(["Expect": "100-continue"]) { $1 }, body: pull))
            #expect(taken.status == 200)
            #expect(routed.status == 200)
            #expect(try JSONValue(parsing: taken.body) == JSONValue(parsing: routed.body))
            func names(_ answer: RawConnection.Answer) -> Set<String> {
                Set(answer.headers.keys.map { $0.lowercased() })
            }
            #expect(names(taken) == names(routed))
            let fields = Dictionary(uniqueKeysWithValues: taken.headers.map { ($0.key.lowercased(), $0.value) })
            #expect(fields["x-request-id"] == "trace-7")
            #expect(fields["x-content-type-options"] == "nosniff")
            #expect(fields["content-security-policy"] == ResponseSecurityHeaders.contentSecurityPolicy)
            #expect(fields["content-type"] == "application/json; charset=utf-8")
            #expect(fields["server"] == "OpenInstant")
            #expect(fields["date"]?.hasSuffix(" GMT") == true)

            // Without a token: the client routes' 401, with its scheme.
            let refused = try #require(
                try await RawConnection.request(port: port, "POST", "/i/d/\(id)/sync", body: pull))
            #expect(refused.status == 401)
            #expect(refused.headers.contains { $0.key.lowercased() == "www-authenticate" && $0.value == "Token" })

            let metrics = String(decoding: try await client.request(.get, "/metrics").body, as: UTF8.self)
            #expect(metrics.contains(#"route="/i/d/{documentID}/l/{layerName}/sync",status="200"} 2"#))
            #expect(metrics.contains(#"route="/i/d/{documentID}/sync",status="401"} 1"#))
        }
    }

    @Test func theDateHeaderIsAnIMFFixdate() {
        #expect(HTTPDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.format(1_795_881_600) == "Sat, 28 Nov 2026 16:00:00 GMT")
    }

    /// Headers read on the sync path give what the router's subscript gives, repeated fields
    /// included (a repeated `Authorization` or `Content-Length` must not pass as its first value).
    @Test func headerValuesMatchTheSubscript() {
        var fields: HTTPFields = [.authorization: "Token token=\"a\"", .contentLength: "5", .connection: "keep-alive"]
        fields.append(HTTPField(name: .authorization, value: "Token token=\"b\""))
        fields.append(HTTPField(name: .connection, value: "close"))
        for name in [HTTPField.Name.authorization, .contentLength, .connection, .expect] {
            #expect(fields.value(of: name) == fields[name], "\(name)")
        }
        #expect(fields.value(of: .authorization) == "Token token=\"a\", Token token=\"b\"")
        #expect(fields.value(of: .expect) == nil)
    }

    /// `Connection` holds a list of options: a client asks to close with `close` anywhere in it,
    /// in any case, in any of its fields.
    @Test func closeIsFoundInTheConnectionOptions() {
        func closes(_ values: [String]) -> Bool {
            var fields = HTTPFields()
            for value in values { fields.append(HTTPField(name: .connection, value: value)) }
            return fields.asksToCloseConnection
        }
        for values in [
            ["close"], ["Close"], ["keep-alive, close"], ["TE,CLOSE"], [" close\t"], ["keep-alive", "close"],
        ] {
            #expect(closes(values), "\(values)")
        }
        for values in [[], ["keep-alive"], ["closed"], ["cl ose"], [""], [","], ["upgrade, keep-alive"], ["xclose"]] {
            #expect(!closes(values), "\(values)")
        }
    }
}
