import Foundation
import HTTPTypes
import InstantJSON
import InstantTesting
import Testing

@testable import InstantServer

/// `/metrics` has the server's own measures beside the HTTP requests: the listeners, the messages
/// of listening WebSockets, the group transactions and what they commit.
@Suite("Metrics of the server's work", .timeLimit(.minutes(10)))
struct ServerMetricsTests {
    /// The samples of the Prometheus text a server serves on `/metrics`.
    struct Samples {
        let text: String

        /// The value of the sample `series` (its name and labels, as the server writes them), or
        /// `nil` when the text has none.
        subscript(_ series: String) -> Double? {
            for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
                return Double(line.dropFirst(series.count + 1))
            }
            return nil
        }

        /// The sum of the samples of `name` over its labels (0 when it has none).
        func total(_ name: String) -> Double {
            text.split(separator: "\n").filter { $0.hasPrefix(name + "{") }.compactMap {
                $0.split(separator: " ").last.flatMap { Double($0) }
            }.reduce(0, +)
        }

        static func of(_ client: ServerHarness.Client) async throws -> Samples {
            let response = try await client.request(.get, "/metrics", apiToken: nil)
            #expect(response.status == .ok)
            return Samples(text: String(decoding: response.body, as: UTF8.self))
        }
    }

    @Test func listenersMessagesGroupsAndRevocationsAreCounted() async throws {
        let fixture = try await SyncFixture()
        try await fixture.onDocument { client, port, id, token in
            let empty = try await Samples.of(client)
            #expect(
                empty[#"instant_listeners_open{transport="websocket"}"#] == 0, "every measure is there from the start")
            #expect(empty[#"instant_group_commits_total{path="locked"}"#] == 0)

            let listening = ListenRecordsTests.socket(port, id, token: token)
            let plain = ListenRecordsTests.socket(port, id, records: false, token: token)
            try await ListenRecordsTests.opened(listening)
            try await ListenRecordsTests.opened(plain)
            let before = try await Samples.of(client)
            #expect(before[#"instant_listeners_open{transport="websocket"}"#] == 2)
            #expect(before[#"instant_listeners_open{transport="long_poll"}"#] == 0)
            #expect((before[#"instant_listener_messages_total{kind="presence"}"#] ?? 0) >= 2)

            let alice = SyncClient(client, documentID: id, token: token, clientID: "a")
            try await alice.sync([put("n1", noteContent(text: "first")), put("n2", noteContent(text: "second"))])
            #expect(try await listening.message { $0["records"] != nil } != nil)
            #expect(try await plain.message { $0["revision"] != nil } != nil)
            let after = try await Samples.of(client)
            func change(_ series: String) -> Double { (after[series] ?? 0) - (before[series] ?? 0) }
            #expect(change(#"instant_listener_messages_total{kind="records"}"#) == 1, "to the socket that asked")
            #expect(change(#"instant_listener_messages_total{kind="revision"}"#) == 1, "to the other")
            #expect(change("instant_layer_commits_total") == 1)
            #expect(change("instant_records_committed_total") == 2)
            #expect(after.total("instant_group_commits_total") - before.total("instant_group_commits_total") == 1)
            #expect(change("instant_group_commit_size_commits_count") == 1)
            #expect(change("instant_group_commit_size_commits_sum") == 1)
            #expect(change("instant_group_commit_duration_seconds_count") == 1)

            let reply = try await SocketSyncTests.request(
                listening, id: "m",
                SocketSyncTests.syncBody(client: "s", base: 1, pushID: 1, [put("n4", noteContent())]))
            #expect(reply["answer"]?["revision"]?.integerValue == 2)
            let answered = try await Samples.of(client)
            #expect(answered["instant_socket_sync_request_duration_seconds_count"] == 1)
            #expect(
                answered.total("instant_group_commits_total") - after.total("instant_group_commits_total") == 1,
                "a push on the socket commits through the same groups")

            await listening.close()
            await plain.close()
            #expect(
                try await eventually {
                    try await Samples.of(client)[#"instant_listeners_open{transport="websocket"}"#] == 0
                }, "a closed listener is no longer counted")

            let waiting = Task { try await longPoll(port: port, path: "/i/d/\(id)/listen?since=2", token: token) }
            #expect(
                try await eventually {
                    try await Samples.of(client)[#"instant_listeners_open{transport="long_poll"}"#] == 1
                }, "a long poll is counted while it waits")
            try await alice.sync([put("n3", noteContent())])
            #expect(try await waiting.value.status == 200)
            #expect(
                try await eventually {
                    try await Samples.of(client)[#"instant_listeners_open{transport="long_poll"}"#] == 0
                })

            #expect(try await client.json(.post, "/api/revoke", ["jtis": ["one", "two"]]).status == .ok)
            #expect(try await Samples.of(client)["instant_tokens_revoked_total"] == 2)
        }
    }

    @Test func requestsAreCountedByMethodRouteAndStatusWithBoundedLabels() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServerHarness(directory: directory.url).run { client in
            for _ in 0..<3 { #expect(try await client.request(.get, "/healthcheck", apiToken: nil).status == .ok) }
            for method in ["PROPFIND", "PURGE"] {
                let reply = try await client.request(HTTPRequest.Method(method)!, "/healthcheck", apiToken: nil)
                #expect(reply.status == .methodNotAllowed)
            }
            #expect(try await client.request(.get, "/no/such/path", apiToken: nil).status == .notFound)
            let samples = try await Samples.of(client)
            #expect(samples[#"instant_http_requests_total{method="GET",route="/healthcheck",status="200"}"#] == 3)
            #expect(
                samples[#"instant_http_requests_total{method="OTHER",route="NotFound",status="405"}"#] == 2,
                "methods a client invents share one label")
            #expect(!samples.text.contains("PROPFIND") && !samples.text.contains("PURGE"))
            #expect(samples[#"instant_http_requests_total{method="GET",route="NotFound",status="404"}"#] == 1)
            #expect(
                samples[#"instant_http_request_duration_seconds_count{method="GET",route="/healthcheck"}"#] == 3)
        }
    }
}
