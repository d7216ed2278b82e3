import Foundation

/// The server's memory with many idle listening WebSockets.
enum IdleListeners {
    actor Count {
        var ready: Set<Int> = []
        var failed: Set<Int> = []
        func markReady(_ index: Int) { ready.insert(index) }
        /// A listener that failed after it opened stays counted as open, once.
        func markFailed(_ index: Int) { if !ready.contains(index) { failed.insert(index) } }
        var settled: Int { ready.count + failed.count }
    }

    /// Listeners per document: the server's limits per layer (1,000) and per token (16) are its
    /// defaults, so the listeners are spread as an app's users would be, each with a token.
    static let perDocument = 100

    /// How long the listeners may go without one of them opening or failing before the
    /// measure goes on without the rest, and reports them: one run waited for a last listener for
    /// over ten minutes, both processes idle.
    static let stall = Duration.seconds(30)

    static func measure(api: BenchAPI, count: Int) async throws -> (
        open: Int, unsettled: Int, before: Double, after: Double
    ) {
        var documents: [String] = []
        for _ in 0..<(count + perDocument - 1) / perDocument { documents.append(try await api.newDocument()) }
        var tokens: [String] = []
        for index in 0..<count {
            tokens.append(
                try await api.server.token(
                    document: documents[index / perDocument], user: "idle", tokenID: "idle-\(index)"))
        }
        let before = Double(api.server.residentMemory() ?? 0)
        let counter = Count()
        let base = api.server.baseURL.absoluteString.replacingOccurrences(of: "http://", with: "ws://")
        var sockets: [Listener] = []
        for index in 0..<count {
            sockets.append(
                Listener(
                    url: "\(base)/i/d/\(documents[index / perDocument])/listen?jwt=\(tokens[index])",
                    onMessage: { _, _ in await counter.markReady(index) },
                    onFailure: { _ in await counter.markFailed(index) }))
            if index % 200 == 199 { try await waitUntil(counter, hasSettled: index + 1) }
        }
        try await waitUntil(counter, hasSettled: count)
        try await Task.sleep(for: .seconds(2))
        let after = Double(api.server.residentMemory() ?? 0)
        let (ready, failed) = (await counter.ready, await counter.failed)
        for index in ready { sockets[index].stop() }
        for index in ready { await sockets[index].task.value }
        // The ones that neither opened nor failed end when their connection does, or with the
        // process.
        for (index, socket) in sockets.enumerated() where !ready.contains(index) && !failed.contains(index) {
            socket.task.cancel()
        }
        return (ready.count, count - ready.count - failed.count, before, after)
    }

    /// Waits until `target` listeners have opened or failed, or until none has for ``stall``.
    private static func waitUntil(_ counter: Count, hasSettled target: Int) async throws {
        var (settled, since) = (await counter.settled, ContinuousClock.now)
        while settled < target, ContinuousClock.now - since < stall {
            try await Task.sleep(for: .milliseconds(5))
            let now = await counter.settled
            if now != settled { (settled, since) = (now, .now) }
        }
    }
}
