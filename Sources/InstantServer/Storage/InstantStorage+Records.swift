import Foundation
import InstantJSON
import Synchronization

extension InstantStorage {
    /// The live (not deleted) records of a layer, optionally of one kind, ordered by id.
    /// - Throws: ``StorageError/Code/layerNotFound``.
    public func records(documentID: String, layer: String, kind: RecordKind?) async throws -> [StoredRecord] {
        try await backend.read { transaction in
            _ = try await Self.requireLayer(transaction, documentID: documentID, name: layer)
            return try await transaction.liveRecords(documentID: documentID, layer: layer, kind: kind)
        }
    }

    /// Part of the live records of one kind of a layer, ordered by id (see
    /// ``StorageTransaction/liveRecords(documentID:layer:kind:onPage:offset:limit:)``), and whether
    /// more follow them.
    /// - Throws: ``StorageError/Code/layerNotFound``.
    public func recordPage(
        documentID: String, layer: String, kind: RecordKind, onPage pageIndex: Int? = nil, offset: Int = 0,
        limit: Int? = nil
    ) async throws -> (records: [StoredRecord], hasMore: Bool) {
        try await backend.read { transaction in
            _ = try await Self.requireLayer(transaction, documentID: documentID, name: layer)
            let records = try await transaction.liveRecords(
                documentID: documentID, layer: layer, kind: kind, onPage: pageIndex, offset: offset,
                limit: limit.map { $0 + 1 })
            guard let limit, records.count > limit else { return (records, false) }
            return (Array(records.prefix(limit)), true)
        }
    }

    /// The record with the given id (tombstones included), or `nil`.
    /// - Throws: ``StorageError/Code/layerNotFound``.
    public func record(documentID: String, layer: String, id: String) async throws -> StoredRecord? {
        try await backend.read { transaction in
            _ = try await Self.requireLayer(transaction, documentID: documentID, name: layer)
            return try await transaction.records(documentID: documentID, layer: layer, ids: [id]).first
        }
    }

    /// The layer's current revision and every record (tombstones included) changed after `revision`.
    /// - Throws: ``StorageError/Code/layerNotFound``.
    public func changes(documentID: String, layer: String, since revision: Int64) async throws -> LayerChanges {
        try await backend.read { transaction in
            let current = try await Self.requireLayer(transaction, documentID: documentID, name: layer)
            let records = try await transaction.records(documentID: documentID, layer: layer, changedAfter: revision)
            return LayerChanges(revision: current.revision, records: records)
        }
    }

    /// Runs `body` on one read transaction of the layer: everything it reads comes from one snapshot,
    /// whose revision is the reader's ``LayerReader/revision``.
    /// - Throws: ``StorageError/Code/layerNotFound``.
    public func read<T: Sendable>(
        documentID: String, layer: String, _ body: @escaping @Sendable (LayerReader) async throws -> T
    ) async throws -> T {
        try await backend.read { transaction in
            let current = try await Self.requireLayer(transaction, documentID: documentID, name: layer)
            return try await body(
                LayerReader(
                    transaction: transaction, documentID: documentID, layer: layer, revision: current.revision))
        }
    }

    /// The last push id applied for a client (its id within its user's scope) on a layer, or `nil`.
    public func lastPushID(documentID: String, layer: String, client: ClientIdentity) async throws -> Int64? {
        try await backend.readStatement {
            try await $0.lastPushID(documentID: documentID, layer: layer, client: client)
        }
    }

    /// Applies a batch of changes in one transaction. When at least one change applies, the layer
    /// revision goes up by one and every applied record carries the new revision.
    ///
    /// With a `push`, the batch is applied exactly once: the last push id of the push's
    /// ``ClientIdentity`` (client id and user together) is stored in the same transaction, and a
    /// push whose id is not above it writes nothing and comes back with
    /// ``CommitResult/isDuplicatePush`` set.
    /// - Throws: ``StorageError/Code/layerNotFound``; ``StorageError/Code/pushOutOfRange`` for a push
    ///   id too far above the last one (``ClientPush/stepProblem(after:)``; nothing is written); with
    ///   ``ConditionFailurePolicy/abortBatch``, the first failed condition's error (and nothing is
    ///   written).
    public func apply(
        _ changes: [RecordChange],
        documentID: String,
        layer: String,
        push: ClientPush? = nil,
        onConditionFailure: ConditionFailurePolicy
    ) async throws -> CommitResult {
        try await apply(
            documentID: documentID, layer: layer, push: push, onConditionFailure: onConditionFailure,
            reading: changes.map(\.recordID), deciding: { _ in LayerDecision(changes: changes, outcome: ()) },
            answerCarries: nil, answering: { _, _, _ in () }
        ).result
    }

    /// Decides and applies a batch in one write transaction: `decide` reads the layer as it is at
    /// commit time and returns the changes to apply (failed conditions are skipped, not thrown).
    /// The records with the ids in `reading` are read for it beforehand, together with those of the
    /// other commits of its group transaction; it may read others (each such read is a statement of
    /// its own).
    ///
    /// `decide` may be called more than once, each time on the layer as it is then: a group that
    /// did not lock the layer and finds that another server node wrote it meanwhile runs again
    /// (``StorageBackend/optimistically(_:)``). Keep it free of side effects; only the outcome of
    /// its last call counts.
    ///
    /// With a `push` whose id is not above the client's last one, `decide` is not called, nothing is
    /// written, and the result has ``CommitResult/isDuplicatePush`` set and no outcome.
    /// - Throws: ``StorageError/Code/layerNotFound``; ``StorageError/Code/pushOutOfRange`` (see
    ///   above); whatever `decide` throws (nothing is written).
    public func apply<Outcome: Sendable>(
        documentID: String,
        layer: String,
        push: ClientPush?,
        reading ids: [String] = [],
        deciding decide: @escaping @Sendable (LayerReader) async throws -> LayerDecision<Outcome>
    ) async throws -> (result: CommitResult, outcome: Outcome?) {
        let (result, outcome, _) = try await apply(
            documentID: documentID, layer: layer, push: push, onConditionFailure: .skipChange, reading: ids,
            deciding: decide, answerCarries: nil, answering: { _, _, _ in () })
        return (result, outcome)
    }

