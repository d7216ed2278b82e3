import Foundation
import InstantJSON

/// From a writer's push to every listener having applied the change, as clients of the protocol do:
/// each listener keeps a base revision, applies a change message whose `since` is its base revision
/// on the spot, and pulls (`POST .../sync`, one request at a time) on any other newer revision.
/// With ``Mode/pokes`` the listeners do not ask for records, so every change costs each one a pull;
/// with ``Mode/socketPushes`` the writer sends its pushes on its own listening WebSocket.
enum EveryListenerApplies {
    /// How the listeners learn of changes.
    enum Mode: String, CaseIterable, Sendable {
        /// `changes=records`: the records on the WebSocket, pulls only when the server cannot send them.
        case records
        /// Plain `{"revision": M}` pokes, each followed by a pull.
        case pokes
        /// As ``records``, and the writer pushes on its listening WebSocket instead of over HTTP.
        case socketPushes = "records, pushes on the writer's WebSocket"
    }

    /// The answers the writer got on its WebSocket.
    actor Answers: ConditionWaiting {
        private var answered: [JSONValue: JSONValue] = [:]
        var waiter = Waiter<JSONValue>()

        func add(_ message: JSONValue) {
            guard let id = message["requestId"] else { return }
            answered[id] = message
            resumeWaiter()
        }

        /// The answer to request `id`, once it came.
        func answer(to id: JSONValue) async -> JSONValue {
            await wait(until: id)
            return answered.removeValue(forKey: id) ?? .null
        }

        func isMet(_ id: JSONValue) -> Bool { answered[id] != nil }
    }

    /// What the listeners have applied, and when.
    actor Recorder: ConditionWaiting {
        let listeners: Int
        private var connected = 0
        private var settled = 0
        private var failures = 0
        private var applied: [Int64: [Int: UInt64]] = [:]
        private(set) var pulls = 0
        var waiter = Waiter<Condition>()

        enum Condition {
            case connected(Int)
            /// Every listener has had a presence list with every listener in it.
            case settled
            case applied(Int64)
        }

        init(listeners: Int) { self.listeners = listeners }

        func markConnected() {
            connected += 1
            resumeWaiter()
        }

        func markSettled() {
            settled += 1
            resumeWaiter()
        }

        func markFailed() {
            failures += 1
            resumeWaiter()
        }

        func countPull() { pulls += 1 }

        /// Listener `index` has everything up to `revision` since `previous`.
        func applied(_ index: Int, from previous: Int64, to revision: Int64, at time: UInt64) {
            for candidate in (previous + 1)...max(previous + 1, revision) where applied[candidate]?[index] == nil {
                applied[candidate, default: [:]][index] = time
            }
            resumeWaiter()
        }

        func times(_ revision: Int64) -> [UInt64] { Array((applied[revision] ?? [:]).values) }
        var failureCount: Int { failures }

        func isMet(_ condition: Condition) -> Bool {
            switch condition {
            case .connected(let count): connected + failures >= count
            case .settled: settled + failures >= listeners
            case .applied(let revision): (applied[revision]?.count ?? 0) + failures >= listeners
            }
        }
    }

    /// One listener's base revision, and its pulls: one at a time, and another after it when a newer
    /// revision was announced meanwhile.
    actor ListenerState {
        let index: Int
        private var base: Int64 = 0
        private var isPulling = false
        private var pullAgain = false

        init(index: Int) { self.index = index }

        /// Takes a message: applies its records if they follow the base revision and no pull is
        /// under way, else pulls. Returns whether a pull should start now.
        func take(_ message: JSONValue, at time: UInt64, recorder: Recorder) async -> Bool {
            guard let revision = message["revision"]?.intValue.map(Int64.init), revision > base else { return false }
            if !isPulling, message["records"]?.arrayValue != nil, message["since"]?.intValue.map(Int64.init) == base {
                let previous = base
                base = revision
                await recorder.applied(index, from: previous, to: revision, at: time)
                return false
            }
            if isPulling {
                pullAgain = true
                return false
            }
            isPulling = true
            return true
        }

        /// The base revision a pull starts from.
        var baseRevision: Int64 { base }

        /// Takes a pull's answer; returns whether to pull again.
        func pulled(_ revision: Int64, at time: UInt64, recorder: Recorder) async -> Bool {
            if revision > base {
                let previous = base
                base = revision
                await recorder.applied(index, from: previous, to: revision, at: time)
            }
            if pullAgain {
                pullAgain = false
                return true
            }
            isPulling = false
            return false
        }
    }

