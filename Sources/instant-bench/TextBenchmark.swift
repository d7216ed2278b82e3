import ArgumentParser
import Foundation
import InstantTesting

/// Reads the text of every page of a directory of PDFs with InstantPDF and with `pdftotext`, and
/// reports how far the words agree and the time per page of each.
struct TextBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "text",
        abstract: "Page text: agreement of the words with pdftotext -bbox, and time per page.",
        discussion: """
            Every PDF under the directory (e.g. ../shared/pdf-corpus) that both open is read whole \
            by each; pdftotext runs once per file, so its time includes starting the process.
            """
    )

    @Argument(help: "The directory of PDFs (searched recursively).")
    var directory: String

    func run() throws {
        guard PopplerText.isAvailable else {
            print("pdftotext not found: install poppler-utils to compare")
            throw ExitCode.failure
        }
        let root = URL(fileURLWithPath: directory)
        let files =
            FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension.lowercased() == "pdf" }
            .sorted { $0.path < $1.path } ?? []
        let agreement = try TextAgreement.measure(files)
        print(agreement.summary)
        let pages = Double(max(agreement.pagesRead, 1))
        print(
            String(
                format: "time per page: InstantPDF %.2f ms, pdftotext %.2f ms (%d pages of %d files read by both)",
                agreement.ourSeconds * 1000 / pages, agreement.theirSeconds * 1000 / pages, agreement.pagesRead,
                agreement.files.count))
    }
}
