import Foundation
import Hummingbird
import InstantJSON

extension InstantAPI {
    /// `POST /i/d/{documentID}[/l/{layer}]/sync`: applies a client's push exactly once and answers
    /// with everything the user may see that changed after the client's base revision.
    /// See docs/PROTOCOL.md.
    func sync(_ request: Request, _ context: InstantRequestContext, verifier: ClientTokenVerifier?) async throws
        -> Response
    {
        let (token, documentID, layer) = try await authorizeClient(
            request, context, verifier: verifier, anyOf: ["read-document"])
        let limits = configuration.clientLimits
        let syncRequest = try SyncRequest(
            try await jsonBody(
                request, limit: BodyLimit(bytes: limits.maxSyncBodySize, option: "--max-sync-body-size")),
            maxChanges: limits.maxChangesPerPush)
        let document = try await requireDocument(documentID)
        let current = try await storage.layerCreatingIfNeeded(documentID: documentID, name: layer)

        let referencedAttachments = syncRequest.changes.compactMap { change -> String? in
            guard case .put(let content, _) = change.operation else { return nil }
            return content["imageAttachmentId"]?.stringValue
        }
        let attachments = try await storage.attachmentKeys(documentID: documentID, among: referencedAttachments)
        let planner = SyncPlanner(
            token: token,
            request: syncRequest,
            pageCount: document.pageCount,
            availableAttachments: attachments,
            maxRecordSize: limits.maxRecordSize,
            now: Date()
        )
        // Exactly-once state belongs to the client within its user, and only a push that can change
        // something writes it: a pull, or a push from a token without `write` (every change is
        // rejected, which a retry repeats), leaves it as it is.
        let client = ClientIdentity(userID: token.userID, clientID: syncRequest.clientID)
        let push =
            syncRequest.changes.isEmpty || !token.allows("write")
            ? nil : syncRequest.pushID.map { ClientPush(client: client, pushID: $0) }
        let baseRevision = syncRequest.baseRevision
        let (result, outcome) = try await storage.apply(
            documentID: documentID, layer: layer, push: push, deciding: planner.decide)
        let rejections = outcome ?? []
        // A base revision the layer never had (the client talked to a layer since deleted and
        // created again, or to another server) cannot be caught up with changes: send everything.
        let reset = baseRevision > current.revision
        let answer = try await storage.read(documentID: documentID, layer: layer) { reader in
            // The answer is read in one read transaction after the commit, beside other commits.
            let changed = try await reader.records(changedAfter: reset ? 0 : baseRevision)
            var records = reset ? changed.filter { !$0.isDeleted } : changed
            // The current state of every record the push touched, so the client can settle each of
            // its changes: the applied ones are already listed; rejected ones (and, for a repeated
            // push, all of them) are added.
            let settle = result.isDuplicatePush ? syncRequest.changes.map(\.id) : rejections.map(\.id)
            var listed = Set(records.map(\.id))
            let unlisted = settle.filter { listed.insert($0).inserted }
            let stored = try await reader.records(ids: unlisted)
            for id in unlisted {
                let kind = syncRequest.changes.first { $0.id == id }?.kind ?? .annotation
                records.append(
                    stored[id]
                        ?? StoredRecord(
                            id: id, kind: kind, revision: 0, isDeleted: true, content: Data(), updatedAt: Date()))
            }
            let lastPush: Int64? =
                if let pushID = syncRequest.pushID { pushID } else { try await reader.lastPushID(of: client) }
            return SyncAnswer(revision: reader.revision, reset: reset, lastPushID: lastPush, records: records)
        }
        if result.isDuplicatePush {
            context.logger.info(
                "Answered a repeated push without applying it",
                metadata: ["document.id": "\(documentID)", "client.id": "\(syncRequest.clientID)"]
            )
        }
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
        // Written by hand so that stored contents go out as they are, without being parsed and
        // serialized again: answers can carry thousands of records.
        var body = ByteBuffer()
        body.writeString(#"{"revision":\#(answer.revision),"reset":\#(answer.reset),"pushId":"#)
        body.writeString(answer.lastPushID.map(String.init) ?? "null")
        body.writeString(#","rejected":"#)
        body.writeBytes(rejected.serialized())
        body.writeString(#","records":["#)
        for (index, record) in answer.records.enumerated() {
            if index > 0 { body.writeInteger(UInt8(ascii: ",")) }
            Self.visible(record, to: token).writeSyncJSON(into: &body)
        }
        body.writeString("]}")
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: body))
    }

    /// What a sync answer carries besides the rejections, read in the commit's transaction.
    struct SyncAnswer: Sendable {
        var revision: Int64
        var reset: Bool
        var lastPushID: Int64?
        var records: [StoredRecord]
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
