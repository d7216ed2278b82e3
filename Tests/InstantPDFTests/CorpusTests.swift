import Foundation
import InstantPDF
import InstantTesting
import Testing

@Suite("Real-world corpus", .heavyWork)
struct CorpusTests {
    /// The manifest lists the 400 files, so the corpus tests below read the whole corpus.
    @Test(.corpus) func corpusIsComplete() {
        #expect(Corpus.entries.count == 400, "\(Corpus.manifest.path) lists \(Corpus.entries.count) files")
    }

    /// Every file opens or fails with a PDFError (never a crash); where qpdf opened an unencrypted
    /// file, our page count agrees with it.
    @Test(.corpus) func everyFileOpensOrFailsClearly() throws {
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

    /// Files qpdf cannot open but MuPDF and Poppler both open with the same page count: we read
    /// that many pages too (or the difference is listed with its reason).
    @Test(.corpus, .enabled(if: OtherReaders.areInstalled, "needs mutool and pdfinfo (mupdf-tools, poppler-utils)"))
    func filesOtherReadersOpenHaveTheirPages() throws {
        var checked = 0
        var mismatches: [String] = []
        for entry in Corpus.entries where entry.open.hasPrefix("fail") {
            let url = Corpus.directory.appendingPathComponent(entry.path)
            guard let count = try OtherReaders.pageCount(of: url), count > 0 else { continue }
            checked += 1
            let ours = (try? PDFDocument(contentsOf: url))?.pageCount
            if ours != count, CorpusDifferences.recoveredPageCount[entry.path] == nil {
                mismatches.append(
                    "\(entry.path): \(ours.map(String.init) ?? "not opened"), mutool and pdfinfo say \(count)")
            }
        }
        #expect(checked >= 4)
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
    }

    /// A file opened by path (mapped into memory) reads exactly as the same bytes in memory.
    @Test(.corpus) func aMappedFileReadsLikeItsBytes() throws {
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
    /// Files qpdf cannot open, where MuPDF and Poppler agree on a page count that we do not read.
    static let recoveredPageCount: [String: String] = [:]
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

/// MuPDF's and Poppler's page counts of a file, for files qpdf cannot open.
enum OtherReaders {
    static let areInstalled: Bool = {
        let mutool = try? ChildProcess.runBlocking("mutool", ["-v"], includingErrors: true)
        let pdfinfo = try? ChildProcess.runBlocking("pdfinfo", ["-v"], includingErrors: true)
        return mutool != nil && pdfinfo?.status == 0
    }()

    /// The page count both readers give, or `nil` when either fails or they differ.
    static func pageCount(of url: URL) throws -> Int? {
        func pages(_ text: String) -> Int? {
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Pages:") }) else { return nil }
            return Int(line.dropFirst("Pages:".count).trimmingCharacters(in: .whitespaces))
        }
        let mutool = try ChildProcess.runBlocking("mutool", ["info", url.path], includingErrors: true)
        let pdfinfo = try ChildProcess.runBlocking("pdfinfo", [url.path])
        guard let first = pages(mutool.output), pdfinfo.status == 0, let second = pages(pdfinfo.output), first == second
        else { return nil }
        return first
    }
}
