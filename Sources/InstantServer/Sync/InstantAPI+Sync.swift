import Foundation
import Hummingbird
import InstantJSON
import Logging

extension InstantAPI {
    /// `POST /i/d/{documentID}[/l/{layer}]/sync`: applies a client's push exactly once and answers
    /// with everything the user may see that changed after the client's base revision.
    /// See docs/PROTOCOL.md.
    ///
    /// The connections answer the requests of this route themselves, ahead of the router
    /// (``SyncRouteHandler``); this handler answers the requests they leave to the router (those
    /// with an `Expect` header, and any path the router matches that they do not take as the
    /// route's).
    func sync(_ request: Request, _ context: InstantRequestContext) async throws -> Response {
        let token = try context.clientToken(allowing: ["read-document"])
        let data = try await body(request, limit: syncBodyLimit)
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: try await syncAnswer(toBody: data, token: token, logger: context.logger).joined()))
    }

    /// The body limit of sync requests.
    var syncBodyLimit: BodyLimit {
        BodyLimit(bytes: configuration.clientLimits.maxSyncBodySize, option: "--max-sync-body-size")
    }

    /// The answer to the body of a sync request from the token's client, encoded.
    private func syncAnswer(toBody data: Data, token: ClientToken, logger: Logger) async throws -> SyncAnswerBody {
        let maxChanges = configuration.clientLimits.maxChangesPerPush
        let syncRequest = try await LargeWork.run(bytes: data.count) {
            try SyncRequest(Self.json(fromBody: data), maxChanges: maxChanges)
        }
        return try await sync(syncRequest, size: data.count, token: token, logger: logger).body
    }

    /// Checks the path and the client token of a sync request that a connection answers ahead of
    /// the router (``SyncRouteHandler``), as the client routes' middleware checks them, before its
    /// body is read.
    func authorizeSync(_ request: SyncHTTPRequest, verifier: ClientTokenVerifier?, logger: Logger) async -> Result<
        ClientToken, APIError
    > {
        await Self.answering(logger) {
            let (documentID, layer) = try Self.names(of: request.route)
            return try await ClientTokenMiddleware.token(
                of: request.head, documentID: documentID, layer: layer, verifier: verifier
            ).requiring(anyOf: ["read-document"])
        }
    }

    /// What ``authorizeSync(_:verifier:logger:)`` would decide, when it can be decided without a
    /// wait (a path refused, no token, or a token this node verified before:
    /// ``ClientTokenMiddleware/knownToken(of:documentID:layer:verifier:)``); `nil` otherwise. Most
    /// pushes come with a token their client sent before, and are then checked on the event loop
    /// with no task to wait for. The server's own failures (no key configured) are left to
    /// ``authorizeSync(_:verifier:logger:)``, which logs them.
    func authorizeSyncAtOnce(_ request: SyncHTTPRequest, verifier: ClientTokenVerifier?) -> Result<
        ClientToken, APIError
    >? {
        do throws(APIError) {
            let (documentID, layer) = try Self.names(of: request.route)
            guard
                let token = try ClientTokenMiddleware.knownToken(
                    of: request.head, documentID: documentID, layer: layer, verifier: verifier)
            else { return nil }
            return .success(try token.requiring(anyOf: ["read-document"]))
        } catch {
            return error.status.code >= 500 ? nil : .failure(error)
        }
    }

    /// The document id and layer name of a client route's path, checked.
    private static func names(of route: ClientRoutePath) throws(APIError) -> (documentID: String, layer: String) {
        (try pathIdentifier(route.documentID, what: "document id"), try pathLayerName(route.layer))
    }

    /// Applies a sync request that a connection answers ahead of the router, its token checked
    /// (``authorizeSync(_:verifier:logger:)``): the route's own work; the answer's body, or the error
    /// to answer.
    func applySync(_ request: SyncHTTPRequest, logger: Logger) async -> Result<SyncAnswerBody, APIError> {
        await Self.answering(logger) {
            guard let token = request.token else {
                throw APIError(.internalServerError, "A sync request was applied before its token was checked.")
            }
            return try await syncAnswer(toBody: Data(request.body.readableBytesView), token: token, logger: logger)
        }
    }

    /// The value of `body`, or the error it threw as answered to a client (logged when it is the
    /// server's failure), as ``ErrorMiddleware`` answers the router's.
    private static func answering<Value>(_ logger: Logger, _ body: () async throws -> Value) async -> Result<
        Value, APIError
    > {
        do {
            return .success(try await body())
        } catch {
            let answered = APIError(answering: error)
            if answered.status.code >= 500 {
                logger.error("Request failed", metadata: ["error": "\(error)"])
            }
            return .failure(answered)
        }
    }

    /// A sync answer as it goes out, in the JSON of docs/PROTOCOL.md.
    struct EncodedSyncAnswer: Sendable {
        /// The layer's revision the answer brings the client to.
        var revision: Int64
        /// `{"revision", "reset", "pushId", "rejected", "records"}`, in its envelope if it has one.
        var body: SyncAnswerBody
    }

    /// The text around an answer that goes out inside a message (a WebSocket's answer to a sync
    /// request): the answer is written between the two.
    struct AnswerEnvelope: Sendable {
        var opening: ByteBuffer
        var closing: StaticString
    }

    /// Applies a client's push exactly once and encodes the answer: the one write path of a sync,
    /// whether the request came over HTTP or on a listening WebSocket. The token's document and layer
    /// are the ones synced. The changes of a request of `size` bytes of JSON, and the records of the
    /// answer, are checked and written away from the event loop when they are large
    /// (``LargeWork``). The answer is written inside `envelope` when there is one.
    func sync(
        _ syncRequest: SyncRequest, size: Int, token: ClientToken, enclosedIn envelope: AnswerEnvelope? = nil,
        logger: Logger
    ) async throws -> EncodedSyncAnswer {
        let (documentID, layer, limits) = (token.documentID, token.layer, configuration.clientLimits)
        let referencedAttachments = syncRequest.changes.compactMap { change -> String? in
            guard case .put(let content, _) = change.operation else { return nil }
            return content["imageAttachmentId"]?.stringValue
        }
        let attachments = try await storage.attachmentKeys(documentID: documentID, among: referencedAttachments)
        let planner = try await LargeWork.run(bytes: size) {
            SyncPlanner(
                token: token,
                request: syncRequest,
                availableAttachments: attachments,
                maxRecordSize: limits.maxRecordSize,
                now: Date()
            )
        }
        // Exactly-once state belongs to the client within its user, and only a push that can change
        // something writes it: a pull, or a push from a token without `write` (every change is
        // rejected, which a retry repeats), leaves it as it is.
        let client = ClientIdentity(userID: token.userID, clientID: syncRequest.clientID)
        let push =
            syncRequest.changes.isEmpty || !token.allows("write")
            ? nil : syncRequest.pushID.map { ClientPush(client: client, pushID: $0) }
        let baseRevision = syncRequest.baseRevision
        // A base revision the layer never had (the client talked to a layer since deleted and
        // created again, or to another server) cannot be caught up with changes: send everything.
        let answering = { @Sendable (reader: LayerReader, result: CommitResult, rejections: [SyncRejection]) in
            try await Self.syncAnswer(
                reader, request: syncRequest, client: client, reset: baseRevision > reader.revision, result: result,
                rejections: rejections)
        }
        let result: CommitResult
        let rejections: [SyncRejection]
        let answer: SyncAnswer
        if syncRequest.changes.isEmpty {
            // A pull writes nothing: one read transaction, beside the layer's commits (the layer
            // created first if this is its first client).
            _ = try await storage.layerCreatingIfNeeded(documentID: documentID, name: layer)
            answer = try await storage.read(documentID: documentID, layer: layer) { reader in
                try await answering(reader, CommitResult(revision: reader.revision, applied: [], skipped: []), [])
            }
            result = CommitResult(revision: answer.revision, applied: [], skipped: [])
            rejections = []
        } else {
            // A client close behind is answered in its group transaction, after the commits; one
            // further behind (or with a base revision the layer never had) after the commit, so
            // that its larger read does not hold the layer's lock.
            let apply = {
                try await self.storage.apply(
                    documentID: documentID, layer: layer, push: push, reading: planner.referencedIDs,
                    deciding: planner.decide,
                    answerCarries: AnsweredChanges(
                        after: baseRevision, withinRevisions: Self.answerInCommitLimit,
                        // The answer takes its changes' JSON as its group's answers share it
                        // (``SyncAnswer/writeRecords(visibleTo:into:)``).
                        derivation: token.collaborationPermissions == nil ? SharedSyncJSON.self : nil),
                    answering: { reader, result, outcome in try await answering(reader, result, outcome ?? []) })
            }
            let committed: CommitResult
            let outcome: [SyncRejection]?
            let early: SyncAnswer?
            do {
                (committed, outcome, early) = try await apply()
            } catch let error as StorageError where error.code == .layerNotFound {
                // The layer's first client: the layer is created from the document's own records.
                _ = try await storage.layerCreatingIfNeeded(documentID: documentID, name: layer)
                (committed, outcome, early) = try await apply()
            }
            result = committed
            rejections = outcome ?? []
            if let early {
                answer = early
            } else {
                answer = try await storage.read(documentID: documentID, layer: layer) { reader in
                    try await answering(reader, committed, rejections)
                }
            }
        }
        if result.isDuplicatePush {
            logger.info(
                "Answered a repeated push without applying it",
                metadata: ["document.id": "\(documentID)", "client.id": "\(syncRequest.clientID)"]
            )
        }
        let body = try await LargeWork.run(writing: answer.writingWork(for: token)) {
            Self.encode(answer, rejections: rejections, visibleTo: token, enclosedIn: envelope)
        }
        return EncodedSyncAnswer(revision: answer.revision, body: body)
    }

    /// The JSON of a sync answer. Written by hand so that stored contents go out as they are,
    /// without being parsed and serialized again: answers can carry thousands of records.
    private static func encode(
        _ answer: SyncAnswer, rejections: [SyncRejection], visibleTo token: ClientToken,
        enclosedIn envelope: AnswerEnvelope?
    ) -> SyncAnswerBody {
        let rejected = JSONValue.array(
            rejections.map { rejection in
                [
                    "id": .string(rejection.id),
                    "kind": .string(rejection.kind.rawValue),
                    "code": .string(rejection.code.rawValue),
                    "reason": .string(rejection.reason),
                ]
            }
        )
        var body = SyncAnswerBody(envelope?.opening ?? ByteBuffer())
        body.text.writeString(#"{"revision":\#(answer.revision),"reset":\#(answer.reset),"pushId":"#)
        body.text.writeString(answer.lastPushID.map(String.init) ?? "null")
        body.text.writeString(#","rejected":"#)
        body.text.writeBytes(rejected.serialized())
        body.text.writeString(#","records":"#)
        answer.writeRecords(visibleTo: token, into: &body)
        body.text.writeString("}")
        if let envelope { body.text.writeStaticString(envelope.closing) }
        return body
    }

    /// How many revisions behind the layer a pushing client may be and still be answered inside its
    /// commit's transaction (``AnsweredChanges/withinRevisions``).
    static let answerInCommitLimit: Int64 = 64

    /// Reads a sync answer: the records changed after the client's base revision (every live
    /// record for a reset) and the current state of every record the push touched but did not
    /// change, so that the client can settle each of its changes.
    static func syncAnswer(
        _ reader: LayerReader, request: SyncRequest, client: ClientIdentity, reset: Bool, result: CommitResult,
        rejections: [SyncRejection]
    ) async throws -> SyncAnswer {
        let (changed, shared) = try await reader.changes(after: reset ? 0 : request.baseRevision)
        let lastPush: Int64? =
            if let pushID = request.pushID { pushID } else { try await reader.lastPushID(of: client) }
        var answer = SyncAnswer(
            revision: reader.revision, reset: reset, lastPushID: lastPush,
            changes: reset ? ArraySlice(changed.filter { !$0.isDeleted }) : changed, shared: reset ? nil : shared,
            settled: [])
        // The applied changes are already listed; rejected ones (and, for a repeated push, all of
        // them) are added.
        let settle = result.isDuplicatePush ? request.changes.map(\.id) : rejections.map(\.id)
        guard !settle.isEmpty else { return answer }
        var listed = Set(answer.changes.map(\.id))
        let unlisted = settle.filter { listed.insert($0).inserted }
        let stored = try await reader.records(ids: unlisted)
        for id in unlisted {
            let kind = request.changes.first { $0.id == id }?.kind ?? .annotation
            answer.settled.append(
                stored[id]
                    ?? StoredRecord(
                        id: id, kind: kind, revision: 0, isDeleted: true, content: Data(), updatedAt: Date()))
        }
        return answer
    }

    /// What a sync answer carries besides the rejections.
    struct SyncAnswer: Sendable {
        var revision: Int64
        var reset: Bool
        var lastPushID: Int64?
        /// The records changed after the client's base revision (the live ones for a reset), by
        /// revision then id: the end of the records its group's answers share (`shared`), when
        /// they do.
        var changes: ArraySlice<StoredRecord>
        var shared: SharedRecords?
        /// The state of the records the push named that ``changes`` does not list (rejected, or all
        /// of them for a repeated push), so that the client can settle each of its changes.
        var settled: [StoredRecord]

        /// How much work writing the answer for `token` is (``StoredRecord/syncJSONSizeEstimate(of:)``,
        /// where tombstones count too): the records it writes itself, and, when it is the first of
        /// its group's answers to write their shared records, those it makes the JSON of for every
        /// answer (``SharedRecords/derivingWork(_:)``). The shared JSON it takes counts for nothing:
        /// it goes out as it is (``SyncAnswerBody``).
        func writingWork(for token: ClientToken) -> Int {
            let settledWork = StoredRecord.syncJSONSizeEstimate(of: settled)
            guard let shared, token.collaborationPermissions == nil else {
                return settledWork + StoredRecord.syncJSONSizeEstimate(of: changes)
            }
            return settledWork + shared.derivingWork(SharedSyncJSON.self)
        }

        /// Writes the records as the JSON array of the answer: the changes as its group's answers
        /// share them, written once and taken as they are, when the token's user may view every record.
        func writeRecords(visibleTo token: ClientToken, into body: inout SyncAnswerBody) {
            body.text.writeInteger(UInt8(ascii: "["))
            var starts: [Int]? = nil
            if let shared, token.collaborationPermissions == nil {
                shared.derived(SharedSyncJSON.self).write(from: changes.startIndex, into: &body)
            } else {
                StoredRecord.writeSyncJSONList(changes, visibleTo: token, into: &body.text, startsOfRecords: &starts)
            }
            if !changes.isEmpty, !settled.isEmpty { body.text.writeInteger(UInt8(ascii: ",")) }
            StoredRecord.writeSyncJSONList(settled, visibleTo: token, into: &body.text, startsOfRecords: &starts)
            body.text.writeInteger(UInt8(ascii: "]"))
        }
    }

    /// A record as the token's user may see it: in full, or as a tombstone when the collaboration
    /// permissions do not let the user view it.
    static func visible(_ record: StoredRecord, to token: ClientToken) -> StoredRecord {
        guard !record.isDeleted, let permissions = token.collaborationPermissions,
            let content = SyncPlanner.content(of: record.kind),
            !permissions.allows(
                .view, content, .init(createdBy: record.createdBy, group: record.group), user: token.userID)
        else { return record }
        return StoredRecord(
            id: record.id, kind: record.kind, revision: record.revision, isDeleted: true, content: Data(),
            updatedAt: record.updatedAt)
    }
}
