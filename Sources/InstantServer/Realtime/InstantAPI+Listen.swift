import Foundation
import Hummingbird
import InstantJSON
import Logging
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
    func listenLongPoll(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let token = try context.clientToken(allowing: ["read-document"])
        let (documentID, layerName) = (token.documentID, token.layer)
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
        guard let names = ClientRoutePath(request.uri.path, route: "listen"),
            let documentID = try? Self.pathIdentifier(names.documentID, what: "document id"),
            let layerName = try? Self.pathLayerName(names.layer),
            let since = try? sinceParameter(request),
            let receivesRecords = try? receivesRecordsParameter(request),
            let token = try? await ClientTokenMiddleware.token(
                of: request.head, documentID: documentID, layer: layerName, verifier: verifier
            ).requiring(anyOf: ["read-document"])
        else { return nil }
        let layer = LayerEvents.Layer(documentID: documentID, name: layerName)
        guard (try? await storage.document(id: documentID)) != nil,
            await events.admissionProblem(on: layer, token: token) == nil
        else { return nil }
        return ListeningSession(token: token, layer: layer, since: since, receivesRecords: receivesRecords)
    }

    /// The answer to a message a client sent on its listening WebSocket: a sync request's answer (and
    /// the revision it brings the client to), or the error, as `POST …/sync` would answer it.
    func answerOnSocket(
        _ message: ByteBuffer?, token: ClientToken, listener: UUID, logger: Logger
    ) async -> (
        text: SyncAnswerBody, revision: Int64?
    ) {
        guard let text = message else {
            let error = APIError.badRequest(#"Send sync requests as text messages {"requestId", "sync"}."#)
            return (SyncAnswerBody(SocketSyncRequest.failure(error, to: .null)), nil)
        }
        let request: SocketSyncRequest
        let maxChanges = configuration.clientLimits.maxChangesPerPush
        do {
            request = try await LargeWork.run(bytes: text.readableBytes) {
                try SocketSyncRequest(text, maxChanges: maxChanges)
            }
        } catch let failure as SocketSyncRequest.Failure {
            return (SyncAnswerBody(SocketSyncRequest.failure(failure.error, to: failure.requestID)), nil)
        } catch {
            return (SyncAnswerBody(SocketSyncRequest.failure(APIError(answering: error), to: .null)), nil)
        }
        // The socket closes on expiry and revocation; a request that arrives first is refused as
        // an HTTP request with the token would be.
        if token.timeLeft(atMost: .seconds(1)) <= .zero {
            let error = APIError.unauthorized("The token expired; reconnect with a new token.")
            return (SyncAnswerBody(SocketSyncRequest.failure(error, to: request.requestID)), nil)
        }
        if events.isRevoked(listener) {
            let error = APIError.unauthorized("The token was revoked; get a new token.")
            return (SyncAnswerBody(SocketSyncRequest.failure(error, to: request.requestID)), nil)
        }
        do {
            let answer = try await sync(
                request.sync, size: text.readableBytes, token: token, enclosedIn: request.answerEnvelope, logger: logger
            )
            return (answer.body, answer.revision)
        } catch {
            let apiError = APIError(answering: error)
            if apiError.status.code >= 500 {
                logger.error("A sync request on a listening WebSocket failed", metadata: ["error": "\(error)"])
            }
            return (SyncAnswerBody(SocketSyncRequest.failure(apiError, to: request.requestID)), nil)
        }
    }
}
