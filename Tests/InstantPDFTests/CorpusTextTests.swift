import Foundation
import InstantJSON
import InstantPDF
import InstantTesting
import Testing

/// The words of the corpus, compared with what `pdftotext -bbox` (Poppler) finds.
@Suite("Page text on the corpus", .heavyWork)
struct CorpusTextTests {
    @Test(.corpus, .enabled(if: PopplerText.isAvailable, "needs pdftotext (apt-get install poppler-utils)"))
    func wordsAgreeWithPdftotext() throws {
        let agreement = try TextAgreement.measure(
            Corpus.entries.map { Corpus.directory.appendingPathComponent($0.path) })
        print(agreement.summary)
        for file in agreement.files.sorted(by: { $0.missed > $1.missed }).prefix(25) {
            print("  \(file.path): \(file.matched)/\(file.theirs) matched, ours \(file.ours)")
        }
        #expect(agreement.theirs > 1000)
        // 95.9% when this was written (docs/BENCHMARKS.md); a drop below 90% is a regression.
        #expect(agreement.share >= 0.9, "\(agreement.summary)")
    }
}
