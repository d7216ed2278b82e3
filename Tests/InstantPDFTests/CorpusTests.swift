import Foundation
import InstantPDF
import Testing

/// The real-world corpus in `../shared/pdf-corpus`, with qpdf's independent reading in MANIFEST.jsonl.
enum Corpus {
    struct Entry: Decodable, Sendable, CustomTestStringConvertible {
        var path: String
        var open: String
        var encrypted: Bool?
        var pages: Int?
        var annots: Int?
        var subtypes: [String: Int]?
        var reconstructed: Bool?
        var testDescription: String { path }
    }

    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/pdf-corpus")

    static let entries: [Entry] = {
        guard let text = try? String(contentsOf: directory.appendingPathComponent("MANIFEST.jsonl"), encoding: .utf8)
        else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONDecoder().decode(Entry.self, from: Data($0.utf8)) }
    }()

    static func data(_ entry: Entry) throws -> Data {
        try data(path: entry.path)
    }

    static func data(path: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(path))
    }
}

@Suite("Real-world corpus")
struct CorpusTests {
    @Test func corpusIsPresent() {
        #expect(Corpus.entries.count == 400, "expected ../shared/pdf-corpus/MANIFEST.jsonl beside the package")
    }

    /// Every file opens or fails with a PDFError (never a crash); where qpdf opened an unencrypted
    /// file, our page count agrees with it.
    @Test func everyFileOpensOrFailsClearly() throws {
        var mismatches: [String] = []
        var opened = 0
        for entry in Corpus.entries {
            do {
                // Opened as the command-line tools open files: mapped into memory.
                let document = try PDFDocument(contentsOf: Corpus.directory.appendingPathComponent(entry.path))
                opened += 1
                if entry.open == "ok", entry.encrypted == false, let pages = entry.pages, document.pageCount != pages,
                    !CorpusDifferences.pageCount.keys.contains(entry.path)
                {
                    mismatches.append("\(entry.path): \(document.pageCount) pages, qpdf says \(pages)")
                }
            } catch {
                if entry.open == "ok", entry.encrypted == false,
                    !CorpusDifferences.openFailures.keys.contains(entry.path)
                {
                    mismatches.append("\(entry.path): failed (\(error)), qpdf opened it")
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) differences:\n\(mismatches.joined(separator: "\n"))")
        #expect(opened > 300)
    }

    /// A file opened by path (mapped into memory) reads exactly as the same bytes in memory.
    @Test func aMappedFileReadsLikeItsBytes() throws {
        let annotated = Corpus.entries.filter { ($0.annots ?? 0) > 0 && $0.encrypted != true }.prefix(25)
        #expect(annotated.count == 25)
        for entry in annotated {
            let url = Corpus.directory.appendingPathComponent(entry.path)
            guard let inMemory = try? PDFDocument(data: Data(contentsOf: url)) else { continue }
            let mapped = try PDFDocument(contentsOf: url)
            #expect(mapped.pageCount == inMemory.pageCount, "\(entry.path)")
            #expect(mapped.originalRecords() == inMemory.originalRecords(), "\(entry.path)")
        }
    }

    @Test func aMissingOrEmptyFileFailsClearly() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pdf-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("missing.pdf")
        #expect {
            try PDFDocument(contentsOf: missing)
        } throws: { error in
            (error as? CocoaError)?.code == .fileReadNoSuchFile && "\(error)".contains("missing.pdf")
        }
        let empty = directory.appendingPathComponent("empty.pdf")
        try Data().write(to: empty)
        #expect {
            try PDFDocument(contentsOf: empty)
        } throws: { error in
            (error as? PDFError)?.code == .notAPDF
        }
    }
}

/// Files where our reading differs from qpdf's, each with the reason.
enum CorpusDifferences {
    static let pageCount: [String: String] = [
        "pdfium/testing/resources/bug_481363.pdf":
            "The page object is written `<< << /Type /Page … >> >>`; we skip the stray `<<` and recover the page, "
            + "qpdf rejects the object and reports no page."
    ]
    static let openFailures: [String: String] = [:]
    static let annotationCount: [String: String] = [
        "pdfium/testing/resources/annotiter.pdf":
            "The same widget objects are listed in the /Annots of several pages; qpdf counts each listing, "
            + "we make one record per object (on the first page that lists it).",
        "pdfium/testing/resources/annots.pdf":
            "Page 2 lists two links of page 1 again; one record per annotation object.",
        "pdfium/testing/resources/bad_annots_entry.pdf":
            "The /Annots entry is not a dictionary; qpdf counts it as `<nondict>`, there is no annotation to import.",
        "pdfium/testing/resources/bug_664284.pdf":
            "The /Annots entry is not a dictionary; qpdf counts it as `<nondict>`, there is no annotation to import.",
    ]

}
