import Foundation
import Testing

@testable import InstantServer

@Suite("What a node remembers of a layer")
struct LayerMemoryTests {
    /// A record of `bytes` bytes of content written at `revision`.
    static func record(_ id: String, revision: Int64, bytes: Int = 10) -> StoredRecord {
        StoredRecord(
            id: id, kind: .annotation, revision: revision, isDeleted: false, content: Data(count: bytes),
            updatedAt: Date(timeIntervalSince1970: 0))
    }

    static let changes = ChangedRecords(
        after: 2,
        records: [
            record("a", revision: 3), record("b", revision: 3), record("c", revision: 4, bytes: 30),
            record("d", revision: 5), record("e", revision: 5),
        ])

    @Test func whatFitsIsKeptInWholeRevisionsFromTheNewest() {
        // Each record counts its content and an allowance of 160 bytes.
        let all = Self.changes.keeping(revisionsAfter: 0, bytes: 10_000).changes
        #expect(all.after == 2)
        #expect(all.shared.records.map(\.id) == ["a", "b", "c", "d", "e"])

        // Revision 5 (340 bytes) and revision 4 (190) fit in 600; revision 3 (340) would not.
        let newest = Self.changes.keeping(revisionsAfter: 0, bytes: 600).changes
        #expect(newest.after == 3)
        #expect(newest.shared.records.map(\.id) == ["c", "d", "e"])

        // Only the revisions after the floor.
        let recent = Self.changes.keeping(revisionsAfter: 4, bytes: 10_000).changes
        #expect(recent.after == 4)
        #expect(recent.shared.records.map(\.id) == ["d", "e"])

        // The newest revision alone is larger than allowed: nothing is kept, and the changes known
        // start after it.
        let none = Self.changes.keeping(revisionsAfter: 0, bytes: 300).changes
        #expect(none.after == 5)
        #expect(none.shared.records.isEmpty)
    }

    @Test func itAnswersOnlyWhatItReachesBackTo() {
        let memory = LayerMemory(
            revision: 5, pageCount: 1, changes: Self.changes, pushIDs: [ClientIdentity(userID: "u", clientID: "c"): 7],
            namedOnlyKnownRecords: true)
        #expect(memory.changes(reachingBackTo: 2)?.after == 2)
        #expect(memory.changes(reachingBackTo: 4)?.after == 2)
        #expect(memory.changes(reachingBackTo: 1) == nil)
        #expect(memory.changes(reachingBackTo: nil)?.after == 2)

        let known = ClientIdentity(userID: "u", clientID: "c")
        let new = ClientIdentity(userID: "u", clientID: "d")
        let withNone = ClientIdentity(userID: nil, clientID: "c")
        var remembered = memory
        remembered.pushIDs[withNone] = .some(nil)
        #expect(remembered.unknown([known, new, withNone]) == [new])
        #expect(remembered.adding(to: [new: 3], of: [known, new, withNone]) == [known: 7, new: 3])
        // A token with an empty user id is in the anonymous scope: the same client as `withNone`.
        #expect(remembered.unknown([ClientIdentity(userID: "", clientID: "c")]).isEmpty)
    }

    @Test func itHoldsOnlyForTheVersionItWrote() {
        var memory = LayerMemory(revision: 5, pageCount: 1, changes: nil, pushIDs: [:], namedOnlyKnownRecords: true)
        let layer = StoredLayer(documentID: "d", name: "", revision: 5)
        // Not written yet: no version to hold by.
        #expect(!memory.holds(for: LockedLayer(layer: layer, pageCount: 1, version: "")))
        memory.version = "42"
        #expect(memory.holds(for: LockedLayer(layer: layer, pageCount: 1, version: "42")))
        #expect(!memory.holds(for: LockedLayer(layer: layer, pageCount: 1, version: "0")))
        #expect(!memory.holds(for: LockedLayer(layer: layer, pageCount: 1, version: nil)))
        let later = StoredLayer(documentID: "d", name: "", revision: 6)
        #expect(!memory.holds(for: LockedLayer(layer: later, pageCount: 1, version: "42")))
    }

