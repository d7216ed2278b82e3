import Foundation
import Hummingbird
import InstantJSON
import InstantTesting
import Testing

@testable import InstantServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Convergence", .timeLimit(.minutes(10)))
struct ConvergenceTests {
    /// A client of the randomized test: what it knows from the server, its push in flight and its
    /// changes made since.
    final class SimulatedClient: @unchecked Sendable {
        let sync: SyncClient
        var confirmed: [String: JSONValue] = [:]
        var inFlight: (pushID: Int64, base: Int64, changes: [JSONValue])?
        var pending: [JSONValue] = []

        init(_ sync: SyncClient) { self.sync = sync }

        /// The records as the user of this client sees them.
        var view: [String: JSONValue] {
            var view = confirmed
            for change in (inFlight?.changes ?? []) + pending {
                guard let id = change["id"]?.stringValue else { continue }
                view[id] = change["op"] == "put" ? change["content"] : nil
            }
            return view
        }

        var isSettled: Bool { inFlight == nil && pending.isEmpty }
    }

    /// The layer's records on the server (content by id), and its snapshot.
    static func serverRecords(_ client: ServerHarness.Client, documentID: String, token: String) async throws
        -> ([String: JSONValue], ServerHarness.Client.Reply)
    {
        let snapshot = try await client.request(
            .get, "/i/d/\(documentID)/snapshot", headers: [.authorization: "Token token=\"\(token)\""], apiToken: nil)
        var server: [String: JSONValue] = [:]
        for record in snapshot.json?["records"]?.arrayValue ?? [] {
            server[record["id"]?.stringValue ?? ""] = record["content"]
        }
        return (server, snapshot)
    }

    /// The server's truth, replayed from every push the server applied.
    struct Oracle {
        var records: [String: JSONValue] = [:]
        var appliedPushes = 0

        mutating func apply(_ changes: [JSONValue], rejected: Set<String>) {
            var changed = false
            for change in changes {
                guard let id = change["id"]?.stringValue, !rejected.contains(id) else { continue }
                if change["op"] == "put" {
                    records[id] = change["content"]
                    changed = true
                } else if records.removeValue(forKey: id) != nil {
                    changed = true
                }
            }
            if changed { appliedPushes += 1 }
        }
    }

