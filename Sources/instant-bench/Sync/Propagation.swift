import Foundation
import InstantJSON

/// From "client A's push is acknowledged" to "a listener has the poke" (every listener) and to
/// "listening client B has pulled and applied the change".
enum Propagation {
    actor Recorder: ConditionWaiting {
        let listeners: Int
        private var ready: Set<Int> = []
        private var failures = 0
        private var pokes: [Int64: [Int: UInt64]] = [:]
        private var applied: [Int64: UInt64] = [:]
        /// What a waiter waits for.
        enum Condition: Sendable {
            case connected(Int)
            case allConnected
            case complete(Int64)
        }

        var waiter = Waiter<Condition>()

        init(listeners: Int) { self.listeners = listeners }

        func markReady(_ index: Int) {
            ready.insert(index)
            resumeWaiter()
        }

        func markFailed() {
            failures += 1
            resumeWaiter()
        }

        func poke(_ index: Int, revision: Int64, at time: UInt64) {
            if pokes[revision]?[index] == nil { pokes[revision, default: [:]][index] = time }
            resumeWaiter()
        }

        func applied(upTo revision: Int64, at time: UInt64) {
            for candidate in 1...max(1, revision) where applied[candidate] == nil { applied[candidate] = time }
            resumeWaiter()
        }

        var connected: Int { ready.count + failures }
        var isReady: Bool { connected >= listeners }
        func isComplete(_ revision: Int64) -> Bool {
            (pokes[revision]?.count ?? 0) + failures >= listeners && applied[revision] != nil
        }
        func pokeTimes(_ revision: Int64) -> [UInt64] { Array((pokes[revision] ?? [:]).values) }
        func appliedTime(_ revision: Int64) -> UInt64? { applied[revision] }
        var failureCount: Int { failures }

        func isMet(_ condition: Condition) -> Bool {
            switch condition {
            case .connected(let count): connected >= count
            case .allConnected: isReady
            case .complete(let revision): isComplete(revision)
            }
        }
    }

    /// Client A pushes through `api`; the listeners (B among them) listen and pull through
    /// `listenerAPI`: the same node by default, another node of the same database to measure
    /// propagation across nodes.
    static func measure(api: BenchAPI, listenersOn listenerAPI: BenchAPI? = nil, listeners count: Int, rounds: Int)
        async throws -> (poke: Percentiles, applied: Percentiles)
    {
        let listenerAPI = listenerAPI ?? api
        let document = try await api.newDocument()
        let writerToken = try await api.server.token(document: document, user: "a")
        let readerToken = try await api.server.token(document: document, user: "b")
        let recorder = Recorder(listeners: count)
        let base = listenerAPI.server.baseURL.absoluteString.replacingOccurrences(of: "http://", with: "ws://")
        var sockets: [Listener] = []
        for index in 0..<count {
            let isB = index == 0
            let pulled = PulledRevision()
            // A token of its own for each listener, as each would be another person's app (the server
            // limits the listening connections of one token).
            let token = isB ? readerToken : try await api.server.token(document: document, user: "listener-\(index)")
            sockets.append(
                Listener(
                    url: "\(base)/i/d/\(document)/listen?since=0&jwt=\(token)",
                    onMessage: { message, time in
                        guard let revision = message["revision"]?.intValue.map(Int64.init) else {
                            await recorder.markReady(index)
                            return
                        }
                        await recorder.poke(index, revision: revision, at: time)
                        guard isB else { return }
                        // B applies: one pull from its last revision, then the change is local. A failed
                        // pull is tried again (the measure waits for B to have the change).
                        for _ in 1...5 {
                            let body: JSONValue = ["clientId": "b", "baseRevision": .integer(await pulled.value)]
                            guard
                                let reply = try? await listenerAPI.sync(
                                    document: document, token: readerToken, body: body.serializedString()),
                                let revision = reply["revision"]?.intValue.map(Int64.init)
                            else { continue }
                            await pulled.set(revision)
                            await recorder.applied(upTo: revision, at: DispatchTime.now().uptimeNanoseconds)
                            return
                        }
                        print("  (listener B failed to pull 5 times after the poke of revision \(revision))")
                    },
                    onFailure: { _ in await recorder.markFailed() }
                ))
            // Open connections in steps of 100, so the server is not flooded with handshakes.
            if index % 100 == 99 {
                await recorder.wait(until: .connected(index + 1))
            }
        }
        await recorder.wait(until: .allConnected)
        var pokeSamples: [Double] = []
        var appliedSamples: [Double] = []
        for round in 1...rounds {
            let body = notePush(
                client: "a", pushID: Int64(round), base: Int64(round - 1), ids: ["n\(round)"])
            _ = try await api.sync(document: document, token: writerToken, body: body)
            let acknowledged = DispatchTime.now().uptimeNanoseconds
            await recorder.wait(until: .complete(Int64(round)))
            func milliseconds(_ time: UInt64) -> Double { time > acknowledged ? Double(time - acknowledged) / 1e6 : 0 }
            pokeSamples += await recorder.pokeTimes(Int64(round)).map(milliseconds)
            if let applied = await recorder.appliedTime(Int64(round)) { appliedSamples.append(milliseconds(applied)) }
        }
        let failures = await recorder.failureCount
        if failures > 0 { print("  (\(failures) of \(count) listeners failed to connect)") }
        for socket in sockets { socket.stop() }
        for socket in sockets { await socket.task.value }
        return (Percentiles(pokeSamples), Percentiles(appliedSamples))
    }
}

/// The revision listener B has applied.
actor PulledRevision {
    private(set) var value: Int64 = 0
    func set(_ revision: Int64) { value = max(value, revision) }
}
