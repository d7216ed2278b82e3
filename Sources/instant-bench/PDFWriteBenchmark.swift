import ArgumentParser
import Foundation
import InstantJSON
import InstantPDF

/// Adds a handful of annotations to a PDF as an incremental update appended to the file, beside
/// PyMuPDF doing the same edit (`saveIncr`) and qpdf rewriting the file, when they are installed.
struct PDFWriteBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pdf-write",
        abstract: "Time to add annotations to a large PDF (incremental update).",
        discussion: """
            Build a large input from the corpus with qpdf, e.g. 1,000 pages and 75 MB of image-heavy files:
            qpdf --empty --pages <corpus files…> -- big.pdf
            """
    )

    @Argument(help: "The PDF to add annotations to (it is not modified: each run edits a copy).")
    var file: String

    @Option(help: "How many annotations to add.")
    var annotations = 5

    @Option(help: "Timed repetitions of each step (the best one is reported).")
    var repetitions = 5

    func run() throws {
        let source = URL(fileURLWithPath: file)
        let size = (try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("instant-bench-write.pdf")
        defer { try? FileManager.default.removeItem(at: copy) }
        print(String(format: "%@: %.1f MB, adding %d annotations", file, Double(size) / 1_000_000, annotations))

        func measure(_ name: String, _ body: () throws -> String) throws {
            var best = Double.infinity
            var result = ""
            for _ in 0..<repetitions {
                try? FileManager.default.removeItem(at: copy)
                try FileManager.default.copyItem(at: source, to: copy)
                let start = DispatchTime.now().uptimeNanoseconds
                result = try body()
                best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
            }
            print(
                "\(name.padding(toLength: 56, withPad: " ", startingAt: 0)) \(String(format: "%8.1f ms", best))  \(result)"
            )
        }

        func append(_ update: Data) throws -> String {
            let handle = try FileHandle(forWritingTo: copy)
            try handle.seekToEnd()
            try handle.write(contentsOf: update)
            try handle.close()
            return "\(update.count) bytes appended"
        }
        var opened: PDFDocument?
        try measure("open (maps the file, reads xref, catalog, page tree)") {
            opened = try PDFDocument(contentsOf: copy)
            return "\(opened!.pageCount) pages"
        }
        guard let document = opened else { return }
        let changes = InstantDocumentJSON(
            annotations: Self.newAnnotations(count: annotations, pageCount: document.pageCount))
        // The edit as Instant JSON changes: only the pages the new annotations go on are read.
        try measure("the edit: open + apply the changes + append the update") {
            let document = try PDFDocument(contentsOf: copy)
            return try append(try document.incrementalUpdate(applying: changes))
        }
        // The same edit given as a complete state: every original is read and compared.
        try measure("read every annotation and form value as Instant JSON") {
            let records = try PDFDocument(contentsOf: copy).originalRecords()
            return "\(records.annotations.count) annotations"
        }
        try measure("as a complete state: open + read + compare + append") {
            let document = try PDFDocument(contentsOf: copy)
            var records = document.originalRecords()
            records.annotations += changes.annotations
            return try append(try document.incrementalUpdate(records))
        }
        let written = try PDFDocument(contentsOf: copy)
        let count = written.annotations().count
        print("check: the edited copy opens with \(count) annotations, \(written.warnings.count) warning(s)")

        if ExternalTool.hasPython(module: "pymupdf") {
            try measure("PyMuPDF: open + add the same annotations + saveIncr") {
                try ExternalTool.run("python3", ["-c", Self.pyMuPDFScript, copy.path, String(annotations)])
            }
        } else {
            print("PyMuPDF not found: pip install pymupdf to compare")
        }
        if ExternalTool.isInstalled("qpdf") {
            let output = FileManager.default.temporaryDirectory.appendingPathComponent("instant-bench-qpdf.pdf")
            defer { try? FileManager.default.removeItem(at: output) }
            try measure("qpdf: rewrite the whole file (no incremental mode)") {
                try ExternalTool.run("qpdf", [copy.path, output.path])
            }
        }
    }

    /// Notes, rectangles, ink and highlights on the first pages.
    static func newAnnotations(count: Int, pageCount: Int) -> [Annotation] {
        (0..<count).map { index in
            let page = index % max(pageCount, 1)
            let bbox = Rect(left: 50 + Double(index % 4) * 60, top: 50, width: 50, height: 40)
            switch index % 4 {
            case 0:
                var note = Annotation(type: .note, pageIndex: page, bbox: bbox, id: "bench-\(index)")
                note.text = AnnotationText(value: "Benchmark note \(index)")
                note.icon = "comment"
                return note
            case 1:
                var rectangle = Annotation(type: .rectangle, pageIndex: page, bbox: bbox, id: "bench-\(index)")
                rectangle.strokeColor = RGBColor(red: 255, green: 0, blue: 0)
                rectangle.strokeWidth = 2
                return rectangle
            case 2:
                var ink = Annotation(type: .ink, pageIndex: page, bbox: bbox, id: "bench-\(index)")
                ink.lines = InkLines(points: [[Point(x: bbox.left, y: 50), Point(x: bbox.left + 50, y: 90)]])
                ink.lineWidth = 2
                return ink
            default:
                var highlight = Annotation(type: .highlight, pageIndex: page, bbox: bbox, id: "bench-\(index)")
                highlight.rects = [bbox]
                highlight.color = RGBColor(red: 255, green: 255, blue: 0)
                return highlight
            }
        }
    }

    static let pyMuPDFScript = """
        import sys, time, pymupdf
        start = time.perf_counter()
        doc = pymupdf.open(sys.argv[1])
        for i in range(int(sys.argv[2])):
            page = doc[i % doc.page_count]
            rect = pymupdf.Rect(50 + (i % 4) * 60, 50, 100 + (i % 4) * 60, 90)
            kind = i % 4
            if kind == 0: page.add_text_annot(rect.tl, "Benchmark note %d" % i)
            elif kind == 1: page.add_rect_annot(rect)
            elif kind == 2: page.add_ink_annot([[(rect.x0, rect.y0), (rect.x1, rect.y1)]])
            else: page.add_highlight_annot(rect)
        doc.saveIncr()
        print("%.1f ms inside Python (without starting it)" % ((time.perf_counter() - start) * 1000))
        """
}