    /// ``apply(documentID:layer:push:reading:deciding:)``, then `answer` reads what the caller
    /// answers with in the same transaction, once every commit of the group transaction is written:
    /// its reader sees the layer at the revision the group left (its ``LayerReader/revision``, the
    /// commit's own or a later one of its group). That saves a client's push the read transaction its
    /// answer would need, but runs while the layer is locked: keep `answer` short.
    ///
    /// `answerCarries` says after which revision `answer` will ask the changed records
    /// (``LayerReader/records(changedAfter:)``), which the group reads once for all its answers, and
    /// how far behind the layer that revision may be for the answer to be made in the transaction
    /// (a client far behind is better answered by ``read(documentID:layer:_:)`` after the commit);
    /// `nil` not to answer in the transaction. When the answer is not made in the transaction,
    /// `answer` is not called, and the answer is `nil`.
    public func apply<Outcome: Sendable, Answer: Sendable>(
        documentID: String,
        layer: String,
        push: ClientPush?,
        reading ids: [String] = [],
        deciding decide: @escaping @Sendable (LayerReader) async throws -> LayerDecision<Outcome>,
        answerCarries changes: AnsweredChanges?,
        answering answer: @escaping @Sendable (LayerReader, CommitResult, Outcome?) async throws -> Answer
    ) async throws -> (result: CommitResult, outcome: Outcome?, answer: Answer?) {
        try await apply(
            documentID: documentID, layer: layer, push: push, onConditionFailure: .skipChange, reading: ids,
            deciding: decide, answerCarries: changes, answering: answer)
    }

    /// The write path of every change to a layer's records: a commit queued for the layer's next
    /// group transaction (``LayerCommitQueue``).
    private func apply<Outcome: Sendable, Answer: Sendable>(
        documentID: String,
        layer: String,
        push: ClientPush?,
        onConditionFailure: ConditionFailurePolicy,
        reading ids: [String],
        deciding decide: @escaping @Sendable (LayerReader) async throws -> LayerDecision<Outcome>,
        answerCarries changes: AnsweredChanges?,
        answering answer: @escaping @Sendable (LayerReader, CommitResult, Outcome?) async throws -> Answer
    ) async throws -> (result: CommitResult, outcome: Outcome?, answer: Answer?) {
        let now = clock()
        let key = LayerCommitQueue.LayerKey(documentID: documentID, layer: layer)
        return try await withCheckedThrowingContinuation { continuation in
            let job = LayerCommitQueue.Job(
                push: push,
                reading: ids,
                answer: changes,
                run: { transaction, group in
                    let committed: (result: CommitResult, outcome: Outcome?)
                    do {
                        committed = try await Self.commit(
                            in: transaction, group: &group, push: push, onConditionFailure: onConditionFailure,
                            now: now, deciding: decide)
                    } catch let error as StorageError where !error.failsTheTransaction {
                        // Refused before it wrote anything: the group goes on without it.
                        return { _ in { continuation.resume(throwing: error) } }
                    } catch let refusal as DecisionFailure {
                        return { _ in { continuation.resume(throwing: refusal.error) } }
                    }
                    return { after in
                        do {
                            var answered: Answer?
                            if let after { answered = try await answer(after, committed.result, committed.outcome) }
                            let value = (committed.result, committed.outcome, answered)
                            return { continuation.resume(returning: value) }
                        } catch let error as StorageError where !error.failsTheTransaction {
                            return { continuation.resume(throwing: error) }
                        }
                    }
                },
                fail: { continuation.resume(throwing: $0) })
            commitQueue.submit(job, to: key, on: backend.commitExecutor) { key, take, written in
                try await self.commitGroup(key, take: take, written: written)
            }
        }
    }

    /// One group of commits to a layer, in a number of statements that does not grow with the
    /// number of its commits (unless they read records beyond what they declared, delete
    /// annotations with comments, or write more than a backend writes in one statement):
    /// 1. at once: the last push ids of the group's clients, the records every commit declared it
    ///    reads, and the records changed after the lowest revision the answers ask from;
    /// 2. each commit in turn, deciding and writing in memory (``GroupRecords``); then each
    ///    commit's answer, from the changes read in 1 and the group's writes;
    /// 3. every record written, the layer's revision, the push ids and the announcement, at once;
    ///
    /// and after the commit, by the delivery it returns: what its answers derive from the records
    /// they share (their JSON, ``AnsweredChanges/derivation``), then each commit's caller, then the
    /// observers (a caller's answer does not wait for the change messages of the group).
    /// Commits to one layer follow each other, on every server node, and each takes the revision
    /// after the one before. When its backend offers it, a group does not lock the layer
    /// (``StorageBackend/optimistically(_:)``), unless it is the first here since the layer's
    /// commits stopped coming or a group here found lately that another node wrote the layer at the
    /// same time (``LayerCommitQueue/LastGroup/locksNext``):
    /// - after a group here that found the layer as the one before it here had left it (no other
    ///   node writes it, so this group most likely finds it as the last one left it), it goes by
    ///   the node's memory of the layer: ``commitWithoutLock(_:take:after:)``;
    /// - after one that found the layer written by another node (a client whose requests a load
    ///   balancer sends to each node in turn), it reads everything first:
    ///   ``commitReadingFirst(_:take:after:)``.
    ///
    /// The others, and one that finds the layer changed by another writer after all, lock it
    /// (``commitLocked(_:take:remembering:written:)``). `written` is called once the writes are
    /// done, before the commit of a locked group: the queue starts the next group then.
    private func commitGroup(
        _ key: LayerCommitQueue.LayerKey, take: @escaping @Sendable () -> [LayerCommitQueue.Job],
        written: @escaping @Sendable () -> Void
    ) async throws -> LayerCommitQueue.Delivery {
        let started = ContinuousClock.now
        let last = commitQueue.lastGroup(on: key, at: clock())
        @Sendable func note(_ group: GroupOutcome, locksNext: Int) {
            commitQueue.noteLastGroup(
                .init(
                    revision: group.revision, foundAsLeft: group.found == last?.revision, locksNext: locksNext,
                    memory: group.memory, notedAt: clock()),
                on: key)
            written()
        }
        var unlocked = UnlockedGroup.notTried
        var path = GroupCommitReport.Path.remembered
        if let last, last.foundAsLeft {
            unlocked = try await commitWithoutLock(key, take: take, after: last)
        }
        var ranAgain = unlocked.isRefused || unlocked.foundTheLayerChanged
        if let last, last.locksNext == 0, !last.foundAsLeft || unlocked.foundTheLayerChanged {
            path = .readFirst
            unlocked = try await commitReadingFirst(key, take: take, after: last)
            ranAgain = ranAgain || unlocked.isRefused
        }
        let group: GroupOutcome
        if case .written(let written) = unlocked {
            group = written
            note(group, locksNext: 0)
        } else {
            path = .locked
            var locksNext = max((last?.locksNext ?? 0) - 1, 0)
            if case .refused = unlocked {
                locksNext = LayerCommitQueue.lockedGroupsAfterRefusal
                logger.debug(
                    "Another writer changed the layer while a group of this node wrote it: the group runs again, and the next groups here lock the layer.",
                    metadata: [
                        "document": "\(key.documentID)", "layer": "\(key.layer)", "lockedGroups": "\(locksNext)",
                    ])
            }
            group = try await commitLocked(key, take: take, remembering: last?.memory) { [locksNext] in
                note($0, locksNext: locksNext)
            }
        }
        let report = GroupCommitReport(
            path: path, commits: group.deliveries.count, ranAgain: ranAgain, duration: ContinuousClock.now - started)
        return {
            if let (shared, types) = group.derivedBeforeDelivery { await shared.deriveBeforeDelivery(types) }
            for deliver in group.deliveries { deliver() }
            await self.report(group.events, changes: group.changes, group: report)
        }
    }

