import Foundation
import InstantJSON

/// Decides, inside the push's write transaction, which changes of a sync request apply and how
/// each stored record looks: permissions, delete-wins, server-assigned fields.
struct SyncPlanner: Sendable {
    let token: ClientToken
    let request: SyncRequest
    /// The referenced attachments the document has (checked before the transaction: attachments
    /// are immutable).
    let availableAttachments: Set<String>
    /// The largest record that may be stored, in bytes of its serialized Instant JSON.
    let maxRecordSize: Int
    /// The time of the sync as records carry it (`updatedAt`, and `createdAt` of a new record),
    /// formatted once for all its changes.
    let stamp: JSONValue
    /// What the planner works out for each change, by index, when it is made, before the
    /// transaction (`nil` for a deletion): what is wrong with its content on its own (the
    /// transaction checks only the page index against the document's pages), and the record it
    /// stores if it creates one.
    private let prepared: [Prepared?]
    /// The ids of the stored records the decisions may look at, each once: the records the push
    /// names, the roots of the threads its comments reply to, and the fields its form values fill.
    let referencedIDs: [String]
    /// Whether the push names an id more than once (in two changes, as a change and the thread
    /// root or field of another, or as the root or field of two): only then may a decision look at
    /// a record that an earlier change of the push put or deleted.
    private let namesAnIDTwice: Bool

    private struct Prepared {
        var problem: String?
        /// The stored JSON of the record if the change creates it, and the server's fields in it.
        var created: (json: Data, fields: ServerFields)?
        /// The page the record is on, checked against the document's pages in the transaction.
        var page: Int64?
        /// The attachment the record shows, which the document must have.
        var attachment: String?
    }

    init(
        token: ClientToken, request: SyncRequest, availableAttachments: Set<String>, maxRecordSize: Int, now: Date
    ) {
        self.token = token
        self.request = request
        self.availableAttachments = availableAttachments
        self.maxRecordSize = maxRecordSize
        let stamp = JSONValue.string(InstantDate.string(from: now))
        self.stamp = stamp
        prepared = request.changes.map { [token] change in
            guard case .put(let content, _) = change.operation else { return nil }
            if let problem = RecordValidation.problem(
                kind: change.kind, content: content, pageCount: nil, path: "content")
            {
                return Prepared(problem: problem)
            }
            return Prepared(
                created: Self.stored(content, kind: change.kind, previous: nil, stamp: stamp, token: token),
                page: RecordValidation.pageIndex(kind: change.kind, content: content),
                attachment: content["imageAttachmentId"]?.stringValue)
        }
        (referencedIDs, namesAnIDTwice) = Self.referencedIDs(of: request)
    }

    /// What the planner knows about a record: as stored, or as put earlier in the same push.
    private struct Known {
        var kind: RecordKind
        var subject: CollaborationPermissions.Subject
        var isLive: Bool
        /// The fields of a live record that an edit keeps.
        var fields: ServerFields?
    }

    /// The fields the server decides that an edit keeps from the record's first version.
    struct ServerFields {
        var createdAt: JSONValue?
        var creatorName: JSONValue?

        init(createdAt: JSONValue?, creatorName: JSONValue?) {
            self.createdAt = createdAt
            self.creatorName = creatorName
        }

        /// The fields of stored content.
        init(of content: JSONValue) {
            self.init(createdAt: content["createdAt"], creatorName: content["creatorName"])
        }
    }

