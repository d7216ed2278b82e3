/// Which changes the answer of a commit carries, so that its group transaction reads them once
/// for all its answers (``InstantStorage/apply(documentID:layer:push:reading:deciding:answerCarries:answering:)``):
/// the records changed after ``after``, the revision the client has, when the layer is at most
/// ``withinRevisions`` past it. A client further behind, or ahead of the layer (a revision the
/// layer no longer has, after it was deleted and created again), is answered after the commit, so
/// that its larger read does not hold up the layer's group.
public struct AnsweredChanges: Sendable, Hashable {
    /// The revision after which the answer carries the changed records.
    public var after: Int64
    /// How many revisions the layer may be past ``after`` for the group transaction to make the
    /// answer.
    public var withinRevisions: Int64
    /// What the answer derives from the records that the answers of its group share
    /// (``SharedRecords``), if anything: the group derives it once, after it committed and before
    /// it delivers any answer (``SharedRecords/deriveBeforeDelivery(_:)``; unless the records carry
    /// those of a group before that has none made yet). So the answers do not each derive it at
    /// the same time, and the change messages of the group's commits take it too.
    public var derivation: (any RecordsDerivation.Type)?

    public init(after: Int64, withinRevisions: Int64 = .max, derivation: (any RecordsDerivation.Type)? = nil) {
        self.after = after
        self.withinRevisions = withinRevisions
        self.derivation = derivation
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.after == rhs.after && lhs.withinRevisions == rhs.withinRevisions
            && lhs.derivation.map(ObjectIdentifier.init) == rhs.derivation.map(ObjectIdentifier.init)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(after)
        hasher.combine(withinRevisions)
        hasher.combine(derivation.map(ObjectIdentifier.init))
    }

    /// The revision after which the group reads the answer's changes when it finds the layer at
    /// `revision`; `nil` when the answer is made after the commit.
    func readsChangesAfter(layerAt revision: Int64) -> Int64? {
        after <= revision ? readsChangesAfter(layerAtLeast: revision) : nil
    }

    /// The revision after which a group that has not read the layer yet, and expects it at
    /// `revision` or later, reads the answer's changes: ``after``, unless the layer at `revision`
    /// is already too far past it for the group to answer.
    func readsChangesAfter(layerAtLeast revision: Int64) -> Int64? {
        let (behind, overflow) = revision.subtractingReportingOverflow(after)
        return !overflow && behind <= withinRevisions ? after : nil
    }
}