    /// A group in one transaction that locks the layer first (so that it sees what the writer
    /// before committed, on whichever node) and takes its commits then, those that arrived while
    /// the lock was awaited included; `written` gets the group once its writes are done.
    ///
    /// When the layer is as the last group here left it (`remembered`, ``LayerMemory``), the group
    /// reads neither the changes its answers carry, when the memory reaches back far enough, nor
    /// the push ids of the clients the memory knows.
    private func commitLocked(
        _ key: LayerCommitQueue.LayerKey, take: @escaping @Sendable () -> [LayerCommitQueue.Job],
        remembering remembered: LayerMemory?, written: @escaping @Sendable (GroupOutcome) -> Void
    ) async throws -> GroupOutcome {
        try await backend.write { transaction in
            let (documentID, layerName) = (key.documentID, key.layer)
            guard let locked = try await transaction.lockLayer(documentID: documentID, name: layerName)
            else { throw try await Self.missingLayer(transaction, documentID: documentID, name: layerName) }
            let memory = remembered.flatMap { $0.holds(for: locked) ? $0 : nil }
            let jobs = take()
            let reading = jobs.reading
            let answersAfter = jobs.map { $0.answer?.readsChangesAfter(layerAt: locked.layer.revision) }
            let plan = GroupReadPlan(
                remembering: memory, clients: jobs.clients, changesAfter: answersAfter.compactMap(\.self).min())
            let read = try await transaction.groupReads(
                documentID: documentID, layer: layerName, ids: reading, clients: plan.clientsToRead,
                changedAfter: plan.changedAfterToRead)
            var group = try await Self.run(
                jobs, in: transaction, on: locked.layer, pageCount: locked.pageCount, read: read, plan: plan,
                reading: reading, answersAfter: answersAfter, records: GroupRecords(flushes: true),
                remembering: locked.version != nil)
            let version = try await transaction.finishCommits(
                documentID: documentID, layer: layerName, writing: group.rows, revision: group.revised,
                pushes: group.pushes, announcing: group.events)
            group.remember(written: version, found: memory)
            written(group)
            return group
        }
    }

    /// How a group that does not lock the layer ended.
    private enum UnlockedGroup {
        /// It wrote.
        case written(GroupOutcome)
        /// It wrote nothing: another writer changed the layer after the group read it, or after the
        /// version its node's memory of the layer has.
        case refused
        /// It wrote nothing: its read found that another writer had changed the layer since the
        /// group before it here (whose memory it went by).
        case foundChanged
        /// It wrote nothing for another reason (the backend has no such groups, the layer is
        /// missing, a read needs the group's writes in the database), or was not tried.
        case notTried

        var foundTheLayerChanged: Bool {
            if case .foundChanged = self { true } else { false }
        }

        var isRefused: Bool {
            if case .refused = self { true } else { false }
        }
    }

    /// A group that does not lock the layer (``StorageBackend/optimistically(_:)``): it reads the
    /// layer with everything else, decides and answers in memory, and writes everything in one
    /// statement if the layer's row is still as it read it. It reads the changes the answers need
    /// after the revision the group before here left (`last`), less what that group's memory has,
    /// and goes on only if it finds the layer as that group left it. When that memory has all the
    /// group needs, the group reads nothing first and writes on the memory's word
    /// (``GroupReadPlan/withoutReading(_:documentID:layer:)``); if the write finds the layer not as
    /// the memory says, the group reads and runs again. Unless it is written, nothing was written
    /// and nobody answered: the group runs again, reading first when its read found the layer
    /// changed since `last` (``commitReadingFirst(_:take:after:)``), locked otherwise.
    private func commitWithoutLock(
        _ key: LayerCommitQueue.LayerKey, take: @escaping @Sendable () -> [LayerCommitQueue.Job],
        after last: LayerCommitQueue.LastGroup
    ) async throws -> UnlockedGroup {
        try await optimistically { transaction in
            let (documentID, layerName) = (key.documentID, key.layer)
            let jobs = take()
            let reading = jobs.reading
            let answersAfter = jobs.map { $0.answer?.readsChangesAfter(layerAt: last.revision) }
            // The memory is taken on trust for what to read, and checked with what was read.
            let plan = GroupReadPlan(
                remembering: last.memory, clients: jobs.clients, changesAfter: answersAfter.compactMap(\.self).min())
            if let unread = plan.withoutReading(reading, documentID: documentID, layer: layerName),
                case .written(let group) = try await Self.runAndWrite(
                    jobs, reading: reading, plan: plan, answersAfter: answersAfter, on: unread.snapshot,
                    assumingAbsent: unread.assumedAbsent, unread: true, in: transaction, key: key)
            {
                return .written(group)
            }
            guard
                let snapshot = try await transaction.readGroup(
                    documentID: documentID, layer: layerName, ids: reading, clients: plan.clientsToRead,
                    changedAfter: plan.changedAfterToRead)
            else { return .notTried }
            guard snapshot.layer.revision == last.revision,
                last.memory.map({ $0.holds(for: snapshot.asLocked) }) ?? true
            else { return .foundChanged }
            return try await Self.runAndWrite(
                jobs, reading: reading, plan: plan, answersAfter: answersAfter, on: snapshot, assumingAbsent: [],
                unread: false, in: transaction, key: key)
        }
    }