    @Test func aGroupReadsNothingWhenTheMemoryHasAllItNeeds() {
        let known = ClientIdentity(userID: "u", clientID: "c")
        var memory = LayerMemory(
            revision: 5, pageCount: 3, changes: Self.changes, pushIDs: [known: 7], namedOnlyKnownRecords: true)
        func plan(_ clients: [ClientIdentity], changesAfter: Int64?) -> GroupReadPlan {
            GroupReadPlan(remembering: memory, clients: clients, changesAfter: changesAfter)
        }
        // Not written yet: nothing to check the write by.
        #expect(plan([known], changesAfter: 2).withoutReading(["a"], documentID: "d", layer: "l") == nil)
        memory.version = "42"

        let unread = plan([known], changesAfter: 3).withoutReading(["c", "x", "a", "y"], documentID: "d", layer: "l")
        #expect(unread?.snapshot.layer == StoredLayer(documentID: "d", name: "l", revision: 5))
        #expect(unread?.snapshot.pageCount == 3)
        #expect(unread?.snapshot.version == "42")
        // The records the memory's changes have are taken from there; the others are assumed absent,
        // which the write checks.
        #expect(unread?.snapshot.reads.records.map(\.id).sorted() == ["a", "c"])
        #expect(unread?.assumedAbsent == ["x", "y"])
        #expect(unread?.snapshot.reads.changed.isEmpty == true, "the changes are the memory's, added later")

        // A client the memory does not know, or answers that need changes before the memory's: a read.
        let stranger = ClientIdentity(userID: "u", clientID: "other")
        #expect(plan([known, stranger], changesAfter: 3).withoutReading(["a"], documentID: "d", layer: "l") == nil)
        #expect(plan([known], changesAfter: 1).withoutReading(["a"], documentID: "d", layer: "l") == nil)
        // The group before named older records (a form being filled): most likely this one does too.
        memory.namedOnlyKnownRecords = false
        #expect(plan([known], changesAfter: 3).withoutReading(["a"], documentID: "d", layer: "l") == nil)
        // No changes known at all: nothing says what is recent.
        memory.namedOnlyKnownRecords = true
        memory.changes = nil
        #expect(plan([known], changesAfter: nil).withoutReading(["a"], documentID: "d", layer: "l") == nil)
        // No memory at all: a read.
        let forgotten = GroupReadPlan(remembering: nil, clients: [], changesAfter: nil)
        #expect(forgotten.withoutReading([], documentID: "d", layer: "l") == nil)
    }

    @Test func aLayerKeepsAtMostItsLimits() {
        // 64 revisions at most.
        let many = ChangedRecords(after: 0, records: (1...100).map { Self.record("r\($0)", revision: Int64($0)) })
        let memory = LayerMemory(revision: 100, pageCount: 1, changes: many, pushIDs: [:], namedOnlyKnownRecords: true)
        #expect(memory.changes?.after == 100 - LayerMemory.maximumRevisions)
        #expect(memory.changes?.shared.records.count == Int(LayerMemory.maximumRevisions))
        // Too many clients: none are kept.
        let clients = Dictionary(
            uniqueKeysWithValues: (0...LayerMemory.maximumClients).map {
                (ClientIdentity(userID: nil, clientID: "c\($0)"), Int64?.some(1))
            })
        #expect(
            LayerMemory(revision: 1, pageCount: 1, changes: nil, pushIDs: clients, namedOnlyKnownRecords: true).pushIDs
                .isEmpty)
    }

    @Test func aMemoryIsTakenForAMinuteAfterItsGroup() {
        let queue = LayerCommitQueue()
        let key = LayerCommitQueue.LayerKey(documentID: "d", layer: "")
        let noted = Date(timeIntervalSince1970: 1_000_000)
        var memory = LayerMemory(revision: 5, pageCount: 1, changes: nil, pushIDs: [:], namedOnlyKnownRecords: true)
        memory.version = "42"
        queue.noteLastGroup(.init(revision: 5, foundAsLeft: true, memory: memory, notedAt: noted), on: key)
        let lifetime = LayerCommitQueue.memoryLifetime
        #expect(queue.lastGroup(on: key, at: noted + lifetime)?.memory?.version == "42")
        // Later, the next group reads from the database, but still knows what the last one left.
        let later = queue.lastGroup(on: key, at: noted + lifetime + 1)
        #expect(later?.memory == nil)
        #expect(later?.revision == 5)
        #expect(later?.foundAsLeft == true)
        // A clock set back by more than the lifetime does not keep it either.
        #expect(queue.lastGroup(on: key, at: noted - lifetime - 1)?.memory == nil)
        #expect(queue.lastGroup(on: LayerCommitQueue.LayerKey(documentID: "d", layer: "other"), at: noted) == nil)
    }
}
