import Foundation
import InstantJSON
import InstantTesting
import Testing

@testable import InstantPDF

@Suite("XFDF: records to XFDF and back")
struct XFDFTests {
    /// Every annotation type the writer writes comes back from XFDF as the same record, with its
    /// name as its id; the image stamp brings its JPEG back as `<imagedata>`.
    @Test func everyTypeRoundTrips() throws {
        let document = try PDFDocument(data: WriterFixtures.plainPDF)
        let records = PDFWriterTests.everyTypeRecords()
        let xfdf = document.xfdf(records, fileName: "test.pdf")
        let read = try document.xfdfRecords(xfdf)
        #expect(read.skipped.isEmpty)
        let expected = records.annotations.filter { $0.type != .widget && $0.type != .unknown }
        #expect(read.records.annotations.count == expected.count)
        for annotation in expected {
            let actual = read.records.annotations.first { $0.name == annotation.name }
            #expect(
                actual.map(WriterFixtures.normalised) == WriterFixtures.normalised(annotation), "\(annotation.type)")
            #expect(actual?.id == annotation.name && actual?.pdfObjectId == nil)
        }
        #expect(read.records.attachments.values.first?.data == WriterFixtures.jpeg)
        let text = String(decoding: xfdf, as: UTF8.self)
        #expect(text.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<xfdf xmlns=\"http://ns.adobe.com/xfdf/\""))
        #expect(text.contains("<f href=\"test.pdf\"/>"))
    }

    /// Coordinates are PDF user space: a box 20 pt from the top left of a US Letter page
    /// (792 pt high) has `rect` 20,752,…; ink points and quads are converted the same way.
    @Test func coordinatesArePDFUserSpace() throws {
        let document = try PDFDocument(data: WriterFixtures.plainPDF)
        var ink = WriterFixtures.base(.ink, "ink", left: 20, top: 20, width: 100, height: 20)
        ink.lines = InkLines(points: [[Point(x: 20, y: 20), Point(x: 120, y: 40)]])
        ink.strokeColor = RGBColor(red: 255, green: 0, blue: 0)
        let xfdf = String(decoding: document.xfdf(InstantDocumentJSON(annotations: [ink])), as: UTF8.self)
        #expect(xfdf.contains("rect=\"20,752,120,772\""))
        #expect(xfdf.contains("<gesture>20,772;120,752</gesture>"))
        #expect(xfdf.contains("color=\"#ff0000\"") || xfdf.contains("color=\"#FF0000\""))
        #expect(xfdf.contains("flags=\"print\""))
    }

    /// Comments are text annotations replying (`inreplyto`) to their root's name, and read back
    /// as the thread of the annotation with that id.
    @Test func commentsAreReplies() throws {
        let document = try PDFDocument(data: WriterFixtures.plainPDF)
        var root = WriterFixtures.base(.rectangle, "root", left: 100, top: 100)
        root.strokeColor = RGBColor(red: 0, green: 0, blue: 0)
        var first = InstantJSON.Comment(rootId: "root", pageIndex: 0, text: AnnotationText(value: "First"), id: "c1")
        first.creatorName = "Ada"
        first.createdAt = "2026-11-20T10:11:12Z"
        let second = InstantJSON.Comment(rootId: "root", pageIndex: 0, text: AnnotationText(value: "Second"), id: "c2")
        let xfdf = document.xfdf(InstantDocumentJSON(annotations: [root], comments: [first, second]))
        #expect(String(decoding: xfdf, as: UTF8.self).contains("inreplyto=\"root\" replyType=\"reply\""))
        let read = try document.xfdfRecords(xfdf).records
        #expect(read.annotations.map(\.id) == ["root"])
        #expect(read.annotations.first?.isCommentThreadRoot == true)
        #expect(read.comments.map(\.id) == ["c1", "c2"])
        #expect(read.comments.map(\.text?.value) == ["First", "Second"])
        #expect(read.comments.allSatisfy { $0.rootId == "root" })
        #expect(read.comments.first?.creatorName == "Ada")
        #expect(read.comments.first?.createdAt == "2026-11-20T10:11:12Z")
    }

    /// Form field values nest one `<field>` per part of their name; several values are several
    /// `<value>`s; an empty field has none.
    @Test func formFieldValuesNestByName() throws {
        let document = try PDFDocument(data: WriterFixtures.plainPDF)
        let values = [
            FormFieldValue(name: "address.city", value: "Zürich & <Genève>"),
            FormFieldValue(name: "address.lines", value: ["one", "two"]),
            FormFieldValue(name: "empty", value: .null),
        ]
        let xfdf = document.xfdf(InstantDocumentJSON(formFieldValues: values))
        let text = String(decoding: xfdf, as: UTF8.self)
        #expect(text.contains("<field name=\"address\">\n      <field name=\"city\">"))
        #expect(text.contains("<value>Zürich &amp; &lt;Genève&gt;</value>"))
        let read = try document.xfdfRecords(xfdf).records.formFieldValues
        #expect(read.map(\.name) == values.map(\.name))
        #expect(read.map(\.value) == values.map(\.value))
    }

    /// XFDF written by us, read back and written into the original PDF by our writer, reads back
    /// from that PDF as the records we started from.
    @Test func appliedToThePDFItReadsBackTheSame() throws {
        let document = try PDFDocument(data: WriterFixtures.plainPDF)
        let records = PDFWriterTests.everyTypeRecords()
        let imported = try document.xfdfRecords(document.xfdf(records)).records
        let written = try document.writing(imported, attachments: imported.attachments.mapValues(\.data))
        let reread = try PDFDocument(data: written).originalRecords()
        let expected = records.annotations.filter { $0.type != .widget && $0.type != .unknown }
        #expect(reread.annotations.count == expected.count)
        for annotation in expected {
            let actual = reread.annotations.first { $0.name == annotation.name }
            #expect(
                actual.map(WriterFixtures.normalised) == WriterFixtures.normalised(annotation), "\(annotation.type)")
        }
    }

    /// XFDF as other tools write it (a namespace prefix-free root, popups, rich text, flags in
    /// any case, `;` between points, a review-state reply) reads as the records it describes.
    @Test func xfdfOfOtherToolsIsRead() throws {
        let document = try PDFDocument(data: WriterFixtures.plainPDF)
        let xfdf = """
            <?xml version="1.0" encoding="UTF-8" ?>
            <!-- exported by another tool -->
            <xfdf xmlns="http://ns.adobe.com/xfdf/" xml:space="preserve">
              <annots>
                <square color="#0000FF" creationdate="D:20261120101112Z" date="D:20261121080000+01'00'"
                    flags="Print,NoRotate" name="a1b2" page="0" rect="100.5,600,200,700" subject="Rectangle"
                    title="Grace" width="2" interior-color="#FFFF00" opacity="0.5" dashes="3,2">
                  <contents-richtext><body xmlns="http://www.w3.org/1999/xhtml"><p>Look <b>here</b></p></body></contents-richtext>
                  <popup flags="print,nozoom,norotate" open="no" page="0" rect="200,600,380,720"/>
                </square>
                <text inreplyto="a1b2" name="r1" page="0" rect="100,680,120,700" title="Ada" icon="Comment">
                  <contents>Agreed &#x2014; done.</contents>
                </text>
                <polyline page="0" rect="10,10,100,100" head="OpenArrow" tail="None" color="#000000">
                  <vertices>10,10;50,90;100,10</vertices>
                </polyline>
                <caret page="0" rect="1,1,5,5"/>
              </annots>
              <fields><field name="Name"><value>Ada Lovelace</value></field></fields>
              <ids original="0123ABCD" modified="89EF"/>
            </xfdf>
            """
        let read = try document.xfdfRecords(Data(xfdf.utf8))
        #expect(read.skipped == ["line 17: <caret> skipped: Instant JSON has no annotation type for it"])
        let records = read.records
        let square = try #require(records.annotations.first { $0.id == "a1b2" })
        #expect(square.type == .rectangle)
        #expect(square.bbox == Rect(left: 100.5, top: 92, width: 99.5, height: 100))
        #expect(square.strokeColor == RGBColor(red: 0, green: 0, blue: 255))
        #expect(square.fillColor == RGBColor(red: 255, green: 255, blue: 0))
        #expect(square.strokeWidth == 2 && square.strokeDashArray == [3, 2])
        #expect(square.opacity == 0.5)
        #expect(square.flags == [.noRotate])
        #expect(square.creatorName == "Grace")
        #expect(square.createdAt == "2026-11-20T10:11:12Z")
        #expect(square.updatedAt == "2026-11-21T08:00:00+01:00")
        #expect(square.note == "Look here")
        #expect(square.isCommentThreadRoot == true)
        #expect(records.comments.map(\.text?.value) == ["Agreed — done."])
        #expect(records.comments.first?.rootId == "a1b2")
        let polyline = try #require(records.annotations.first { $0.type == .polyline })
        #expect(polyline.points == [Point(x: 10, y: 782), Point(x: 50, y: 702), Point(x: 100, y: 782)])
        #expect(polyline.lineCaps?.start == .openArrow && polyline.lineCaps?.end == nil)
        #expect(ULID(polyline.id ?? "") != nil)
        #expect(records.formFieldValues.map(\.name) == ["Name"])
        #expect(records.formFieldValues.first?.value == "Ada Lovelace")
        #expect(records.pdfId?.permanent == Data([0x01, 0x23, 0xAB, 0xCD]).base64EncodedString())
    }

    /// Broken files are refused with the element and line at fault.
    @Test(arguments: [
        (
            "<xfdf><annots>\n<square page=\"0\" rect=\"1,2,3\"/></annots></xfdf>", 2,
            "<square>: 'rect' must be 4 numbers"
        ),
        ("<xfdf><annots>\n\n<ink page=\"7\" rect=\"1,2,3,4\"/></annots></xfdf>", 3, "page 7 is not in the document"),
        ("<xfdf><annots>\n<circle rect=\"1,2,3,4\"/></annots></xfdf>", 2, "<circle>: it has no 'page' attribute"),
        (
            "<xfdf><annots>\n<square page=\"0\" rect=\"1,2,3,4\" color=\"red\"/></annots></xfdf>", 2,
            "'color' must be a color"
        ),
        ("<xfdf>\n<annots>\n<square page=\"0\">\n</annots></xfdf>", 4, "</annots> closes <square> of line 3"),
        ("<xfdf><annots>\n<square page=\"0\" page=\"1\"/></annots></xfdf>", 2, "'page' appears twice"),
        ("<xfdf>&bogus;</xfdf>", 1, "unknown entity '&bogus;'"),
        ("<!DOCTYPE x [<!ENTITY a \"b\">]><xfdf/>", 1, "document type declarations are not accepted"),
        ("<fdf>\n</fdf>", 1, "the root element is <fdf>, not <xfdf>"),
        ("<xfdf><annots>", 1, "is not closed"),
        ("", 1, "the file has no root element"),
        ("%PDF-1.7", 1, "the file is not XML"),
    ])
    func brokenFilesAreRefusedWithTheLine(xfdf: String, line: Int, message: String) throws {
        let document = try PDFDocument(data: WriterFixtures.plainPDF)
        let error = #expect(throws: XFDFError.self) { try document.xfdfRecords(Data(xfdf.utf8)) }
        #expect(error?.line == line)
        #expect(error?.message.contains(message) == true, "\(String(describing: error))")
    }

    /// Nesting, element count and attribute count are limited.
    @Test func limitsHold() throws {
        let document = try PDFDocument(data: WriterFixtures.plainPDF)
        let deep = "<xfdf>" + String(repeating: "<a>", count: 100) + String(repeating: "</a>", count: 100) + "</xfdf>"
        let error = #expect(throws: XFDFError.self) { try document.xfdfRecords(Data(deep.utf8)) }
        #expect(error?.message.contains("deeper than 64 levels") == true)
        let many = "<xfdf>" + String(repeating: "<a/>", count: 20) + "</xfdf>"
        let count = #expect(throws: XFDFError.self) {
            try document.xfdfRecords(Data(many.utf8), limits: XFDFLimits(maximumElementCount: 10))
        }
        #expect(count?.message.contains("more than 10 elements") == true)
        let attributes = "<xfdf " + (0..<5).map { "a\($0)=\"1\"" }.joined(separator: " ") + "/>"
        let wide = #expect(throws: XFDFError.self) {
            try document.xfdfRecords(Data(attributes.utf8), limits: XFDFLimits(maximumAttributeCount: 4))
        }
        #expect(wide?.message.contains("more than 4 attributes") == true)
    }
}