    /// A group that does not lock the layer and has no memory of it to go by, another node having
    /// written the layer since the group before it here (`last`): it reads the layer, the records its
    /// commits name, its clients' last push ids and the changes its answers need, in one statement,
    /// then decides, answers and writes as ``commitWithoutLock(_:take:after:)`` does, the write
    /// checking that no writer changed the layer since the read. Two statements where a locked
    /// group has five.
    ///
    /// Not knowing the layer's revision before the read, it reads the changes after the lowest
    /// revision its answers carry, counting only the answers that the layer, at the revision
    /// `last` left or later, is not already too far past; it does not write (and the group runs
    /// again, locked) when the layer it reads needs an answer from further back.
    private func commitReadingFirst(
        _ key: LayerCommitQueue.LayerKey, take: @escaping @Sendable () -> [LayerCommitQueue.Job],
        after last: LayerCommitQueue.LastGroup
    ) async throws -> UnlockedGroup {
        try await optimistically { transaction in
            let jobs = take()
            let reading = jobs.reading
            let changesAfter = jobs.compactMap { $0.answer?.readsChangesAfter(layerAtLeast: last.revision) }.min()
            let plan = GroupReadPlan(remembering: nil, clients: jobs.clients, changesAfter: changesAfter)
            guard
                let snapshot = try await transaction.readGroup(
                    documentID: key.documentID, layer: key.layer, ids: reading, clients: plan.clientsToRead,
                    changedAfter: plan.changedAfterToRead)
            else { return .notTried }
            let revision = snapshot.layer.revision
            let answersAfter = jobs.map { $0.answer?.readsChangesAfter(layerAt: revision) }
            let unread = answersAfter.compactMap(\.self).filter { $0 < revision && $0 < changesAfter ?? revision }
            guard unread.isEmpty else { return .notTried }
            return try await Self.runAndWrite(
                jobs, reading: reading, plan: plan, answersAfter: answersAfter, on: snapshot, assumingAbsent: [],
                unread: false, in: transaction, key: key)
        }
    }

    /// Runs `body` as a group that does not lock the layer; ``UnlockedGroup/notTried`` when the
    /// backend has no such groups or a read needs the group's writes in the database
    /// (``GroupRecords/NeedsLayerLock``).
    private func optimistically(
        _ body: @escaping @Sendable (any OptimisticTransaction) async throws -> UnlockedGroup
    ) async throws -> UnlockedGroup {
        do {
            return try await backend.optimistically(body) ?? .notTried
        } catch is GroupRecords.NeedsLayerLock {
            return .notTried
        }
    }

    /// Runs the jobs of a group that does not lock the layer on the layer as `snapshot` has it,
    /// with what `plan`'s memory adds, and writes if the layer's row still has the snapshot's
    /// version and the layer none of the records of `absent`; the group's memory takes the version
    /// it wrote, or that of the plan's memory. A group on the memory's word (`unread`) that would
    /// write nothing has nothing that checks that word: it is not tried, and reads.
    private static func runAndWrite(
        _ jobs: [LayerCommitQueue.Job], reading: [String], plan: GroupReadPlan, answersAfter: [Int64?],
        on snapshot: LayerSnapshot, assumingAbsent absent: [String], unread: Bool,
        in transaction: any OptimisticTransaction, key: LayerCommitQueue.LayerKey
    ) async throws -> UnlockedGroup {
        var group = try await run(
            jobs, in: transaction, on: snapshot.layer, pageCount: snapshot.pageCount, read: snapshot.reads,
            plan: plan, reading: reading, answersAfter: answersAfter, records: GroupRecords(flushes: false),
            remembering: true)
        if unread && group.writesNothing { return .notTried }
        let (wrote, version) = try await transaction.finishCommits(
            documentID: key.documentID, layer: key.layer, writing: group.rows, revision: group.revised,
            pushes: group.pushes, announcing: group.events, ifUnchangedSince: snapshot.version, assumingAbsent: absent)
        guard wrote else { return .refused }
        group.remember(written: version, found: plan.memory)
        return .written(group)
    }

    /// What a group decided, to write and then to report and deliver.
    private struct GroupOutcome: Sendable {
        /// The rows to write, one per record.
        var rows: [RecordRow]
        /// The layer's revision before the group.
        var found: Int64
        /// The layer's revision after the group.
        var revision: Int64
        /// The layer's new revision, `nil` when the group changed no record.
        var revised: Int64? { revision == found ? nil : revision }
        /// The clients' last push ids to store.
        var pushes: [StoredPush]
        /// What to announce to the other nodes and report to the observers.
        var events: [StorageEvent]
        /// What each commit that changed the layer wrote.
        var changes: [LayerChangeSet]
        /// Each commit's outcome, to deliver once the group committed.
        var deliveries: [@Sendable () -> Void]
        /// What the next group may take from this one instead of reading it, once its version is set.
        var memory: LayerMemory? = nil
        /// The records the group's answers share and what they derive from them, to derive before
        /// the answers are delivered (``SharedRecords/deriveBeforeDelivery(_:)``).
        var derivedBeforeDelivery: (shared: SharedRecords, types: [any RecordsDerivation.Type])? = nil

        /// Whether the group has nothing to write: no record, revision, push id or announcement.
        var writesNothing: Bool { rows.isEmpty && revised == nil && pushes.isEmpty && events.isEmpty }

        /// Sets the memory's version: the one the group wrote (`written`), or, when it wrote nothing,
        /// the one of the memory it `found` holding (the layer is as that group left it); without
        /// either, the group leaves no memory.
        mutating func remember(written: String?, found: LayerMemory?) {
            if let version = written ?? (writesNothing ? found?.version : nil) {
                memory?.version = version
            } else {
                memory = nil
            }
        }
    }

