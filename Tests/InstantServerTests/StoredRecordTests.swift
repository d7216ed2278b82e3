import Foundation
import Testing

@testable import InstantServer

/// A stored record is a value, though copies share their fields until one of them changes.
@Suite("Stored records as values")
struct StoredRecordTests {
    static let record = StoredRecord(
        id: "note-1", kind: .annotation, revision: 4, group: "reviewers", createdBy: "alice", updatedBy: "bob",
        pdfObjectID: 12, content: Data(#"{"type":"pspdfkit/note"}"#.utf8),
        updatedAt: Date(timeIntervalSince1970: 1_700_000_000))

    @Test func changingACopyLeavesTheOriginalAsItWas() {
        let original = Self.record
        var copy = original
        copy.id = "note-2"
        copy.kind = .comment
        copy.revision = 5
        copy.isDeleted = true
        copy.group = nil
        copy.createdBy = "carol"
        copy.updatedBy = nil
        copy.pdfObjectID = nil
        copy.content = Data()
        copy.updatedAt = Date(timeIntervalSince1970: 0)
        #expect(original == Self.record)
        #expect(original.id == "note-1" && original.kind == .annotation && original.revision == 4)
        #expect(!original.isDeleted && original.group == "reviewers" && original.createdBy == "alice")
        #expect(original.updatedBy == "bob" && original.pdfObjectID == 12 && !original.content.isEmpty)
        #expect(copy.id == "note-2" && copy.kind == .comment && copy.revision == 5 && copy.isDeleted)
        #expect(copy.group == nil && copy.createdBy == "carol" && copy.updatedBy == nil && copy.pdfObjectID == nil)
        #expect(copy.content.isEmpty && copy.updatedAt == Date(timeIntervalSince1970: 0))
        #expect(copy != original)
    }

    @Test func changingARecordInACollectionLeavesItsCopiesAsTheyWere() {
        var records = [Self.record, Self.record]
        var byID = ["note-1": Self.record]
        let kept = records
        records[0].revision += 1
        records[1].content.append(contentsOf: Data(" ".utf8))
        byID["note-1"]?.group = "editors"
        #expect(kept == [Self.record, Self.record])
        #expect(records[0].revision == 5 && records[0].content == Self.record.content)
        #expect(records[1].content.count == Self.record.content.count + 1 && records[1].revision == 4)
        #expect(byID["note-1"]?.group == "editors" && Self.record.group == "reviewers")
    }

    @Test func recordsWithEqualFieldsAreEqualAndHashAlike() {
        var rebuilt = StoredRecord(
            id: "note-1", kind: .annotation, revision: 3, group: "reviewers", createdBy: "alice", updatedBy: "bob",
            pdfObjectID: 12, content: Self.record.content, updatedAt: Self.record.updatedAt)
        #expect(rebuilt != Self.record)
        rebuilt.revision += 1
        #expect(rebuilt == Self.record)
        #expect(Set([rebuilt, Self.record]).count == 1)
    }
}
