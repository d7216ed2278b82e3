import Foundation
import InstantJSON
import InstantPDF
import Testing

/// Records of annotated corpus files, checked field by field against the PDF source by hand.
@Suite("Golden records of annotated files", .corpus, .heavyWork)
struct GoldenRecordTests {
    func records(_ path: String) throws -> InstantDocumentJSON {
        try PDFDocument(data: Data(contentsOf: Corpus.directory.appendingPathComponent(path))).originalRecords()
    }

    /// A note, a highlight and an ink annotation written directly into /Annots by FPDF2, on an A4
    /// page (595.28 × 841.89).
    @Test func fpdfAnnotatedSample() throws {
        let document = try records("samplefiles/024-annotations/annotated_pdf.pdf")
        #expect(document.pdfId == PDFId(permanent: "YGBI5CqHEQZ2pCO2ItxWYg==", changing: "YGBI5CqHEQZ2pCO2ItxWYg=="))
        try #require(document.annotations.count == 3)
        let note = document.annotations[0]
        #expect(note.type == .note)
        #expect(note.id == "p0a0")
        #expect(note.pdfObjectId == nil)
        #expect(note.text == AnnotationText(value: "This is a text annotation."))
        // /Rect [170.08 785.20 172.91 782.36]: top = 841.89 − 785.20.
        #expect(note.bbox == Rect(left: 170.08, top: 56.69, width: 2.83, height: 2.84))
        #expect(note.icon == "comment")
        #expect(note.flags == nil)  // /F 4: printable, no other flag

        let highlight = document.annotations[1]
        #expect(highlight.type == .highlight)
        #expect(highlight.color == RGBColor(red: 255, green: 255, blue: 0))
        #expect(highlight.note == "Highlight comment")
        #expect(highlight.updatedAt == "1990-04-28T00:00:00Z")
        #expect(highlight.blendMode == .multiply)
        // Two quadrilaterals: 141.73…207.11 × 695.36…719.36 and 28.35…113.39 × 676.16…700.16.
        #expect(
            highlight.rects == [
                Rect(left: 141.73, top: 122.53, width: 65.38, height: 24),
                Rect(left: 28.35, top: 141.73, width: 85.04, height: 24),
            ])