    /// Runs a group's commits in turn on the layer as `read` found it, with what `plan`'s memory
    /// adds (`reading` the records looked for; then every record changed after the plan's
    /// `changedSince` is known, when it has one), then their answers (each after the revision of
    /// `answersAfter`, or none), in memory; and, when `remembering`, makes the group's memory,
    /// adding to what the plan's memory had of the layer as found.
    private static func run(
        _ jobs: [LayerCommitQueue.Job], in transaction: any StorageTransaction, on layer: StoredLayer,
        pageCount: Int, read found: GroupReads, plan: GroupReadPlan, reading: [String], answersAfter: [Int64?],
        records: GroupRecords, remembering: Bool
    ) async throws -> GroupOutcome {
        let (read, changedSince, remembered) = (plan.completing(found), plan.changedSince, plan.memory)
        records.remember(read.records, lookedFor: reading)
        var group = GroupCommit(layer: layer, lastPushIDs: read.lastPushIDs, pageCount: pageCount, records: records)
        var answering: [LayerCommitQueue.Answering] = []
        for job in jobs { answering.append(try await job.run(transaction, &group)) }

        // The group's writes: its commits' own, which are by revision then id, when no record was
        // written by two of them.
        let writes = records.wroteEachRecordOnce() ? group.changes.flatMap(\.records) : nil
        // The records changed after the lowest revision the answers ask from (they share those, and
        // what they derive from them, their JSON, is made once for all), which is what the next
        // group's answers most likely ask too; without answers, all that was known.
        let changed = (answersAfter.compactMap(\.self).min() ?? changedSince).map {
            ChangedRecords(
                after: $0, committedBefore: read.changed, of: plan.knownChanges?.shared,
                writtenSince: writes ?? records.written(), ordered: writes != nil, rewriting: records.rewrittenIDs())
        }
        let after = LayerReader(
            transaction: transaction, documentID: layer.documentID, layer: layer.name,
            revision: group.layer.revision, pageCount: pageCount, records: records, changed: changed)
        var deliveries: [@Sendable () -> Void] = []
        for (answer, answersAfter) in zip(answering, answersAfter) {
            deliveries.append(try await answer(answersAfter == nil ? nil : after))
        }
        var outcome = GroupOutcome(
            rows: records.takeUnflushed(), found: layer.revision, revision: group.layer.revision,
            pushes: group.pushes, events: [], changes: group.changes, deliveries: deliveries)
        if let shared = changed?.shared {
            // The commits' records are among those the answers share, which the change messages of
            // the commits may then take their JSON from.
            for index in outcome.changes.indices { outcome.changes[index].sharedRecords = shared }
            // What the answers made here derive from the records they share, each kind once.
            var derivations: [any RecordsDerivation.Type] = []
            for (job, after) in zip(jobs, answersAfter) where after != nil {
                guard let type = job.answer?.derivation,
                    !derivations.contains(where: { ObjectIdentifier($0) == ObjectIdentifier(type) })
                else { continue }
                derivations.append(type)
            }
            if !derivations.isEmpty { outcome.derivedBeforeDelivery = (shared, derivations) }
        }
        if remembering {
            var pushIDs = remembered?.pushIDs ?? [:]
            for client in jobs.clients { pushIDs[client] = .some(group.lastPushIDs[client]) }
            // Every record named and found was known if it changed after the known changes begin
            // (an absent one is not found).
            let namedOnlyKnown = changedSince.map { since in read.records.allSatisfy { $0.revision > since } } ?? false
            outcome.memory = LayerMemory(
                revision: group.layer.revision, pageCount: pageCount, changes: changed, pushIDs: pushIDs,
                namedOnlyKnownRecords: namedOnlyKnown)
        }
        if let revised = outcome.revised {
            outcome.events = [.revisionChanged(documentID: layer.documentID, layer: layer.name, revision: revised)]
        }
        return outcome
    }

    /// The records a commit wrote, each as it was last written in the commit, ordered by id (as
    /// sync answers order the records of one revision).
    static func lastWrites(_ applied: [StoredRecord]) -> [StoredRecord] {
        // The positions by id, each record's writes in the order they were made: the last of each
        // id is kept. Sorting positions moves less than sorting records.
        let order = applied.indices.sorted { (applied[$0].id, $0) < (applied[$1].id, $1) }
        var records: [StoredRecord] = []
        records.reserveCapacity(order.count)
        for (rank, position) in order.enumerated()
        where rank + 1 == order.count || applied[order[rank + 1]].id != applied[position].id {
            records.append(applied[position])
        }
        return records
    }

    /// One commit inside a group transaction, on the layer as the commits before it left it:
    /// 1. exactly once: a push the client sent before changes nothing again;
    /// 2. the decision, against the records as they are now;
    /// 3. the changes, with the rules every writer shares (``commit(_:to:in:onConditionFailure:now:records:)``);
    /// 4. the push id, revision and what the commit wrote kept for the group's end.
    private static func commit<Outcome: Sendable>(
        in transaction: any StorageTransaction,
        group: inout GroupCommit,
        push: ClientPush?,
        onConditionFailure: ConditionFailurePolicy,
        now: Date,
        deciding decide: @Sendable (LayerReader) async throws -> LayerDecision<Outcome>
    ) async throws -> (result: CommitResult, outcome: Outcome?) {
        let layer = group.layer
        let before = LayerReader(
            transaction: transaction, documentID: layer.documentID, layer: layer.name, revision: layer.revision,
            pageCount: group.pageCount, records: group.records)
        if let push {
            let last = group.lastPushIDs[push.client]
            if push.isRepeat(after: last) {
                let result = CommitResult(revision: layer.revision, applied: [], skipped: [], isDuplicatePush: true)
                return (result, nil)
            }
            if let problem = push.stepProblem(after: last) { throw problem }
        }
        let decision: LayerDecision<Outcome>
        do {
            decision = try await decide(before)
        } catch let error as StorageError where error.failsTheTransaction {
            throw error
        } catch let needsLock as GroupRecords.NeedsLayerLock {
            throw needsLock
        } catch {
            // The decision failed before anything was written: this commit fails alone.
            throw DecisionFailure(error: error)
        }
        let result = try await commit(
            decision.changes, to: layer, in: transaction, onConditionFailure: onConditionFailure, now: now,
            records: group.records)
        if result.revision > layer.revision {
            group.changes.append(
                LayerChangeSet(
                    documentID: layer.documentID, layer: layer.name, since: layer.revision, revision: result.revision,
                    records: lastWrites(result.applied)))
        }
        group.layer.revision = result.revision
        if let push { group.record(push, revision: result.revision) }
        return (result, decision.outcome)
    }

    /// What `decide` threw, which fails its own commit and not the others of its group.
    private struct DecisionFailure: Error {
        var error: any Error
    }

