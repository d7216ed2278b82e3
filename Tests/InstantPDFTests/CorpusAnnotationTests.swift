import Foundation
import InstantJSON
import InstantPDF
import Testing

@Suite("Corpus annotations as Instant JSON", .corpus, .heavyWork)
struct CorpusAnnotationTests {
    /// Every record made from a corpus file is valid Instant JSON, and the number of records
    /// agrees with qpdf's count of `/Annots` entries (popups excluded: they fold into their parent).
    @Test func recordsAreValidAndCountsAgree() throws {
        var problems: [String] = []
        var compared = 0
        for entry in Corpus.entries where entry.open == "ok" && entry.encrypted == false {
            guard let document = try? PDFDocument(data: Corpus.data(entry)) else { continue }
            let records = document.originalRecords()
            for error in InstantDocumentJSON.decodeProblems(records) {
                problems.append("\(entry.path): invalid record \(error)")
            }
            guard let subtypes = entry.subtypes, CorpusDifferences.annotationCount[entry.path] == nil else { continue }
            let expected = subtypes.filter { $0.key != "/Popup" }.values.reduce(0, +)
            let actual = records.annotations.count + records.comments.count
            compared += 1
            if actual != expected {
                problems.append(
                    "\(entry.path): \(actual) records, qpdf counts \(expected) non-popup annotations \(subtypes)")
            }
        }
        #expect(problems.isEmpty, "\(problems.count) problems:\n\(problems.joined(separator: "\n"))")
        #expect(compared > 300)
    }
}

extension InstantDocumentJSON {
    /// The problems strict decoding finds in the serialized document.
    static func decodeProblems(_ document: InstantDocumentJSON) -> [InstantJSONError] {
        (try? decode(document.serialized(), mode: .lenient).skipped) ?? []
    }
}