    @Test(arguments: [1, 2, 3])
    func randomEditsWithLostAnswersConverge(seed: UInt64) async throws {
        let fixture = try await SyncFixture()
        defer { fixture.directory.remove() }
        try await fixture.harness.run { client in
            var random = SeededRandom(seed: seed)
            let id = try await client.upload(TestPDF.make(pageCount: 3))
            var clients: [SimulatedClient] = []
            for index in 0..<4 {
                let token = try await fixture.token(id, user: "user\(index)")
                clients.append(SimulatedClient(SyncClient(client, documentID: id, token: token, clientID: "c\(index)")))
            }
            var oracle = Oracle()
            var sent: Set<String> = []
            var lostAnswers = 0
            var nextRecord = 0

            func syncOnce(_ simulated: SimulatedClient, dropAnswer: Bool) async throws {
                if simulated.inFlight == nil, !simulated.pending.isEmpty {
                    simulated.inFlight = (simulated.sync.nextPushID, simulated.sync.baseRevision, simulated.pending)
                    simulated.sync.nextPushID += 1
                    simulated.pending = []
                }
                let flight = simulated.inFlight
                let base = simulated.sync.baseRevision
                let reply = try await simulated.sync.sync(
                    flight?.changes ?? [], pushID: flight?.pushID, base: flight?.base ?? base)
                #expect(reply.status == .ok, "\(reply.reason ?? "")")
                // Push ids only grow and only the push in flight is retried, so the first arrival of a
                // push is the one the server applies: replay it on the oracle.
                if let flight, sent.insert("\(simulated.sync.clientID)/\(flight.pushID)").inserted {
                    oracle.apply(flight.changes, rejected: Set(reply.rejections.keys))
                }
                if dropAnswer {
                    if flight != nil { lostAnswers += 1 }
                    // The push may have been applied, but the client never hears of it.
                    simulated.sync.baseRevision = base
                    return
                }
                for (recordID, record) in reply.records {
                    simulated.confirmed[recordID] = record["deleted"] == true ? nil : record["content"]
                }
                if reply.json?["reset"] == true {
                    simulated.confirmed = simulated.confirmed.filter { reply.records[$0.key] != nil }
                }
                if let flight, (reply.json?["pushId"]?.integerValue ?? 0) >= flight.pushID {
                    simulated.inFlight = nil
                }
            }

            for _ in 0..<120 {
                let simulated = clients[Int(random.next() % UInt64(clients.count))]
                switch random.next() % 10 {
                case 0..<3:
                    nextRecord += 1
                    let page = Int(random.next() % 3)
                    simulated.pending.append(put("r\(nextRecord)", noteContent(page: page, text: "created")))
                case 3..<5:
                    if let target = simulated.view.keys.sorted().randomElement(using: &random) {
                        let text = "edit \(random.next() % 1000)"
                        simulated.pending.append(put(target, noteContent(text: text)))
                    }
                case 5:
                    if let target = simulated.view.keys.sorted().randomElement(using: &random) {
                        simulated.pending.append(delete(target))
                    }
                default:
                    try await syncOnce(simulated, dropAnswer: random.next() % 4 == 0)
                }
            }
            // Quiescence: everyone pushes what is left, then everyone pulls.
            for _ in 0..<10 where clients.contains(where: { !$0.isSettled }) {
                for simulated in clients { try await syncOnce(simulated, dropAnswer: false) }
            }
            for simulated in clients { try await syncOnce(simulated, dropAnswer: false) }

            let (server, snapshot) = try await Self.serverRecords(client, documentID: id, token: clients[0].sync.token)
            #expect(lostAnswers > 0 && oracle.appliedPushes > 10, "the run exercised retries")
            #expect(clients.allSatisfy { $0.isSettled })
            #expect(Set(server.keys) == Set(oracle.records.keys), "no acknowledged change is missing")
            for (recordID, content) in oracle.records {
                #expect(server[recordID]?["text"] == content["text"], "\(recordID) has the last write")
            }
            for simulated in clients {
                #expect(simulated.view == server, "client \(simulated.sync.clientID) converged")
            }
            #expect(
                snapshot.json?["revision"]?.integerValue == Int64(oracle.appliedPushes),
                "every applied push took exactly one revision: retries were not applied again")
        }
    }

    /// A client that lives on its listening WebSocket as docs/PROTOCOL.md describes: it pushes on
    /// the socket, applies change messages that follow its base revision, keeps them aside while its
    /// push waits for an answer, and pulls over HTTP on a gap.
    final class SocketClient: @unchecked Sendable {
        let sync: SyncClient
        let port: Int
        let documentID: String
        var socket: ListeningSocket
        /// How many of the socket's messages were taken.
        var cursor = 0
        var confirmed: [String: JSONValue] = [:]
        /// The push waiting for its answer, and the request id it went out with on the socket.
        var inFlight: (pushID: Int64, base: Int64, changes: [JSONValue], requestID: Int64?)?
        var held: [JSONValue] = []
        var pulls = 0
        var applied = 0
        var nextRequestID: Int64 = 1

        init(_ sync: SyncClient, port: Int, documentID: String) {
            self.sync = sync
            self.port = port
            self.documentID = documentID
            socket = Self.connect(port: port, documentID: documentID, since: 0, token: sync.token)
        }

        static func connect(port: Int, documentID: String, since: Int64, token: String) -> ListeningSocket {
            ListeningSocket(
                port: port, path: "/i/d/\(documentID)/listen?since=\(since)&changes=records&jwt=\(token)")
        }

        func take(_ records: [JSONValue]) {
            for record in records {
                guard let id = record["id"]?.stringValue else { continue }
                confirmed[id] = record["deleted"] == true ? nil : record["content"]
            }
        }

        /// A sync answer (over HTTP or on the socket).
        func answer(_ answer: JSONValue) {
            let records = answer["records"]?.arrayValue ?? []
            if answer["reset"] == true {
                let listed = Set(records.compactMap { $0["id"]?.stringValue })
                confirmed = confirmed.filter { listed.contains($0.key) }
            }
            take(records)
            sync.baseRevision = answer["revision"]?.integerValue ?? sync.baseRevision
            if let flight = inFlight, (answer["pushId"]?.integerValue ?? 0) >= flight.pushID { inFlight = nil }
        }

        func pull() async throws {
            pulls += 1
            let reply = try await sync.sync()
            #expect(reply.status == .ok)
            if let json = reply.json { answer(json) }
        }

        /// A change message, or a revision: applied when it follows the base revision, else a pull.
        func changed(_ message: JSONValue) async throws {
            guard let revision = message["revision"]?.integerValue, revision > sync.baseRevision else { return }
            if let records = message["records"]?.arrayValue, message["since"]?.integerValue == sync.baseRevision {
                take(records)
                sync.baseRevision = revision
                applied += 1
            } else {
                try await pull()
            }
        }

        /// Takes the messages that came since the last look; `drop` decides which change messages are
        /// lost on the way.
        func process(dropping drop: () -> Bool = { false }) async throws {
            let messages = await socket.messages()
            while cursor < messages.count {
                let message = messages[cursor]
                cursor += 1
                if let requestID = message["requestId"]?.integerValue {
                    guard requestID == inFlight?.requestID else { continue }
                    #expect(message["answer"] != nil, "\(message)")
                    answer(message["answer"] ?? [:])
                    let kept = held
                    held = []
                    for change in kept { try await changed(change) }
                } else if message["revision"] != nil {
                    if drop() { continue }
                    if inFlight?.requestID != nil { held.append(message) } else { try await changed(message) }
                }
            }
        }

        /// Pushes the pending changes on the socket and takes messages until the answer came.
        func push(_ changes: [JSONValue]) async throws {
            let requestID = nextRequestID
            nextRequestID += 1
            inFlight = (sync.nextPushID, sync.baseRevision, changes, requestID)
            sync.nextPushID += 1
            let body: JSONValue = [
                "clientId": .string(sync.clientID), "pushId": .integer(inFlight!.pushID),
                "baseRevision": .integer(inFlight!.base), "changes": .array(changes),
            ]
            socket.send(JSONValue.object(["requestId": .integer(requestID), "sync": body]).serializedString())
            #expect(try await socket.message { $0["requestId"]?.integerValue == requestID } != nil)
            try await process()
        }

        /// The connection drops: a push whose answer did not come yet is sent again over HTTP with its
        /// push id, then the client listens again from its base revision.
        func reconnect() async throws {
            await socket.close()
            if let flight = inFlight {
                inFlight = (flight.pushID, flight.base, flight.changes, nil)
                let reply = try await sync.sync(flight.changes, pushID: flight.pushID, base: flight.base)
                #expect(reply.status == .ok)
                if let json = reply.json { answer(json) }
            }
            held = []
            cursor = 0
            socket = Self.connect(port: port, documentID: documentID, since: sync.baseRevision, token: sync.token)
        }
    }

    /// Clients pushing on their sockets and taking each other's changes from them, while change
    /// messages get lost and connections drop in the middle of a burst, end with what the server
    /// has, and no push is applied twice.
    @Test(arguments: [11, 12])
    func clientsLivingOnTheirSocketsConvergeThroughDropsAndReconnects(seed: UInt64) async throws {
        let fixture = try await SyncFixture()
        defer { fixture.directory.remove() }
        try await fixture.harness.run { client in
            var random = SeededRandom(seed: seed)
            let port = try #require(client.client.port)
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            var clients: [SocketClient] = []
            for index in 0..<4 {
                let token = try await fixture.token(id, user: "user\(index)")
                let sync = SyncClient(client, documentID: id, token: token, clientID: "s\(index)")
                clients.append(SocketClient(sync, port: port, documentID: id))
            }
            for simulated in clients { try await ListenRecordsTests.opened(simulated.socket) }
            var pushes = 0
            var reconnects = 0
            var dropped = 0
            for step in 0..<150 {
                let simulated = clients[Int(random.next() % UInt64(clients.count))]
                switch random.next() % 10 {
                case 0..<5:
                    let target = simulated.confirmed.keys.sorted().randomElement(using: &random)
                    let change =
                        if let target, random.next() % 4 == 0 { delete(target) } else {
                            put(target ?? "r\(step)", noteContent(text: "step \(step)"))
                        }
                    var changes = [change]
                    if random.next() % 2 == 0 { changes.append(put("n\(step)", noteContent(text: "new"))) }
                    try await simulated.push(changes)
                    pushes += 1
                case 5:
                    try await simulated.reconnect()
                    try await ListenRecordsTests.opened(simulated.socket)
                    reconnects += 1
                default:
                    try await simulated.process {
                        let drop = random.next() % 5 == 0
                        if drop { dropped += 1 }
                        return drop
                    }
                }
            }
            // One last change over HTTP reaches everyone on their sockets; whoever lost messages before
            // it sees a gap and pulls.
            let last = try await SyncClient(client, documentID: id, token: clients[0].sync.token, clientID: "last")
                .sync([put("last", noteContent(text: "last"))])
            let revision = try #require(last.json?["revision"]?.integerValue)
            for simulated in clients {
                #expect(simulated.inFlight == nil, "every push was answered")
                let caughtUp = try await eventually {
                    try await simulated.process()
                    return simulated.sync.baseRevision == revision
                }
                #expect(caughtUp, "client \(simulated.sync.clientID) reached revision \(revision)")
            }
            let (server, _) = try await Self.serverRecords(client, documentID: id, token: clients[0].sync.token)
            #expect(pushes > 50 && reconnects > 5 && dropped > 5, "the run exercised drops and reconnects")
            #expect(clients.map(\.applied).reduce(0, +) > 0, "changes came as change messages")
            #expect(clients.map(\.pulls).reduce(0, +) > 0, "gaps were filled by pulls")
            for simulated in clients {
                #expect(simulated.confirmed == server, "client \(simulated.sync.clientID) converged")
                await simulated.socket.close()
            }
            // At most one revision per push (a change to what another client deleted is refused): a
            // push sent again after a reconnect was not applied twice.
            #expect(revision <= Int64(pushes + 1))
        }
    }

    @Test func concurrentWritersOverSeparateConnectionsLoseNothing() async throws {
        let fixture = try await SyncFixture()
        try await fixture.onDocument { client, port, id, token in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<8 {
                    group.addTask {
                        for push in 1...10 {
                            let body: JSONValue = [
                                "clientId": .string("w\(writer)"), "pushId": .integer(Int64(push)), "baseRevision": 0,
                                "changes": [put("w\(writer)-\(push)", noteContent(text: "w\(writer)"))],
                            ]
                            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/i/d/\(id)/sync")!)
                            request.httpMethod = "POST"
                            request.httpBody = body.encoded()
                            request.setValue("Token token=\"\(token)\"", forHTTPHeaderField: "Authorization")
                            let (_, response) = try await URLSession.shared.data(for: request)
                            #expect((response as? HTTPURLResponse)?.statusCode == 200)
                        }
                    }
                }
                try await group.waitForAll()
            }
            let pull = try await SyncClient(client, documentID: id, token: token, clientID: "reader").sync()
            #expect(pull.records.count == 80)
            #expect(pull.json?["revision"]?.integerValue == 80)
            let revisions = Set(pull.records.values.compactMap { $0["revision"]?.integerValue })
            #expect(revisions == Set(1...80), "every push got its own revision")
        }
    }
}

/// A small deterministic random source (SplitMix64) so failures reproduce.
struct SeededRandom: RandomNumberGenerator {
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