    /// Applies changes to a (locked) layer inside the caller's transaction:
    /// - each change's condition is checked against the record as the batch left it;
    /// - a put keeps the creator of a live record and its PDF object, and indexes a comment by
    ///   its thread root;
    /// - a delete leaves a tombstone (deleting what is not there changes nothing), and deleting
    ///   an annotation deletes the live comments of its thread, stored or put earlier in the batch;
    /// - when anything changed, every written record carries the layer's next revision.
    ///
    /// The layer's revision (``CommitResult/revision``) is for the caller to store, with the push
    /// ids, once for all the commits of its transaction
    /// (``StorageTransaction/finishCommits(documentID:layer:writing:revision:pushes:announcing:)``). The
    /// records are read through `records` (what the transaction read or wrote since the layer was
    /// locked is not read again) and written there: the caller writes them to the database
    /// (``GroupRecords/takeUnflushed()`` or ``GroupRecords/flush(to:documentID:layer:)``).
    static func commit(
        _ changes: [RecordChange],
        to layer: StoredLayer,
        in transaction: any StorageTransaction,
        onConditionFailure: ConditionFailurePolicy,
        now: Date,
        records: GroupRecords
    ) async throws -> CommitResult {
        let revision = layer.revision + 1
        let deletedIDs = changes.compactMap { change -> String? in
            if case .delete(let id, _) = change.operation { return id }
            return nil
        }
        // Everything the batch can touch, read once: the records it names, and the comments of
        // the threads it may delete; and whether the batch wrote each.
        let (known, unknown) = records.known(changes.map(\.recordID))
        let unread = Array(Set(unknown))
        let read =
            unread.isEmpty
            ? [] : try await transaction.records(documentID: layer.documentID, layer: layer.name, ids: unread)
        records.remember(read, lookedFor: unread)
        // Sized for every record the batch names at once: grown from empty, a dictionary hashes its
        // keys again at every doubling.
        var rows: [String: (row: RecordRow, isWritten: Bool)] = [:]
        rows.reserveCapacity(changes.count + read.count + known.count)
        for record in read + known.values {
            rows[record.id] = (RecordRow(record: record, threadRoot: threadRoot(of: record)), false)
        }
        if !deletedIDs.isEmpty {
            // The threads are found by their index in the database, which needs the writes so far.
            try await records.flush(to: transaction, documentID: layer.documentID, layer: layer.name)
            for comment in try await transaction.comments(
                documentID: layer.documentID, layer: layer.name, threadRoots: deletedIDs)
            where rows[comment.id] == nil {
                rows[comment.id] = (RecordRow(record: comment, threadRoot: threadRoot(of: comment)), false)
            }
        }

        var skipped: [SkippedChange] = []
        // The rows written, in order, and whether one record was written more than once.
        var written: [RecordRow] = []
        var writtenTwice = false
        func write(_ record: StoredRecord) {
            let row = RecordRow(record: record, threadRoot: threadRoot(of: record))
            if rows.updateValue((row, true), forKey: record.id)?.isWritten == true { writtenTwice = true }
            written.append(row)
        }
        func tombstone(of existing: StoredRecord, by user: String?) -> StoredRecord {
            StoredRecord(
                id: existing.id, kind: existing.kind, revision: revision, isDeleted: true, group: existing.group,
                createdBy: existing.createdBy, updatedBy: user, pdfObjectID: existing.pdfObjectID, content: Data(),
                updatedAt: now)
        }

        for change in changes {
            let existing = rows[change.recordID]?.row.record
            if let failure = check(change, against: existing) {
                switch onConditionFailure {
                case .abortBatch: throw failure
                case .skipChange:
                    skipped.append(SkippedChange(recordID: change.recordID, error: failure))
                    continue
                }
            }
            let isLive = existing.map { !$0.isDeleted } ?? false
            switch change.operation {
            case .put(let put):
                write(
                    StoredRecord(
                        id: put.id, kind: put.kind, revision: revision, group: put.group,
                        createdBy: isLive ? existing?.createdBy : put.user, updatedBy: put.user,
                        pdfObjectID: put.pdfObjectID ?? existing?.pdfObjectID, content: put.content, updatedAt: now))
            case .delete(_, let user):
                guard let existing, isLive else { continue }
                write(tombstone(of: existing, by: user))
                guard existing.kind == .annotation else { continue }
                let thread = rows.values.map(\.row).filter { $0.threadRoot == existing.id && !$0.record.isDeleted }
                for comment in thread.sorted(by: { $0.record.id < $1.record.id }) {
                    write(tombstone(of: comment.record, by: user))
                }
            }
        }

        guard !written.isEmpty else { return CommitResult(revision: layer.revision, applied: [], skipped: skipped) }
        // A record written twice in the batch is stored as it was last written.
        records.write(writtenTwice ? written.keepingLast(by: \.record.id) : written)
        return CommitResult(revision: revision, applied: written.map(\.record), skipped: skipped)
    }

    /// Why a change's condition fails against the record as it is, or `nil` if it holds.
    static func check(_ change: RecordChange, against existing: StoredRecord?) -> StorageError? {
        let isLive = existing.map { !$0.isDeleted } ?? false
        switch change.condition {
        case .none:
            return nil
        case .exists:
            return isLive
                ? nil
                : StorageError(.recordNotFound, "No record has the id '\(change.recordID)' on this layer.")
        case .absent:
            return isLive
                ? StorageError(
                    .recordExists,
                    "A record with the id '\(change.recordID)' already exists on this layer. Update it instead, or use another id."
                ) : nil
        case .notDeletedAfter(let base):
            if let existing, existing.isDeleted, existing.revision > base {
                return StorageError(
                    .recordDeleted,
                    "The record '\(change.recordID)' was deleted at revision \(existing.revision), after revision \(base)."
                )
            }
            return nil
        }
    }

    /// The `rootId` of a live comment, which indexes it in its thread; `nil` for other records.
    static func threadRoot(of record: StoredRecord) -> String? {
        guard record.kind == .comment, !record.isDeleted else { return nil }
        return (try? JSONValue(parsing: record.content))?["rootId"]?.stringValue
    }
}

/// A consistent view of one layer inside a write transaction, for deciding a batch of changes
/// against the records as they are at commit time, or for answering once the commits are written.
public struct LayerReader: Sendable {
    let transaction: any StorageTransaction
    let documentID: String
    let layer: String
    /// The layer's revision: before the batch when deciding, after the commits when answering.
    public let revision: Int64
    /// The document's page count, inside a commit (`nil` elsewhere).
    public let pageCount: Int?
    /// The records the transaction read and wrote so far, consulted first.
    private let known: GroupRecords?
    /// The records changed after some revision, for several readers: read once before the group's
    /// writes, with those writes (``ChangedRecords``).
    private let changed: ChangedRecords?

