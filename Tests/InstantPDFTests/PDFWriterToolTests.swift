import Foundation
import InstantJSON
import InstantTesting
import Testing

@testable import InstantPDF

/// What independent PDF tools make of the files the writer writes: qpdf checks their structure,
/// mutool (MuPDF) and pikepdf list their annotations, pdftoppm (Poppler) renders them.
/// `.ci/run` installs the tools; a test fails, rather than passes silently, when one is missing.
@Suite("PDF writer checked by qpdf, mutool, pikepdf and pdftoppm", .heavyWork)
struct PDFWriterToolTests {
    static func temporaryFile(_ data: Data, _ name: String = "written.pdf") throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(UUID().uuidString)-\(name)")
        try data.write(to: url)
        return url
    }

    static func everyTypeFile(flatten: Bool = false) throws -> (document: PDFDocument, data: Data) {
        let original = try PDFDocument(data: WriterFixtures.plainPDF)
        let records = PDFWriterTests.everyTypeRecords()
        let data = try original.writing(
            records, attachments: records.attachments.mapValues(\.data), options: .init(flatten: flatten))
        return (try PDFDocument(data: data), data)
    }

    /// Our reading of a file as `subtype x1 y1 x2 y2` lines, rounded to whole points.
    static func ourListing(_ document: PDFDocument) -> [String] {
        document.pages.flatMap { page in
            (document.resolve(page.dictionary["Annots"] ?? .null).arrayValue ?? []).compactMap { entry in
                guard let annotation = document.resolve(entry).dictionaryValue,
                    let subtype = annotation["Subtype"]?.nameValue,
                    let rect = PDFRect(annotation["Rect"] ?? .null, resolve: document.resolve)
                else { return nil }
                return Self.line(subtype, [rect.minX, rect.minY, rect.maxX, rect.maxY])
            }
        }
    }

    static func line(_ subtype: String, _ rect: [Double]) -> String {
        ([subtype] + rect.map { String(Int($0.rounded())) }).joined(separator: " ")
    }

    @Test func qpdfFindsNoProblems() throws {
        let files = [try Self.everyTypeFile().data, try Self.everyTypeFile(flatten: true).data]
        for data in files {
            let url = try Self.temporaryFile(data)
            defer { try? FileManager.default.removeItem(at: url) }
            let check = try ChildProcess.runBlocking("qpdf", ["--check", url.path])
            #expect(check.status == 0, "\(check.output)")
            #expect(check.output.contains("No syntax or stream encoding errors found"))
        }
    }

    /// Every annotated corpus file that qpdf finds clean is still clean with all its annotations
    /// written again.
    @Test(.corpus) func qpdfFindsCorpusRewritesClean() throws {
        var problems: [String] = []
        var checked = 0
        for entry in CorpusRewrite.annotatedEntries {
            let path = Corpus.directory.appendingPathComponent(entry.path).path
            guard try ChildProcess.runBlocking("qpdf", ["--check", path]).status == 0,
                let document = try? PDFDocument(data: Corpus.data(entry)),
                let written = try? document.writing(CorpusRewrite.rewrittenRecords(document))
            else { continue }
            let url = try Self.temporaryFile(written)
            defer { try? FileManager.default.removeItem(at: url) }
            let check = try ChildProcess.runBlocking("qpdf", ["--check", url.path])
            if check.status != 0 { problems.append("\(entry.path): \(check.output.suffix(300))") }
            checked += 1
        }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
        #expect(checked > 40)
    }

    @Test func mutoolListsTheSameAnnotations() throws {
        let (document, data) = try Self.everyTypeFile()
        let url = try Self.temporaryFile(data)
        // MuPDF's annotation list, with each annotation's type and the /Rect of its object.
        let script = try Self.temporaryFile(
            Data(
                """
                var doc = new PDFDocument(scriptArgs[0]);
                for (var i = 0; i < doc.countPages(); i++) {
                  var annots = doc.loadPage(i).getAnnotations();
                  for (var j = 0; j < annots.length; j++) {
                    print(annots[j].getType() + " " + annots[j].getObject().get("Rect"));
                  }
                  var links = doc.loadPage(i).getLinks();
                  for (var k = 0; k < links.length; k++) print("Link " + links[k].uri);
                }
                """.utf8), "list.js")
        defer { for file in [url, script] { try? FileManager.default.removeItem(at: file) } }
        let listing = try ChildProcess.runBlocking("mutool", ["run", script.path, url.path])
        #expect(listing.status == 0)
        let theirs = listing.output.split(separator: "\n").compactMap { line -> String? in
            let parts = line.split(whereSeparator: { " []".contains($0) })
            let values = parts.dropFirst().compactMap { Double($0) }
            return values.count == 4 ? Self.line(String(parts[0]), values) : nil
        }
        // MuPDF lists links apart from other annotations, with their target instead of a rectangle.
        #expect(theirs.sorted() == Self.ourListing(document).filter { !$0.hasPrefix("Link") }.sorted())
        let links = listing.output.split(separator: "\n").filter { $0.hasPrefix("Link ") }
        #expect(links.sorted() == ["Link #page=1&view=Fit", "Link https://example.com/a?b=(c)"])
    }

    @Test func pikepdfListsTheSameAnnotations() throws {
        let (document, data) = try Self.everyTypeFile()
        let url = try Self.temporaryFile(data)
        defer { try? FileManager.default.removeItem(at: url) }
        let script = """
            import sys, pikepdf
            pdf = pikepdf.open(sys.argv[1])
            for page in pdf.pages:
                for annot in page.obj.get('/Annots', []):
                    r = [float(v) for v in annot.Rect]
                    print(str(annot.Subtype)[1:], *[round(v) for v in r])
            """
        let listing = try ChildProcess.runBlocking("python3", ["-c", script, url.path])
        #expect(listing.status == 0)
        #expect(listing.output.split(separator: "\n").map(String.init).sorted() == Self.ourListing(document).sorted())
    }

    /// A red rectangle and a yellow highlight rendered by Poppler are where their bboxes say, in the
    /// editable file and in the flattened one.
    @Test(arguments: [false, true])
    func pdftoppmDrawsAnnotationsWhereTheirBBoxSays(flatten: Bool) throws {
        let original = try PDFDocument(data: WriterFixtures.plainPDF)
        var rectangle = WriterFixtures.base(.rectangle, "box", left: 100, top: 600, width: 120, height: 80)
        rectangle.strokeColor = RGBColor(red: 255, green: 0, blue: 0)
        rectangle.fillColor = RGBColor(red: 255, green: 0, blue: 0)
        rectangle.strokeWidth = 2
        var highlight = WriterFixtures.base(.highlight, "mark", left: 300, top: 600, width: 100, height: 20)
        highlight.rects = [highlight.bbox]
        highlight.color = RGBColor(red: 255, green: 255, blue: 0)
        let data = try original.writing(
            InstantDocumentJSON(annotations: [rectangle, highlight]), options: .init(flatten: flatten))
        let url = try Self.temporaryFile(data)
        let prefix = url.deletingPathExtension().path
        defer { try? FileManager.default.removeItem(at: url) }
        // 72 dpi: one pixel per point, origin at the top left of the page as in Instant JSON.
        let render = try ChildProcess.runBlocking(
            "pdftoppm", ["-r", "72", "-f", "1", "-l", "1", "-singlefile", url.path, prefix])
        #expect(render.status == 0)
        let image = try PPMImage(contentsOf: URL(fileURLWithPath: prefix + ".ppm"))
        defer { try? FileManager.default.removeItem(atPath: prefix + ".ppm") }
        func pixel(_ x: Int, _ y: Int) -> (Int, Int, Int) { image.pixel(x: x, y: y) }
        let inside = pixel(160, 640)
        #expect(inside.0 > 200 && inside.1 < 60 && inside.2 < 60, "the rectangle is red inside its bbox: \(inside)")
        let outside = pixel(160, 700)
        #expect(outside.1 > 200, "below its bbox the page is not red: \(outside)")
        let marked = pixel(350, 610)
        #expect(marked.0 > 200 && marked.1 > 200 && marked.2 < 80, "the highlight is yellow: \(marked)")
        let unmarked = pixel(350, 640)
        #expect(unmarked.2 > 150, "below the highlight there is no yellow: \(unmarked)")
    }
}