    /// Decides inside a commit (where the reader knows the document's page count).
    ///
    /// This runs in the layer's group transaction, which the commits of the layer wait for: what
    /// does not depend on the stored records is worked out before (``Prepared``), and an id is
    /// looked up as few times as it can be.
    func decide(_ reader: LayerReader) async throws -> LayerDecision<[SyncRejection]> {
        let pageCount = reader.pageCount ?? 0
        let mayWrite = token.allows("write")
        var changes: [RecordChange] = []
        changes.reserveCapacity(request.changes.count)
        var rejections: [SyncRejection] = []
        // Every stored record the decisions look at, read at once.
        let stored = try await reader.records(ids: referencedIDs)
        // Records put or deleted earlier in this push, so later changes see them; none are looked
        // at when the push names each id once.
        var overlay: [String: Known] = [:]
        // Sized for the push at once: grown from empty, a dictionary hashes its keys again at every
        // doubling.
        if namesAnIDTwice { overlay.reserveCapacity(request.changes.count) }

        func known(_ id: String) -> Known? {
            if namesAnIDTwice, let value = overlay[id] { return value }
            return known(stored: stored[id])
        }
        func remember(_ id: String, _ value: Known) {
            if namesAnIDTwice { overlay[id] = value }
        }
        func known(stored: StoredRecord?) -> Known? {
            stored.map { record in
                Known(
                    kind: record.kind,
                    subject: .init(createdBy: record.createdBy, group: record.group),
                    isLive: !record.isDeleted,
                    fields: record.isDeleted ? nil : (try? JSONValue(parsing: record.content)).map(ServerFields.init)
                )
            }
        }

        for (index, change) in request.changes.enumerated() {
            func reject(_ code: SyncRejection.Code, _ reason: String) {
                rejections.append(SyncRejection(id: change.id, kind: change.kind, code: code, reason: reason))
            }
            guard mayWrite else {
                reject(.permissionDenied, "The token has no 'write' permission, which every change needs.")
                continue
            }
            let storedRecord = stored[change.id]
            let earlier = namesAnIDTwice ? overlay[change.id] : nil
            let existing = earlier ?? known(stored: storedRecord)
            switch change.operation {
            case .put(let content, let assignment):
                if let stored = storedRecord, stored.isDeleted, stored.revision > request.baseRevision, earlier == nil {
                    reject(
                        .recordDeleted,
                        "The record was deleted at revision \(stored.revision), after your base revision "
                            + "\(request.baseRevision); a deletion wins over a later edit."
                    )
                    continue
                }
                if let existing, existing.isLive, existing.kind != change.kind {
                    reject(.kindMismatch, "The id '\(change.id)' belongs to a \(existing.kind), not a \(change.kind).")
                    continue
                }
                if let problem = prepared[index]?.problem
                    ?? prepared[index]?.page.flatMap({
                        RecordValidation.pageRangeProblem(page: $0, pageCount: pageCount, path: "content")
                    })
                {
                    reject(.invalidRecord, problem)
                    continue
                }
                if let attachment = prepared[index]?.attachment, !availableAttachments.contains(attachment) {
                    reject(
                        .missingAttachment,
                        "The attachment '\(attachment)' is not on the server; upload it (PUT .../attachments/"
                            + "{sha256}) before pushing the record."
                    )
                    continue
                }
                let live = existing?.isLive == true ? existing : nil
                let group: String?
                switch assignment {
                case .assigned(let name): group = name
                case .unchanged: group = live.map(\.subject.group) ?? token.defaultGroup
                }
                let subject = CollaborationPermissions.Subject(
                    createdBy: live?.subject.createdBy ?? token.userID,
                    group: group
                )
                if let denial = putDenial(
                    change, content: content, live: live, subject: subject, known: known)
                {
                    reject(.permissionDenied, denial)
                    continue
                }
                let (stored, fields) =
                    (live == nil ? prepared[index]?.created : nil)
                    ?? Self.stored(content, kind: change.kind, previous: live?.fields, stamp: stamp, token: token)
                if stored.count > maxRecordSize {
                    reject(
                        .recordTooLarge,
                        "The record has \(stored.count) bytes of Instant JSON, more than the server's limit of "
                            + "\(maxRecordSize) (--max-record-size); every client downloads it, so keep records small."
                    )
                    continue
                }
                changes.append(
                    .put(
                        RecordWrite(
                            id: change.id,
                            kind: change.kind,
                            group: group,
                            user: token.userID,
                            content: stored
                        ),
                        condition: .notDeletedAfter(request.baseRevision)
                    )
                )
                remember(change.id, Known(kind: change.kind, subject: subject, isLive: true, fields: fields))
            case .delete:
                guard let existing, existing.isLive else { continue }
                if let permissions = token.collaborationPermissions, let content = Self.content(of: existing.kind),
                    !permissions.allows(.delete, content, existing.subject, user: token.userID)
                {
                    reject(
                        .permissionDenied, "Your collaboration permissions do not allow deleting this \(existing.kind)."
                    )
                    continue
                }
                changes.append(.delete(id: change.id, user: token.userID))
                remember(change.id, Known(kind: existing.kind, subject: existing.subject, isLive: false, fields: nil))
            // Deleting a thread's root deletes its comments: the storage does that for every
            // writer.
            }
        }
        return LayerDecision(changes: changes, outcome: rejections)
    }