    /// Runs `rounds` pushes, each after every listener applied the one before; returns each
    /// listener's latency for each change and the latency until the last listener had it, from the
    /// moment the writer sent the push, the writer's own round trip, in milliseconds, and the pulls
    /// the listeners made.
    static func measure(api: BenchAPI, mode: Mode, listeners count: Int, rounds: Int) async throws -> (
        each: Percentiles, last: Percentiles, push: Percentiles, pulls: Int
    ) {
        let document = try await api.newDocument()
        let writerToken = try await api.server.token(document: document, user: "writer")
        let recorder = Recorder(listeners: count)
        let base = api.server.baseURL.absoluteString.replacingOccurrences(of: "http://", with: "ws://")
        let query = mode == .pokes ? "" : "&changes=records"
        var sockets: [Listener] = []
        for index in 0..<count {
            // A token each: one token may hold only 16 listening connections.
            let token = try await api.server.token(document: document, user: "listener\(index)")
            let state = ListenerState(index: index)
            let hasConnected = Flag()
            let hasSettled = Flag()
            @Sendable func pull() async {
                var again = true
                while again {
                    let body: JSONValue = [
                        "clientId": .string("listener\(index)"), "baseRevision": .integer(await state.baseRevision),
                    ]
                    await recorder.countPull()
                    guard
                        let revision = try? await api.syncRevision(
                            document: document, token: token, body: body.serializedString())
                    else { return }
                    again = await state.pulled(revision, at: DispatchTime.now().uptimeNanoseconds, recorder: recorder)
                }
            }
            sockets.append(
                Listener(
                    url: "\(base)/i/d/\(document)/listen?since=0\(query)&jwt=\(token)",
                    onMessage: { message, time in
                        if await hasConnected.set() { await recorder.markConnected() }
                        if (message["presence"]?.arrayValue?.count ?? 0) >= count, await hasSettled.set() {
                            await recorder.markSettled()
                        }
                        // Pulls run beside the socket, which goes on reading meanwhile.
                        if await state.take(message, at: time, recorder: recorder) { Task { await pull() } }
                    },
                    onFailure: { _ in await recorder.markFailed() }
                ))
            // Open connections in steps of 100, so the server is not flooded with handshakes.
            if index % 100 == 99 { await recorder.wait(until: .connected(index + 1)) }
        }
        await recorder.wait(until: .connected(count))
        // The presence lists of the arrivals go out at most once a second: the rounds start once
        // they have, so that they measure changes, not presence.
        await recorder.wait(until: .settled)
        let answers = Answers()
        let writerSocket =
            mode == .socketPushes
            ? Listener(
                url: "\(base)/i/d/\(document)/listen?since=0&changes=records&jwt=\(writerToken)",
                onMessage: { message, _ in await answers.add(message) },
                onFailure: { _ in await recorder.markFailed() })
            : nil
        let pullsBefore = await recorder.pulls
        var each: [Double] = []
        var last: [Double] = []
        var push: [Double] = []
        for round in 1...rounds {
            let body = notePush(client: "writer", pushID: Int64(round), base: Int64(round - 1), ids: ["n\(round)"])
            let sent = DispatchTime.now().uptimeNanoseconds
            if let writerSocket {
                let id = JSONValue.integer(Int64(round))
                writerSocket.send(#"{"requestId":\#(round),"sync":\#(body)}"#)
                let answer = await answers.answer(to: id)
                guard answer["answer"]?["rejected"] == [] else {
                    throw BenchmarkError("The push on the WebSocket was not applied: \(answer.serializedString())")
                }
            } else {
                _ = try await api.syncRevision(document: document, token: writerToken, body: body)
            }
            push.append(Double(DispatchTime.now().uptimeNanoseconds - sent) / 1e6)
            await recorder.wait(until: .applied(Int64(round)))
            let times = await recorder.times(Int64(round)).map { $0 > sent ? Double($0 - sent) / 1e6 : 0 }
            each += times
            if let slowest = times.max() { last.append(slowest) }
        }
        let failures = await recorder.failureCount
        if failures > 0 { print("  (\(failures) of \(count) listeners failed to connect)") }
        let pulls = await recorder.pulls - pullsBefore
        for socket in sockets + [writerSocket].compactMap(\.self) { socket.stop() }
        for socket in sockets + [writerSocket].compactMap(\.self) { await socket.task.value }
        return (Percentiles(each), Percentiles(last), Percentiles(push), pulls)
    }

    /// Set once.
    actor Flag {
        private var isSet = false
        /// Sets the flag; whether it was not set before.
        func set() -> Bool {
            defer { isSet = true }
            return !isSet
        }
    }
}
