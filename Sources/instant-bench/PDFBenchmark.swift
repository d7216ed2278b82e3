import ArgumentParser
import Foundation
import InstantPDF

/// Opens a large PDF and enumerates its annotations as Instant JSON, beside `mutool` doing the
/// same walk over pages and annotations when it is installed.
struct PDFBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pdf",
        abstract: "PDF open and annotation enumeration times.",
        discussion: """
            Build the input from the corpus with qpdf, e.g. 1,000 pages of annotated files:
            qpdf --empty --pages <annotated corpus files…> -- big.pdf
            """
    )

    @Argument(help: "The PDF to read.")
    var file: String

    @Option(help: "Timed repetitions of each step (the best one is reported).")
    var repetitions = 5

    func run() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: file))
        print(String(format: "%@: %.1f MB", file, Double(data.count) / 1_000_000))

        func measure(_ name: String, _ body: () throws -> String) rethrows {
            var best = Double.infinity
            var result = ""
            for _ in 0..<repetitions {
                let start = DispatchTime.now().uptimeNanoseconds
                result = try body()
                best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
            }
            print(
                "\(name.padding(toLength: 52, withPad: " ", startingAt: 0)) \(String(format: "%8.1f ms", best))  \(result)"
            )
        }

        // Files are opened as the server and the command-line tool open them: mapped, not read.
        let url = URL(fileURLWithPath: file)
        try measure("open + page count + pdfId") {
            let document = try PDFDocument(contentsOf: url)
            return "\(document.pageCount) pages, pdfId \(document.pdfId == nil ? "absent" : "present")"
        }
        try measure("open + every annotation and form value as Instant JSON") {
            let records = try PDFDocument(contentsOf: url).originalRecords()
            return "\(records.annotations.count) annotations, \(records.comments.count) comments, "
                + "\(records.formFieldValues.count) form values"
        }
        // The same file with its `startxref` pointing at the header: readers must rebuild the
        // cross-reference by scanning the whole file for objects.
        let broken = Self.breakingStartXref(data)
        let brokenFile = FileManager.default.temporaryDirectory.appendingPathComponent("instant-bench-broken.pdf")
        try broken.write(to: brokenFile)
        defer { try? FileManager.default.removeItem(at: brokenFile) }
        try measure("open with a broken xref (rebuilt by scanning)") {
            let document = try PDFDocument(contentsOf: brokenFile)
            return "\(document.pageCount) pages, \(document.warnings.count) warning(s)"
        }
        guard ExternalTool.isInstalled("mutool") else {
            print("mutool not found: install mupdf-tools to compare")
            return
        }
        try measure("mutool show trailer of the broken file (repairs it)") {
            // mutool reports the repair on standard error.
            let text = try ExternalTool.run("mutool", ["show", brokenFile.path, "trailer"], includingErrors: true)
            return text.contains("repair") ? "repaired" : "(no repair reported)"
        }
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("instant-bench-annots.js")
        try """
        var doc = new Document(scriptArgs[0]);
        var n = doc.countPages(), count = 0;
        for (var i = 0; i < n; i++) {
          var annots = doc.loadPage(i).getAnnotations();
          for (var j = 0; j < annots.length; j++) { annots[j].getType(); annots[j].getContents(); }
          count += annots.length;
        }
        print(n + " pages, " + count + " annotations");
        """.write(to: script, atomically: true, encoding: .utf8)
        try measure("mutool run: open + every page's annotations") {
            try ExternalTool.run("mutool", ["run", script.path, file])
        }
    }

    /// The file with the offset after its last `startxref` replaced by zeros.
    static func breakingStartXref(_ data: Data) -> Data {
        var bytes = [UInt8](data)
        let keyword = Array("startxref".utf8)
        guard
            let start = (0...(bytes.count - keyword.count)).reversed().first(where: { index in
                bytes[index..<(index + keyword.count)].elementsEqual(keyword)
            })
        else { return data }
        var index = start + keyword.count
        while index < bytes.count, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
            bytes[index] = UInt8(ascii: "0")
            index += 1
        }
        return Data(bytes)
    }
}