    init(
        transaction: any StorageTransaction, documentID: String, layer: String, revision: Int64,
        pageCount: Int? = nil, records: GroupRecords? = nil, changed: ChangedRecords? = nil
    ) {
        self.transaction = transaction
        self.documentID = documentID
        self.layer = layer
        self.revision = revision
        self.pageCount = pageCount
        known = records
        self.changed = changed
    }

    /// The records with the given ids (tombstones included), by id; ids without a record are absent.
    public func records(ids: [String]) async throws -> [String: StoredRecord] {
        guard !ids.isEmpty else { return [:] }
        guard let known else {
            let records = try await transaction.records(documentID: documentID, layer: layer, ids: ids)
            return Dictionary(records.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        }
        var (found, unknown) = known.known(ids)
        guard !unknown.isEmpty else { return found }
        let read = try await transaction.records(documentID: documentID, layer: layer, ids: unknown)
        known.remember(read, lookedFor: unknown)
        for record in read { found[record.id] = record }
        return found
    }

    /// The record with the given id (tombstones included), or `nil`.
    public func record(id: String) async throws -> StoredRecord? {
        try await records(ids: [id])[id]
    }

    /// The records (tombstones included) with a revision above the given one, by revision then id;
    /// after a commit, its own writes included.
    public func records(changedAfter revision: Int64) async throws -> [StoredRecord] {
        Array(try await changes(after: revision).records)
    }

    /// The records of ``records(changedAfter:)``, and, when they are the end of records that the
    /// readers of a group share (its answers), those: what the readers derive from them can then
    /// be derived once for all of them (``SharedRecords/derived(_:)``).
    public func changes(after revision: Int64) async throws -> (
        records: ArraySlice<StoredRecord>, shared: SharedRecords?
    ) {
        if let changed, changed.after <= revision {
            return (changed.shared.records[changed.index(after: revision)...], changed.shared)
        }
        try await known?.flush(to: transaction, documentID: documentID, layer: layer)
        return (
            ArraySlice(try await transaction.records(documentID: documentID, layer: layer, changedAfter: revision)),
            nil
        )
    }

    /// The last push id applied for a client on the layer, or `nil`.
    public func lastPushID(of client: ClientIdentity) async throws -> Int64? {
        try await transaction.lastPushID(documentID: documentID, layer: layer, client: client)
    }
}

/// The records (tombstones included) changed after a revision, by revision then id.
struct ChangedRecords: Sendable {
    var after: Int64
    /// The records, shared by the readers of the group.
    var shared: SharedRecords

    /// The records changed after `after` once a transaction wrote `written` (`ordered` when they
    /// are by revision then id), of which those of `rewritten` may have existed before it: the
    /// records read before it wrote them (`committed`, changed after `after`) but those it wrote
    /// again, then the transaction's writes.
    /// When `committed` are the records of `source` (a layer's memory) and the transaction wrote
    /// none of those kept, the records carry them as a run of `source`'s (``SharedRecords/Carried``).
    init(
        after: Int64, committedBefore committed: [StoredRecord], of source: SharedRecords? = nil,
        writtenSince written: [StoredRecord], ordered: Bool = false, rewriting rewritten: Set<String>
    ) {
        // Each record once: the committed ones (read in order, one each) the transaction did not
        // write again, then its writes, which all came after them: only those may need sorting.
        // Positions are sorted rather than records: a record is a dozen fields to move at every swap.
        // The committed records are by revision: those after `after` are their end.
        let changed = committed[(committed.firstIndex { $0.revision > after } ?? committed.endIndex)...]
        let newer = written.indices.filter { written[$0].revision > after }
        let order =
            ordered
            ? newer
            : newer.sorted { (written[$0].revision, written[$0].id) < (written[$1].revision, written[$1].id) }
        // Made at its final size and filled once: a copy of the committed records that then grew
        // for the writes would copy them all again (a group's answers share about a thousand).
        var records: [StoredRecord] = []
        records.reserveCapacity(changed.count + order.count)
        if rewritten.isEmpty {
            records.append(contentsOf: changed)
        } else {
            for record in changed where !rewritten.contains(record.id) { records.append(record) }
        }
        // Unless one was rewritten, those kept are the end of the source's records.
        let carried = source.flatMap { [kept = records.count] source -> SharedRecords.Carried? in
            guard source.records.count == committed.count, kept == changed.count else { return nil }
            return SharedRecords.Carried(source: source, offset: changed.startIndex, count: kept)
        }
        for position in order { records.append(written[position]) }
        self.after = after
        shared = SharedRecords(records, carrying: carried)
    }

    /// The records changed after `after`, by revision then id, which may begin with a run of
    /// another's (`carried`).
    init(after: Int64, records: [StoredRecord], carrying carried: SharedRecords.Carried? = nil) {
        self.after = after
        shared = SharedRecords(records, carrying: carried)
    }

    /// The index of the first record changed after `revision` (the end when none was).
    func index(after revision: Int64) -> Int {
        shared.index(after: revision)
    }
}

/// Records that several readers take parts of (the changes that the answers of a group's
/// commits carry), with what the readers derive from them, made once for all of them.
///
/// The records of one group are mostly those of the group before it (the answers of both carry
/// the changes of the same last revisions), so the records may begin with a run of another's
/// (``Carried``): what is derived from these then extends what was derived from that one
/// (``RecordsDerivation``), and each record is derived from once, not once for every group whose
/// answers carry it.
public final class SharedRecords: Sendable {
    /// The records, by revision then id.
    public let records: [StoredRecord]
    private let state: Mutex<State>

    private struct State {
        var derivations: [ObjectIdentifier: Derivation] = [:]
        /// The run of another's records these begin with, until a value is derived (the other's
        /// records are then let go).
        var carried: Carried?
    }

    private enum Derivation {
        case underWay
        case done(any Sendable)
    }

    /// `records[0..<count]` are `source.records[offset..<offset + count]`.
    struct Carried: Sendable {
        var source: SharedRecords
        var offset: Int
        var count: Int
    }

