import Foundation
import Hummingbird
import InstantJSON
import InstantTesting
import Testing

@testable import InstantServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The listening WebSocket with `changes=records`: the records of each commit, for listeners at the
/// revision before it, within their collaboration permissions and the size limit.
@Suite("Listening for changes: records on the WebSocket", .timeLimit(.minutes(10)))
struct ListenRecordsTests {
    /// A listening WebSocket on the document's default layer.
    static func socket(_ port: Int, _ id: String, since: Int64 = 0, records: Bool = true, token: String)
        -> ListeningSocket
    {
        ListeningSocket(
            port: port, path: "/i/d/\(id)/listen?since=\(since)\(records ? "&changes=records" : "")&jwt=\(token)")
    }

    /// Waits until the socket is registered (its first presence message).
    static func opened(_ socket: ListeningSocket) async throws {
        #expect(try await socket.message { $0["presence"] != nil } != nil)
    }

    /// The messages that carry records, in arrival order.
    static func recordMessages(_ socket: ListeningSocket) async -> [JSONValue] {
        await socket.messages().filter { $0["records"] != nil }
    }

    @Test func aListenerAtTheBaseOfACommitGetsItsRecordsAsASyncAnswerHasThem() async throws {
        let fixture = try await SyncFixture()
        try await fixture.onDocument { client, port, id, token in
            let listening = Self.socket(port, id, token: token)
            let plain = Self.socket(port, id, records: false, token: token)
            try await Self.opened(listening)
            try await Self.opened(plain)

            let alice = SyncClient(client, documentID: id, token: token, clientID: "a")
            try await alice.sync([put("n1", noteContent(text: "first")), put("n2", noteContent(text: "second"))])
            let pulled = try await SyncClient(client, documentID: id, token: token, clientID: "b").sync()

            let message = try #require(try await listening.message { $0["records"] != nil })
            #expect(message["revision"]?.integerValue == 1)
            #expect(message["since"]?.integerValue == 0)
            #expect(message["records"] == pulled.json?["records"], "the records exactly as a sync answer has them")

            let poke = try #require(try await plain.message { $0["revision"] != nil })
            #expect(poke == ["revision": 1], "a listener that did not ask for records gets the revision only")
            #expect(await Self.recordMessages(plain).isEmpty)
            await listening.close()
            await plain.close()

            let refused = try await rawUpgrade(port: port, path: "/i/d/\(id)/listen?changes=diffs&jwt=\(token)")
            #expect(refused?.status == 400)
            #expect(refused?.reason?.contains("changes=records") == true)
        }
    }

    @Test func recordsTheListenerMayNotViewArriveAsTombstones() async throws {
        let fixture = try await SyncFixture()
        try await fixture.onDocument { client, port, id, token in
            let reviewer = try await fixture.token(
                id, user: "bob", collaboration: ["annotations:view:group=team", "annotations:edit:group=team"])
            let restricted = Self.socket(port, id, token: reviewer)
            let everything = Self.socket(port, id, token: token)
            try await Self.opened(restricted)
            try await Self.opened(everything)

            let alice = SyncClient(client, documentID: id, token: token, clientID: "a")
            try await alice.sync([put("seen", noteContent(), group: "team"), put("hidden", noteContent())])
            let pulled = try await SyncClient(client, documentID: id, token: reviewer, clientID: "b").sync()

            let message = try #require(try await restricted.message { $0["records"] != nil })
            #expect(message["records"] == pulled.json?["records"], "the same tombstones as the reviewer's sync")
            let records = try #require(message["records"]?.arrayValue)
            let byID = Dictionary(
                uniqueKeysWithValues: records.compactMap { r in r["id"]?.stringValue.map { ($0, r) } })
            #expect(byID["seen"]?["content"]?["text"] != nil)
            #expect(byID["hidden"]?["deleted"] == true)
            #expect(byID["hidden"]?["content"] == .null)

            let full = try #require(try await everything.message { $0["records"] != nil })
            #expect(full["records"]?.arrayValue?.allSatisfy { $0["deleted"] == nil } == true)
            await restricted.close()
            await everything.close()
        }
    }

    @Test func aListenerAtAnotherRevisionGetsTheRevisionAndThenRecords() async throws {
        let fixture = try await SyncFixture()
        try await fixture.onDocument { client, port, id, token in
            let alice = SyncClient(client, documentID: id, token: token, clientID: "a")
            try await alice.sync([put("n1", noteContent())])
            try await alice.sync([put("n2", noteContent())])

            // Revision 2 exists, and the server has no records of the commits after 0 to send.
            let behind = Self.socket(port, id, since: 0, token: token)
            let poke = try #require(try await behind.message { $0["revision"] != nil })
            #expect(poke == ["revision": 2])

            try await alice.sync([put("n3", noteContent())])
            let message = try #require(try await behind.message { $0["records"] != nil })
            #expect(message["since"]?.integerValue == 2, "told revision 2, it is there now")
            #expect(message["revision"]?.integerValue == 3)
            #expect(message["records"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["n3"])
            await behind.close()
        }
    }

    @Test func aCommitOverTheSizeLimitIsAnnouncedByItsRevision() async throws {
        var limited = try await SyncFixture()
        limited.harness.clientLimits.listening.maximumChangeMessageSize = 2_048
        try await limited.onDocument { client, port, id, token in
            let listening = Self.socket(port, id, token: token)
            try await Self.opened(listening)

            let alice = SyncClient(client, documentID: id, token: token, clientID: "a")
            try await alice.sync([put("large", noteContent(text: String(repeating: "x", count: 3_000)))])
            let poke = try #require(try await listening.message { $0["revision"] != nil })
            #expect(poke == ["revision": 1])

            try await alice.sync([put("small", noteContent())])
            let message = try #require(try await listening.message { $0["records"] != nil })
            #expect(message["since"]?.integerValue == 1)
            #expect(message["records"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["small"])
            await listening.close()
        }
    }

    @Test func theCommitsOfOneGroupTransactionGetOneMessageEachInOrder() async throws {
        let fixture = try await SyncFixture()
        try await fixture.onDocument { client, port, id, token in
            let listening = Self.socket(port, id, token: token)
            try await Self.opened(listening)

            // Pushes that arrive while a transaction runs are committed together in the next one:
            // sent at once, each on a connection of its own.
            try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<12 {
                    group.addTask {
                        let push: JSONValue = [
                            "clientId": .string("c\(index)"), "pushId": 1, "baseRevision": 0,
                            "changes": [put("n\(index)", noteContent())],
                        ]
                        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/i/d/\(id)/sync")!)
                        request.httpMethod = "POST"
                        request.setValue("Token token=\"\(token)\"", forHTTPHeaderField: "Authorization")
                        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                        request.httpBody = push.serialized()
                        let (_, response) = try await URLSession.shared.data(for: request)
                        return (response as? HTTPURLResponse)?.statusCode ?? 0
                    }
                }
                for try await status in group { #expect(status == 200) }
            }
            #expect(try await listening.message { $0["revision"]?.integerValue == 12 } != nil)
            let messages = await Self.recordMessages(listening)
            #expect(messages.map { $0["since"]?.integerValue } == Array(0..<12))
            #expect(messages.map { $0["revision"]?.integerValue } == Array(1...12))
            #expect(messages.allSatisfy { $0["records"]?.arrayValue?.count == 1 })
            await listening.close()
        }
    }
}
