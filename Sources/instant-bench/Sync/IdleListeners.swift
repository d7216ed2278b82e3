import Foundation

/// The server's memory with many idle listening WebSockets.
enum IdleListeners {
    actor Count {
        var ready: Set<Int> = []
        var failed = 0
        func markReady(_ index: Int) { ready.insert(index) }
        func markFailed() { failed += 1 }
        var settled: Int { ready.count + failed }
    }

    /// Listeners per document: the server's limits per layer (1,000) and per token (16) are its
    /// defaults, so the listeners are spread as an app's users would be, each with a token.
    static let perDocument = 100

    static func measure(api: BenchAPI, count: Int) async throws -> (open: Int, before: Double, after: Double) {
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
                    onFailure: { _ in await counter.markFailed() }))
            if index % 200 == 199 {
                while await counter.settled < index + 1 { try await Task.sleep(for: .milliseconds(5)) }
            }
        }
        while await counter.settled < count { try await Task.sleep(for: .milliseconds(20)) }
        try await Task.sleep(for: .seconds(2))
        let after = Double(api.server.residentMemory() ?? 0)
        let open = await counter.ready.count
        for socket in sockets { socket.stop() }
        for socket in sockets { await socket.task.value }
        return (open, before, after)
    }
}