    /// How many others a chain of ``Carried`` runs may hold. Records let go of their run once they
    /// derived a value, and a derivation derives the values of the chain before it first, so a
    /// chain grows only while the answers of several groups in a row have not written their JSON
    /// yet (the answers of a group are written after it commits, while the next groups run), or
    /// never will (no answer carries the records: the clients have collaboration permissions, or
    /// the group had no answers). Each holds its records, so the chain is cut at this length.
    static let maximumCarriedChain = 4

    /// Records that may begin with a run of another's (`carried`).
    init(_ records: [StoredRecord], carrying carried: Carried? = nil) {
        self.records = records
        var link = carried.flatMap { run in
            run.count > 0 && run.count <= records.count && run.offset >= 0
                && run.offset + run.count <= run.source.records.count ? run : nil
        }
        // Through records that derived nothing and carry the run from others (what a layer's
        // memory keeps of a group's changes): to those others.
        if let through = link, let inner = through.source.carriedForAll(),
            through.offset + through.count <= inner.count
        {
            link = Carried(source: inner.source, offset: inner.offset + through.offset, count: through.count)
        }
        if let through = link, through.source.carriedChain() >= Self.maximumCarriedChain { link = nil }
        state = Mutex(State(carried: link))
    }

    /// The run carried from another, when nothing was derived here yet.
    private func carriedForAll() -> Carried? {
        state.withLock { $0.derivations.isEmpty ? $0.carried : nil }
    }

    /// How many others the records keep through their ``Carried`` runs.
    private func carriedChain() -> Int {
        var chain = 0
        var next = state.withLock(\.carried)
        while let carried = next {
            chain += 1
            next = carried.source.state.withLock(\.carried)
        }
        return chain
    }

    /// The index of the first record changed after `revision` (the end when none was).
    func index(after revision: Int64) -> Int {
        // By revision: the records after `revision` are the end of them.
        var (low, high) = (records.startIndex, records.endIndex)
        while low < high {
            let middle = (low + high) / 2
            if records[middle].revision > revision { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// Whether a value of `type` was derived from the records already (a reader that asks now gets
    /// it without deriving).
    public func hasDerived<Value: RecordsDerivation>(_ type: Value.Type) -> Bool {
        state.withLock { state in
            if case .done = state.derivations[ObjectIdentifier(type)] { true } else { false }
        }
    }

    /// The records that deriving a value of `type` would go through: none once it is derived; the
    /// ones after a carried run when the value of the run's source is derived; else all.
    public func recordsToDerive<Value: RecordsDerivation>(_ type: Value.Type) -> ArraySlice<StoredRecord> {
        let key = ObjectIdentifier(type)
        let carried = state.withLock { state -> Carried?? in
            if case .done = state.derivations[key] { return .none }
            return .some(state.carried)
        }
        guard let carried else { return records[records.endIndex...] }
        guard let run = carried, run.source.hasDerived(type) else { return records[...] }
        return records[run.count...]
    }

    /// The work of deriving a value of `type` now, as the sync JSON of the records it writes
    /// (``StoredRecord/syncJSONSizeEstimate(of:)``): none once it is derived; when a carried run's
    /// source has no value yet, the work of deriving the source's first, and the records after the
    /// run (those of the run are taken from the source's value).
    func derivingWork<Value: RecordsDerivation>(_ type: Value.Type) -> Int {
        let toDerive = recordsToDerive(type)
        guard !toDerive.isEmpty, let run = state.withLock(\.carried), !run.source.hasDerived(type) else {
            return StoredRecord.syncJSONSizeEstimate(of: toDerive)
        }
        return StoredRecord.syncJSONSizeEstimate(of: records[run.count...]) + run.source.derivingWork(type)
    }

    /// Derives a value of each of `types` now: called by a group after its commit, before it
    /// delivers its answers, which then all find it made (rather than each derive it at the same
    /// time on its own event loop), as do the change messages of its commits. Large work runs on
    /// NIO's pool for blocking work (``LargeWork/run(writing:_:)``), and is awaited. A value whose records carry a
    /// run of another's that has none yet is left to the readers: it would derive the other's
    /// value first, from all of the other's records.
    func deriveBeforeDelivery(_ types: [any RecordsDerivation.Type]) async {
        func derive<Value: RecordsDerivation>(_ type: Value.Type) async {
            if let carried = state.withLock(\.carried), !carried.source.hasDerived(type) { return }
            _ = try? await LargeWork.run(writing: derivingWork(type)) { self.derived(type) }
        }
        for type in types { await derive(type) }
    }

    /// The value of its type derived from the records: the first reader that asks makes it, and
    /// the readers after get the same. A reader that asks while the first is still deriving
    /// derives for itself rather than wait (readers run on event loops).
    public func derived<Value: RecordsDerivation>(_ type: Value.Type) -> Value {
        let key = ObjectIdentifier(type)
        let (made, derivesForAll, carried) = state.withLock { state -> (Value?, Bool, Carried?) in
            switch state.derivations[key] {
            case .done(let value): return (value as? Value, false, nil)
            case .underWay: return (nil, false, state.carried)
            case nil:
                state.derivations[key] = .underWay
                return (nil, true, state.carried)
            }
        }
        if let made { return made }
        // The run's value as the records it comes from have it, derived there first if it was not
        // yet: their own readers (a group's answers) would derive it anyway, and then find it made.
        let extending = carried.map { run in (value: run.source.derived(type), offset: run.offset, count: run.count) }
        let value = Value(records, extending: extending)
        if derivesForAll {
            state.withLock { state in
                state.derivations[key] = .done(value)
                state.carried = nil
            }
        }
        return value
    }
}

/// A value derived from ``SharedRecords`` that can extend the value of another's records.
public protocol RecordsDerivation: Sendable {
    /// The value of `records`, of which the first `extending.count` are those of the records
    /// `extending.value` was derived from, from `extending.offset` on.
    init(_ records: [StoredRecord], extending: (value: Self, offset: Int, count: Int)?)
}

extension [LayerCommitQueue.Job] {
    /// The records the jobs' decisions read, each once, in the order the jobs name them.
    var reading: [String] {
        let named = reduce(0) { $0 + $1.reading.count }
        var seen: Set<String> = []
        seen.reserveCapacity(named)
        var ids: [String] = []
        ids.reserveCapacity(named)
        for job in self {
            for id in job.reading where seen.insert(id).inserted { ids.append(id) }
        }
        return ids
    }

    /// The clients of the jobs' pushes, each once.
    var clients: [ClientIdentity] { [ClientIdentity](Set(compactMap { $0.push?.client })) }
}
