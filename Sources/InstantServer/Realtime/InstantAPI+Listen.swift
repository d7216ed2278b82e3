import Foundation
import Hummingbird
import HummingbirdWebSocket
import InstantJSON
import Logging
import NIOWebSocket
import ServiceLifecycle

extension InstantAPI {
    /// Why a listener stops waiting.
    private enum ListenOutcome: Sendable {
        case revision(Int64)
        case revoked
        case expired
        case timedOut
    }

    /// The `since` query parameter of a listen request (default 0).
    private func sinceParameter(_ request: Request) throws(APIError) -> Int64 {
        guard let text = request.uri.queryParameters["since"] else { return 0 }
        guard let value = Int64(text), value >= 0 else {
            throw .badRequest("since: expected the last revision the client has, an integer ≥ 0.")
        }
        return value
    }

    /// Whether a listen request asked for the records of each commit (`changes=records`) rather
    /// than only its revision (no `changes`).
    private func receivesRecordsParameter(_ request: Request) throws(APIError) -> Bool {
        switch request.uri.queryParameters["changes"] {
        case nil: return false
        case "records": return true
        case let other?:
            throw .badRequest(
                "changes: '\(other)' is not a kind of change message; use changes=records for the records of "
                    + "each commit on the WebSocket, or leave it out for revisions only.")
        }
    }

    /// `GET /i/d/{documentID}[/l/{layer}]/listen?since=N` without a WebSocket upgrade: a long-poll
    /// that answers `{"revision": M}` as soon as the layer's revision exceeds `since`, or with the
    /// current revision after ``InstantServerConfiguration/longPollTimeout``.
    func listenLongPoll(_ request: Request, _ context: InstantRequestContext, verifier: ClientTokenVerifier?)
        async throws -> Response
    {
        let (token, documentID, layerName) = try await authorizeClient(
            request, context, verifier: verifier, anyOf: ["read-document"])
        let since = try sinceParameter(request)
        // A long-poll answers with the revision either way; a bad value is refused all the same.
        _ = try receivesRecordsParameter(request)
        _ = try await requireDocument(documentID)
        let layer = LayerEvents.Layer(documentID: documentID, name: layerName)
        let (listener, wakeUps): (UUID, AsyncStream<Void>)
        do {
            (listener, wakeUps) = try await events.listen(on: layer, token: token, isVisible: false)
        } catch {
            throw APIError(.tooManyRequests, error.reason)
        }
        let outcome: ListenOutcome
        do {
            let current = try await storage.layerCreatingIfNeeded(documentID: documentID, name: layerName).revision
            if current > since {
                outcome = .revision(current)
            } else {
                outcome = await waitForChange(
                    on: layer, listener: listener, wakeUps: wakeUps, since: since, token: token,
                    timeout: configuration.longPollTimeout)
            }
        } catch {
            await events.stopListening(listener)
            throw error
        }
        await events.stopListening(listener)
        switch outcome {
        case .revision(let revision):
            return Self.respond(["revision": .integer(revision)])
        case .timedOut:
            let revision = try await storage.layer(documentID: documentID, name: layerName)?.revision ?? since
            return Self.respond(["revision": .integer(revision)])
        case .revoked:
            throw APIError(.forbidden, "The token was revoked while listening; get a new token from your backend.")
        case .expired:
            throw APIError(.forbidden, "The token expired while listening; get a new token from your backend.")
        }
    }