@Suite("XFDF on the corpus", .corpus, .heavyWork)
struct CorpusXFDFTests {
    /// The annotations, comments and form field values of every annotated corpus file go through
    /// XFDF and come back the same, up to the documented normalisations: the id is the name (the
    /// old id when there was none), there is no `pdfObjectId`, and widgets and annotations of types
    /// Instant JSON does not know are not in XFDF.
    @Test func recordsRoundTripThroughXFDF() throws {
        var problems: [String] = []
        var files = 0
        var annotations = 0
        for entry in CorpusRewrite.annotatedEntries {
            guard let document = try? PDFDocument(data: Corpus.data(entry)), document.pageCount > 0 else { continue }
            let records = document.originalRecords()
            let read: InstantDocumentJSON
            do {
                read = try document.xfdfRecords(document.xfdf(records)).records
            } catch {
                problems.append("\(entry.path): \(error)")
                continue
            }
            var names: [String: String] = [:]
            let expected = records.annotations.filter { $0.type != .widget && $0.type != .unknown }.map {
                var annotation = $0
                annotation.name = annotation.name ?? annotation.id
                names[annotation.id ?? ""] = annotation.name
                return CorpusRewrite.comparable(annotation)
            }.sorted()
            let actual = read.annotations.map(CorpusRewrite.comparable).sorted()
            if expected != actual {
                let missing = Set(expected).subtracting(actual).sorted().prefix(2)
                let extra = Set(actual).subtracting(expected).sorted().prefix(2)
                problems.append("\(entry.path): expected \(missing), read \(extra)")
            }
            let thread = { (comments: [InstantJSON.Comment], root: (String) -> String) in
                comments.map { "\(root($0.rootId))|\($0.text?.value ?? "")|\($0.creatorName ?? "")" }.sorted()
            }
            if thread(records.comments, { names[$0] ?? $0 }) != thread(read.comments, { $0 }) {
                problems.append("\(entry.path): comments differ")
            }
            let values = { (values: [FormFieldValue]) in values.map { "\($0.name)=\(String(describing: $0.value))" } }
            if values(records.formFieldValues).sorted() != values(read.formFieldValues).sorted() {
                let lost = Set(values(records.formFieldValues)).subtracting(values(read.formFieldValues))
                problems.append("\(entry.path): form field values \(lost.sorted().prefix(3)) differ")
            }
            files += 1
            annotations += expected.count
        }
        #expect(problems.isEmpty, "\(problems.count) problems:\n\(problems.joined(separator: "\n"))")
        #expect(files > 60 && annotations > 500, "\(files) files, \(annotations) annotations")
    }
}