    /// The ids of ``referencedIDs``, and whether the push names one of them more than once.
    private static func referencedIDs(of request: SyncRequest) -> (ids: [String], namesAnIDTwice: Bool) {
        var ids: Set<String> = []
        ids.reserveCapacity(request.changes.count)
        var namesAnIDTwice = false
        func insert(_ id: String) {
            if !ids.insert(id).inserted { namesAnIDTwice = true }
        }
        for change in request.changes {
            insert(change.id)
            guard case .put(let content, _) = change.operation else { continue }
            if change.kind == .comment, let root = content["rootId"]?.stringValue { insert(root) }
            // The field as the decision names it (``putDenial(_:content:live:subject:known:)``).
            if change.kind == .formFieldValue {
                insert(FormField.recordID(forName: content["name"]?.stringValue ?? ""))
            }
        }
        return (Array(ids), namesAnIDTwice)
    }

    /// Why the collaboration permissions refuse a put, or `nil` if they allow it.
    private func putDenial(
        _ change: SyncRequest.Change,
        content: JSONValue,
        live: Known?,
        subject: CollaborationPermissions.Subject,
        known: (String) -> Known?
    ) -> String? {
        guard let permissions = token.collaborationPermissions else { return nil }
        let user = token.userID
        switch change.kind {
        case .annotation, .comment:
            let area: CollaborationPermissions.Content = change.kind == .annotation ? .annotations : .comments
            if let live {
                guard permissions.allows(.edit, area, live.subject, user: user) else {
                    return "Your collaboration permissions do not allow editing this \(change.kind)."
                }
                if subject.group != live.subject.group, !permissions.allows(.setGroup, area, live.subject, user: user) {
                    return "Your collaboration permissions do not allow moving this \(change.kind) to another group."
                }
                return nil
            }
            if subject.group != token.defaultGroup, !permissions.allows(.setGroup, area, subject, user: user) {
                return "Your collaboration permissions do not allow creating a \(change.kind) in the group "
                    + "'\(subject.group ?? "")'."
            }
            if change.kind == .comment {
                guard let rootID = content["rootId"]?.stringValue, let root = known(rootID), root.isLive else {
                    return "The comment's thread root '\(content["rootId"]?.stringValue ?? "")' does not exist."
                }
                guard permissions.allows(.view, .annotations, root.subject, user: user),
                    permissions.allows(.reply, .comments, root.subject, user: user)
                else { return "Your collaboration permissions do not allow replying to the thread '\(rootID)'." }
                return nil
            }
            guard permissions.allows(.edit, .annotations, subject, user: user) else {
                return "Your collaboration permissions do not allow creating this annotation."
            }
            return nil
        case .formFieldValue:
            let name = content["name"]?.stringValue ?? ""
            let field = known(FormField.recordID(forName: name))
            let fieldSubject = field?.subject ?? live?.subject ?? subject
            guard permissions.allows(.fill, .formFields, fieldSubject, user: user) else {
                return "Your collaboration permissions do not allow filling the form field '\(name)'."
            }
            return nil
        default:
            return nil
        }
    }

    /// The record as stored, with the fields the server decides for annotations and comments:
    /// `createdAt` (kept from the first version, `previous`), `updatedAt` (now) and `creatorName`
    /// (the token's `creator_name` on creation, unchanged by edits); and those it keeps for an edit.
    /// Written straight from the client's members: a copy of the record with the fields put in
    /// would copy and hash every member again.
    private static func stored(
        _ content: JSONValue, kind: RecordKind, previous: ServerFields?, stamp: JSONValue, token: ClientToken
    ) -> (json: Data, fields: ServerFields) {
        guard kind == .annotation || kind == .comment, case .object(let members) = content else {
            return (content.serialized(), ServerFields(of: content))
        }
        let createdAt = previous?.createdAt ?? members["createdAt"] ?? stamp
        // In key order, which the writer takes as it is.
        var replacements: [(key: String, value: JSONValue?)] = [("createdAt", createdAt)]
        let creatorName: JSONValue?
        // The creator's name stays the creator's: an edit keeps it; a creation takes the token's.
        if let previous {
            creatorName = previous.creatorName
            replacements.append(("creatorName", creatorName))
        } else if let creator = token.creatorName {
            creatorName = .string(creator)
            replacements.append(("creatorName", creatorName))
        } else {
            creatorName = members["creatorName"]
        }
        replacements.append(("updatedAt", stamp))
        return (
            JSONValue.serializedObject(members, replacing: replacements),
            ServerFields(createdAt: createdAt, creatorName: creatorName)
        )
    }

    /// The collaboration permission area of a record kind; bookmarks have none.
    static func content(of kind: RecordKind) -> CollaborationPermissions.Content? {
        switch kind {
        case .annotation: .annotations
        case .comment: .comments
        case .formField, .formFieldValue: .formFields
        default: nil
        }
    }
}