        let ink = document.annotations[2]
        #expect(ink.type == .ink)
        #expect(ink.creatorName == "Lucas")
        #expect(ink.note == "Hello world!")
        #expect(ink.lineWidth == 1)  // /Border [0 0 1]
        #expect(ink.strokeColor == RGBColor(red: 255, green: 255, blue: 0))
        #expect(ink.lines?.points.first?.first == Point(x: 28.35, y: 340.16))
        #expect(ink.lines?.points.first?.count == 5)
    }

    /// Six circles with popups in a linearized file whose first-page cross-reference offsets are
    /// wrong: the objects are found by scanning, the popups fold into their parents.
    @Test func circlesOfALinearizedFileWithWrongOffsets() throws {
        let pdf = try PDFDocument(
            data: Data(
                contentsOf: Corpus.directory.appendingPathComponent("pdfium/testing/resources/linearized_bug_1055.pdf"))
        )
        let document = pdf.originalRecords()
        // Each object found away from its offset is reported once it has been read.
        #expect(
            pdf.warnings.contains("object 33 was not at its cross-reference offset; it was found by scanning the file"))
        #expect(document.annotations.map(\.type) == Array(repeating: .ellipse, count: 6))
        let first = try #require(document.annotations.first)
        #expect(first.id == "33")
        #expect(first.pdfObjectId == 33)
        #expect(first.name == "4a7e7875-ea9e-954f-a313-f2d680fd6d03")
        #expect(first.creatorName == "hnakashima")
        #expect(first.createdAt == "2017-11-09T13:14:38-05:00")
        #expect(first.strokeColor == RGBColor(red: 255, green: 0, blue: 0))
        // /Rect [177.317 530.817 373.398 722.582] on a 792-point-high page.
        #expect(first.bbox == Rect(left: 177.317, top: 69.418, width: 196.081, height: 191.765))
    }

    /// Two lines by PDFium's tests on a US Letter page (792 points high): the second has a broken
    /// /L (three numbers) and a two-element /Border, so its ends come from the bbox and its width is
    /// the default.
    @Test func linesWithAndWithoutAValidL() throws {
        let lines = try records("pdfium/testing/resources/line_annot.pdf").annotations
        try #require(lines.count == 2)
        #expect(lines.map(\.type) == [.line, .line])
        #expect(lines.map(\.id) == ["4", "5"])
        #expect(lines.map(\.name) == ["Line-1", "Line-2"])
        // /Rect [293 530 349 542]
        #expect(lines[0].bbox == Rect(left: 293, top: 250, width: 56, height: 12))
        // /L [159 296 472 243.42]
        #expect(lines[0].startPoint == Point(x: 159, y: 496))
        #expect(lines[0].endPoint == Point(x: 472, y: 548.58))
        #expect(lines[0].strokeWidth == 2)  // /Border [0.25 0.5 2]
        #expect(lines[0].strokeColor == RGBColor(red: 255, green: 230, blue: 0))  // /C [1 0.90196 0]
        #expect(lines[0].flags == nil)
        #expect(lines[1].startPoint == Point(x: 293, y: 250))
        #expect(lines[1].endPoint == Point(x: 349, y: 262))
        #expect(lines[1].strokeWidth == 1)
    }

    /// Two polygons; the second's /Vertices has an odd count, so its last number is dropped.
    @Test func polygonsWithAnOddVertexCount() throws {
        let polygons = try records("pdfium/testing/resources/polygon_annot.pdf").annotations
        try #require(polygons.count == 2)
        #expect(polygons.map(\.type) == [.polygon, .polygon])
        // /Vertices [159 296 350 411 472 243.42]
        #expect(polygons[0].points == [Point(x: 159, y: 496), Point(x: 350, y: 381), Point(x: 472, y: 548.58)])
        // /Vertices [259 396 450 511 572 343 42]
        #expect(polygons[1].points == [Point(x: 259, y: 396), Point(x: 450, y: 281), Point(x: 572, y: 449)])
        #expect(polygons[1].strokeColor == RGBColor(red: 255, green: 230, blue: 0))
        #expect(polygons[1].strokeWidth == 1)
        #expect(polygons[1].fillColor == nil)
    }

    /// A redaction with one quadrilateral and no interior color (not applied: a record like any other).
    @Test func redaction() throws {
        let redactions = try records("pdfium/testing/resources/redact_annot.pdf").annotations
        try #require(redactions.count == 1)
        #expect(redactions[0].type == .redaction)
        #expect(redactions[0].id == "5")
        #expect(redactions[0].name == "Redact-1")
        // /QuadPoints [293 542 349 542 293 530 349 530]
        #expect(redactions[0].rects == [Rect(left: 293, top: 250, width: 56, height: 12)])
        #expect(redactions[0].fillColor == nil)
    }

    /// Highlight, underline, squiggly and strike-out over three lines of text on an A4 page (842
    /// points high), each with three quadrilaterals and an empty /Contents.
    @Test func multilineTextMarkup() throws {
        let markup = try records("pdfium/testing/resources/annotation_markup_multiline_no_ap.pdf").annotations
        try #require(markup.count == 4)
        #expect(markup.map(\.type) == [.highlight, .underline, .squiggly, .strikeOut])
        #expect(markup.map(\.name) == ["Hilight-1", "Underline-1", "Squiggly-1", "StrikeOut-1"])
        #expect(markup[0].color == RGBColor(red: 255, green: 255, blue: 0))
        #expect(markup[0].blendMode == .multiply)
        #expect(markup[1].color == RGBColor(red: 0, green: 0, blue: 0))
        #expect(markup[1].blendMode == nil)
        #expect(markup[0].note == "")
        // /Rect [108 602 506 640]
        #expect(markup[0].bbox == Rect(left: 108, top: 202, width: 398, height: 38))
        // Quadrilaterals 107.7896…505.8939 × 629.1634…639.9486, × 615.5011…626.2871, and
        // 107.7896…380.1389 × 601.8397…612.6248.
        #expect(
            markup[0].rects == [
                Rect(left: 107.7896, top: 202.0514, width: 398.1043, height: 10.7852),
                Rect(left: 107.7896, top: 215.7129, width: 398.1043, height: 10.786),
                Rect(left: 107.7896, top: 229.3752, width: 272.3493, height: 10.7851),
            ])
        // The strike-out is 150 points lower on the page.
        #expect(markup[3].rects?.first == Rect(left: 107.7896, top: 352.0514, width: 398.1043, height: 10.7852))
    }

    /// A free text annotation written directly into /Annots, without /DA: the default font size,
    /// no font color, /C as the background, /CA 1 as opacity.
    @Test func freeTextWithoutDefaultAppearance() throws {
        let texts = try records("pdfium/testing/resources/freetext_annotation_without_da.pdf").annotations
        try #require(texts.count == 1)
        let text = texts[0]
        #expect(text.type == .text)
        #expect(text.id == "p0a0")
        #expect(text.pdfObjectId == nil)
        #expect(text.text?.value == "Hello!")
        // /Rect [100 50 150 75] on a 200-point page.
        #expect(text.bbox == Rect(left: 100, top: 125, width: 50, height: 25))
        #expect(text.fontSize == 12)
        #expect(text.fontColor == nil)
        #expect(text.horizontalAlign == "left")
        #expect(text.backgroundColor == RGBColor(red: 255, green: 0, blue: 0))
        #expect(text.opacity == 1)
    }

    /// A link whose GoTo destination `[1 2 3]` names a page the one-page file does not have: no
    /// action. It carries a text field's /T, read as its author.
    @Test func linkWithAnImpossibleDestination() throws {
        let links = try records("pdfium/testing/resources/goto_action.pdf").annotations
        try #require(links.count == 1)
        #expect(links[0].type == .link)
        #expect(links[0].action == nil)
        #expect(links[0]["borderWidth"] == 1)  // /BS << /W 1 >>
        #expect(links[0].creatorName == "txtName")
        #expect(links[0].updatedAt == "2015-05-14T07:04:26+05:30")  // D:20150514070426+05'30'
        #expect(links[0].bbox == Rect(left: 1, top: 1, width: 198, height: 198))
    }

    /// A file attachment by Acrobat: an unknown subtype kept with its subtype name, its contents,
    /// dates with their offset and /F 28 (print, no zoom, no rotate).
    @Test func fileAttachmentIsUnknown() throws {
        let annotations = try records("pdfium/testing/resources/annotation_fileattachment.pdf").annotations
        try #require(annotations.count == 1)
        let attachment = annotations[0]
        #expect(attachment.type == .unknown)
        #expect(attachment.id == "9")
        #expect(attachment.customData == ["pdfSubtype": "FileAttachment"])
        #expect(attachment.note == "Test file")
        #expect(attachment.flags == [.noZoom, .noRotate])
        #expect(attachment.name == "040701cc-95a5-4b3a-bb25-fc999468f36e")
        #expect(attachment.createdAt == "2024-02-13T08:19:29+03:00")
        #expect(attachment.updatedAt == "2024-02-13T08:20:26+03:00")
    }

    /// Two notes and a highlight by "moose", each with a popup (folded in, not records); dates
    /// end in `+02'00` without the closing apostrophe.
    @Test func commentedFileWithPopups() throws {
        let annotations = try records("pypdf/resources/commented.pdf").annotations
        #expect(annotations.map(\.type) == [.note, .highlight, .note])
        #expect(annotations.map(\.id) == ["23", "26", "29"])
        #expect(annotations.allSatisfy { $0.creatorName == "moose" })
        #expect(annotations.allSatisfy { $0.color == RGBColor(red: 255, green: 255, blue: 0) })
        let first = annotations[0]
        #expect(first.text?.value == "Note in second paragraph")
        #expect(first.icon == "comment")
        #expect(first.updatedAt == "2022-04-06T19:18:58+02:00")
        // /Rect [270.75 596.25 294.75 620.25]
        #expect(first.bbox == Rect(left: 270.75, top: 171.75, width: 24, height: 24))
        #expect(annotations[2].text?.value.hasSuffix("Umlaut: äöüß") == true)
        // /QuadPoints [176 568 203 568 176 557 203 557]
        #expect(annotations[1].rects == [Rect(left: 176, top: 224, width: 27, height: 11)])
    }

    /// PDFium's form of every kind on a 300 × 600 page: an editable combo box, a multi-select list
    /// box with two values and no /I, a text box, a check box without value and a radio group
    /// whose widget is a kid of the field; beside them, a link.
    @Test func formOfEveryKind() throws {
        let document = try records("pdfium/testing/resources/multiple_form_types.pdf")
        #expect(document.annotations.map(\.type) == [.link, .widget, .widget, .widget, .widget, .widget])
        #expect(document.annotations[0].action == .uri("https://www.cs.chromium.org/"))
        #expect(document.annotations[0]["borderWidth"] == 0)  // /BS << /W 0 >>
        let fields = document.formFields
        #expect(
            fields.map(\.name) == [
                "Combo_Editable", "Listbox_MultiSelectMultipleSelected", "Text Box", "Checkbox", "radioButton",
            ])
        #expect(fields.map(\.kind) == [.comboBox, .listBox, .text, .checkBox, .radio])
        // /Ff 393216: combo (bit 18) and edit (bit 19).
        #expect(fields[0]["edit"] == true)
        #expect(
            fields[0].options == [
                FormField.Option(label: "Foo", value: "foo"), FormField.Option(label: "Bar", value: "bar"),
                FormField.Option(label: "Qux", value: "qux"),
            ])
        #expect(fields[1]["multiSelect"] == true)  // /Ff 2097152: bit 22
        #expect(fields[4].label == "radioButton1")  // /TU
        #expect(fields[4].annotationIds == ["13"])
        let values = Dictionary(uniqueKeysWithValues: document.formFieldValues.map { ($0.name, $0) })
        // /V [(Epsilon) (Gamma)]: the indexes are found in /Opt.
        #expect(values["Listbox_MultiSelectMultipleSelected"]?.value == ["Epsilon", "Gamma"])
        #expect(values["Listbox_MultiSelectMultipleSelected"]?.optionIndexes == [4, 2])
        #expect(values["Combo_Editable"]?.value == [])
        #expect(values["Text Box"]?.value == .null)
        #expect(values["Checkbox"]?.value == .null)
        #expect(values["radioButton"]?.value == "value3")  // /V /value3
    }

    /// Two stamps by Apple's PDFKit without /Name (so the default, Draft), with an /M that is not
    /// a date (`D:201706071721Z00'00'`: a `Z` where the seconds belong), so no `updatedAt`.
    @Test func stampsWithoutNameOrValidDate() throws {
        let stamps = try records("pdfium/testing/resources/annotation_stamp_with_ap.pdf").annotations
        #expect(stamps.map(\.type) == [.stamp, .stamp])
        #expect(stamps.map(\.id) == ["29", "30"])
        #expect(stamps.allSatisfy { $0.stampType == .draft && $0.updatedAt == nil && $0.note == "" })
        // /Rect [57.522725 433.363646 584.637036 680.475257] on an 842-point page, to 1/10,000 pt.
        #expect(stamps[0].bbox == Rect(left: 57.5227, top: 161.5247, width: 527.1143, height: 247.1116))
        #expect(stamps[1].bbox == Rect(left: 349.5274, top: 226.3295, width: 8, height: 8))
    }
}