    /// Waits until the layer passes `since`, the token is revoked or expires, or `timeout` elapses.
    private func waitForChange(
        on layer: LayerEvents.Layer,
        listener: UUID,
        wakeUps: AsyncStream<Void>,
        since: Int64,
        token: ClientToken,
        timeout: Duration
    ) async -> ListenOutcome {
        let events = self.events
        let untilExpiry = token.timeLeft(atMost: timeout)
        let expiresFirst = untilExpiry < timeout
        let wait = expiresFirst ? untilExpiry : timeout
        return await withTaskGroup(of: ListenOutcome?.self) { group in
            group.addTask {
                for await _ in wakeUps {
                    let state = await events.state(of: layer, listener: listener)
                    if state.isRevoked { return .revoked }
                    if let revision = state.revision, revision > since { return .revision(revision) }
                }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: wait)
                return expiresFirst ? .expired : .timedOut
            }
            group.addTask {
                // A server shutting down answers at once (with the current revision), so that it
                // need not wait out the long-polls and the client polls again, on another node.
                do { try await gracefulShutdown() } catch { return nil }
                return .timedOut
            }
            var outcome = ListenOutcome.timedOut
            for await result in group {
                if let result {
                    outcome = result
                    break
                }
            }
            group.cancelAll()
            return outcome
        }
    }

    /// The listening WebSocket an upgrade request of `.../listen` may open: only with a valid token
    /// within the listening limits, else `nil`, and the request goes on to the long-poll route of
    /// the same path, which answers with the status and the reason.
    func admitListener(_ request: Request, verifier: ClientTokenVerifier?) async -> ListeningSession? {
        let parts = request.uri.path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let names: (document: String, layer: String)? =
            switch parts.count {
            case 5 where parts[0...2] == ["", "i", "d"] && parts[4] == "listen": (parts[3], "")
            case 7 where parts[0...2] == ["", "i", "d"] && parts[4] == "l" && parts[6] == "listen":
                (parts[3], parts[5])
            default: nil
            }
        guard let names, let documentID = try? Self.pathIdentifier(names.document, what: "document id"),
            let layerName = names.layer.isEmpty ? "" : try? Self.pathIdentifier(names.layer, what: "layer name"),
            layerName.isEmpty || (try? Identifiers.validateLayerName(layerName)) != nil,
            let since = try? sinceParameter(request),
            let receivesRecords = try? receivesRecordsParameter(request),
            let token = try? await authorizeClient(
                request, documentID: documentID, layer: layerName, verifier: verifier, anyOf: ["read-document"])
        else { return nil }
        let layer = LayerEvents.Layer(documentID: documentID, name: layerName)
        guard (try? await storage.document(id: documentID)) != nil,
            await events.admissionProblem(on: layer, token: token) == nil
        else { return nil }
        return ListeningSession(token: token, layer: layer, since: since, receivesRecords: receivesRecords)
    }

    /// A listening WebSocket: `{"revision": M}` whenever the layer passes what the client has seen
    /// (coalesced) or, for a session that receives records, `{"revision": M, "since": L, "records":
    /// [...]}` for each commit this node has the change message of, from the client's revision on
    /// (``ChangeMessage``); `{"presence": [{"userId", "connections"}]}` whenever the set of listening users
    /// changes (at most once per ``ListeningLimits/presenceInterval``); the answer to each sync
    /// request the client sends on it (``SocketSyncRequest``), in order; closed with a reason when
    /// the token expires or is revoked. (When the server shuts down, the WebSocket layer closes it.)
    func listenWebSocket(
        _ session: ListeningSession, inbound: WebSocketInboundStream, outbound writer: WebSocketOutboundWriter,
        logger: Logger
    ) async throws {
        let (token, layer, receivesRecords) = (session.token, session.layer, session.receivesRecords)
        let events = self.events
        let storage = self.storage
        let (listener, wakeUps): (UUID, AsyncStream<Void>)
        do {
            (listener, wakeUps) = try await events.listen(
                on: layer, token: token, isVisible: true, recordsAfter: receivesRecords ? session.since : nil)
        } catch {
            // Another connection took the last place between the upgrade and now.
            try? await writer.close(.policyViolation, reason: error.reason)
            return
        }
        let outbound = ListeningOutbound(writer, since: session.since)
        let closing = await withTaskGroup(of: (WebSocketErrorCode, String)?.self) { group in
            // Sync requests, answered one after the other; reading also notices the client's close
            // and answers pings. A message over the sync body limit closes the WebSocket (1009).
            group.addTask {
                do {
                    for try await message in inbound.messages(
                        maxSize: self.configuration.clientLimits.maxSocketMessageSize)
                    {
                        let answer = await self.answerOnSocket(
                            message, token: token, listener: listener, logger: logger)
                        try await outbound.send { told in
                            if let revision = answer.revision, revision > told { told = revision }
                            return [answer.text]
                        }
                    }
                } catch {}
                return nil
            }
            group.addTask {
                // Checked at least daily, so that no `exp`, however far, overflows a sleep.
                var left = token.timeLeft(atMost: .seconds(86_400))
                while left > .zero {
                    try? await Task.sleep(for: left)
                    if Task.isCancelled { return nil }
                    left = token.timeLeft(atMost: .seconds(86_400))
                }
                return (.policyViolation, "The token expired; reconnect with a new token.")
            }
            group.addTask {
                var sentPresenceVersion: Int? = nil
                func catchUp(_ state: LayerEvents.State, stored: Int64?) async throws {
                    try await outbound.send { told in
                        var messages: [ByteBuffer] = []
                        // An answer may have told the client some of these commits already.
                        for message in state.changes where message.revision > told {
                            guard message.since == told, let text = message.text(for: token) else { break }
                            messages.append(text)
                            told = message.revision
                        }
                        let revision = max(state.revision ?? -1, stored ?? -1)
                        if revision > told {
                            told = revision
                            messages.append(
                                ByteBuffer(bytes: JSONValue.object(["revision": .integer(revision)]).serialized()))
                        }
                        if state.presenceVersion != sentPresenceVersion {
                            sentPresenceVersion = state.presenceVersion
                            messages.append(state.presenceMessage)
                        }
                        return messages
                    }
                }
                func state() async -> LayerEvents.State {
                    await events.state(
                        of: layer, listener: listener, changesAfter: receivesRecords ? outbound.told : nil)
                }
                do {
                    let stored = try await storage.layerCreatingIfNeeded(documentID: layer.documentID, name: layer.name)
                    try await catchUp(await state(), stored: stored.revision)
                    for await _ in wakeUps {
                        let state = await state()
                        if state.isRevoked { return (.policyViolation, "The token was revoked; get a new token.") }
                        try await catchUp(state, stored: nil)
                    }
                } catch {}
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        await events.stopListening(listener)
        if let (code, reason) = closing {
            try? await writer.close(code, reason: reason)
        }
    }

    /// The answer to a message a client sent on its listening WebSocket: a sync request's answer (and
    /// the revision it brings the client to), or the error, as `POST …/sync` would answer it.
    private func answerOnSocket(
        _ message: WebSocketMessage, token: ClientToken, listener: UUID, logger: Logger
    ) async -> (
        text: ByteBuffer, revision: Int64?
    ) {
        guard case .text(let text) = message else {
            let error = APIError.badRequest(#"Send sync requests as text messages {"requestId", "sync"}."#)
            return (SocketSyncRequest.failure(error, to: .null), nil)
        }
        let request: SocketSyncRequest
        do {
            request = try SocketSyncRequest(
                ByteBuffer(string: text), maxChanges: configuration.clientLimits.maxChangesPerPush)
        } catch {
            return (SocketSyncRequest.failure(error.error, to: error.requestID), nil)
        }
        // The socket closes on expiry and revocation; a request that arrives first is refused as
        // an HTTP request with the token would be.
        if token.timeLeft(atMost: .seconds(1)) <= .zero {
            let error = APIError.unauthorized("The token expired; reconnect with a new token.")
            return (SocketSyncRequest.failure(error, to: request.requestID), nil)
        }
        if await events.isRevoked(listener) {
            let error = APIError.unauthorized("The token was revoked; get a new token.")
            return (SocketSyncRequest.failure(error, to: request.requestID), nil)
        }
        do {
            let answer = try await sync(request.sync, token: token, logger: logger)
            return (SocketSyncRequest.answer(answer, to: request.requestID), answer.revision)
        } catch {
            let apiError = APIError(answering: error)
            if apiError.status.code >= 500 {
                logger.error("A sync request on a listening WebSocket failed", metadata: ["error": "\(error)"])
            }
            return (SocketSyncRequest.failure(apiError, to: request.requestID), nil)
        }
    }
}
