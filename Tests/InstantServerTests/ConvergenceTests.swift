import Foundation
import Hummingbird
import InstantJSON
import InstantTesting
import Testing

@testable import InstantServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Convergence")
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

            let snapshot = try await client.request(
                .get, "/i/d/\(id)/snapshot", headers: [.authorization: "Token token=\"\(clients[0].sync.token)\""],
                apiToken: nil)
            var server: [String: JSONValue] = [:]
            for record in snapshot.json?["records"]?.arrayValue ?? [] {
                server[record["id"]?.stringValue ?? ""] = record["content"]
            }
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

    @Test func concurrentWritersOverSeparateConnectionsLoseNothing() async throws {
        let fixture = try await SyncFixture()
        defer { fixture.directory.remove() }
        try await fixture.harness.run { client in
            let port = try #require(client.client.port)
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let token = try await fixture.token(id)
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