extension PDFWriterToolTests {
    /// A text field's new value shows when Poppler renders the page (`/NeedAppearances`).
    @Test func pdftoppmShowsANewFormValue() throws {
        let form = TestPDF.form()
        let original = try PDFDocument(data: form)
        var records = original.originalRecords()
        let index = try #require(records.formFieldValues.firstIndex { $0.name == "Text Box" })
        records.formFieldValues[index] = FormFieldValue(name: "Text Box", value: "HELLO WORLD")
        func darkPixelsInField(_ data: Data) throws -> Int {
            let url = try Self.temporaryFile(data)
            let prefix = url.deletingPathExtension().path
            defer { for path in [url.path, prefix + ".ppm"] { try? FileManager.default.removeItem(atPath: path) } }
            #expect(
                try ChildProcess.runBlocking("pdftoppm", ["-r", "72", "-singlefile", url.path, prefix]).status == 0)
            let image = try PPMImage(contentsOf: URL(fileURLWithPath: prefix + ".ppm"))
            // The field's /Rect [100 100 200 130] on a 300-point page: rows 170–200 of the image.
            var dark = 0
            for y in 171..<199 {
                for x in 101..<199 {
                    let pixel = image.pixel(x: x, y: y)
                    if pixel.0 + pixel.1 + pixel.2 < 300 { dark += 1 }
                }
            }
            return dark
        }
        let before = try darkPixelsInField(form)
        let after = try darkPixelsInField(try original.writing(records))
        #expect(before == 0)
        #expect(after > 50, "the value's glyphs are drawn in the field: \(after) dark pixels")
    }
}

/// A binary PPM (P6) image as pdftoppm writes it.
struct PPMImage {
    var width: Int
    var height: Int
    var pixels: [UInt8]

    init(contentsOf url: URL) throws {
        let bytes = [UInt8](try Data(contentsOf: url))
        var fields: [Int] = []
        var index = 2  // after "P6"
        while fields.count < 3 {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A { index += 1 }
            var value = 0
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                value = value * 10 + Int(bytes[index] - 0x30)
                index += 1
            }
            fields.append(value)
        }
        width = fields[0]
        height = fields[1]
        pixels = Array(bytes[(index + 1)...])
    }

    func pixel(x: Int, y: Int) -> (Int, Int, Int) {
        let offset = (y * width + x) * 3
        guard x >= 0, y >= 0, x < width, y < height, offset + 2 < pixels.count else { return (-1, -1, -1) }
        return (Int(pixels[offset]), Int(pixels[offset + 1]), Int(pixels[offset + 2]))
    }
}
