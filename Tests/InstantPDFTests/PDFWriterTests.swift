import Foundation
import InstantJSON
import InstantTesting
import Testing

@testable import InstantPDF

@Suite("PDF writer: records into a PDF as an incremental update", .heavyWork)
struct PDFWriterTests {
    static func everyTypeRecords() -> InstantDocumentJSON {
        let attachment = Attachment(data: WriterFixtures.jpeg, contentType: "image/jpeg")
        var records = InstantDocumentJSON(annotations: WriterFixtures.everyType(jpegKey: attachment.key))
        records.attachments[attachment.key] = attachment
        return records
    }

    /// Every type written as a new annotation reads back as the same record (up to its new id).
    @Test func everyTypeRoundTrips() throws {
        let original = try PDFDocument(data: WriterFixtures.plainPDF)
        let records = Self.everyTypeRecords()
        let written = try original.writing(records, attachments: [records.attachments.keys.first!: WriterFixtures.jpeg])
        let reread = try PDFDocument(data: written)
        #expect(reread.warnings.isEmpty)
        let read = reread.originalRecords()
        #expect(read.annotations.count == records.annotations.count)
        for expected in records.annotations {
            let actual = read.annotations.first { $0.name == expected.name }
            #expect(actual.map(WriterFixtures.normalised) == WriterFixtures.normalised(expected), "\(expected.type)")
            #expect(actual?.pdfObjectId != nil && actual?.id == actual?.pdfObjectId.map(String.init))
        }
        // The image comes back as the attachment that was embedded.
        #expect(read.attachments.values.first?.data == WriterFixtures.jpeg)
    }

    /// The update leaves the original bytes untouched and chains to them.
    @Test func updateIsIncremental() throws {
        let bytes = WriterFixtures.plainPDF
        let original = try PDFDocument(data: bytes)
        let written = try original.writing(Self.everyTypeRecords())
        #expect(written.prefix(bytes.count) == bytes)
        let reread = try PDFDocument(data: written)
        #expect(reread.trailer["Prev"]?.intValue == original.reader.findStartXRef())
        #expect(reread.trailer["Root"] == original.trailer["Root"])
        #expect(reread.pdfId?.permanent == original.pdfId?.permanent)
        #expect(reread.pdfId?.changing != original.pdfId?.changing)
        #expect(reread.pageCount == original.pageCount)
        let tail = String(decoding: written.suffix(from: bytes.count), as: UTF8.self)
        #expect(tail.contains("\nxref\n") && tail.hasSuffix("%%EOF\n"))
    }

    /// A file whose newest cross-reference section is a stream gets a stream.
    @Test func streamFilesGetAStream() throws {
        let bytes = WriterFixtures.streamPDF
        let original = try PDFDocument(data: bytes)
        var note = WriterFixtures.base(.note, "n", left: 10, top: 10, width: 20, height: 20)
        note.text = AnnotationText(value: "hi")
        let written = try original.writing(InstantDocumentJSON(annotations: [note]))
        let tail = String(decoding: written.suffix(from: bytes.count), as: UTF8.self)
        #expect(!tail.contains("\nxref\n") && tail.contains("/Type /XRef"))
        let reread = try PDFDocument(data: written)
        #expect(reread.warnings.isEmpty)
        #expect(reread.annotations().map(\.name) == ["n"])
    }

    /// Unchanged originals are not written again; changed ones keep their number; missing ones
    /// are deleted and their objects freed.
    @Test func originalsChangeInPlaceOrAreDeleted() throws {
        let original = try PDFDocument(data: TestPDF.annotated())
        var records = original.originalRecords()
        let unchanged = try original.incrementalUpdate(records)
        #expect(!String(decoding: unchanged, as: UTF8.self).contains(" obj"))

        // The ink changes, the note (with its popup) goes, the highlight stays as it is.
        let deleted = try #require(records.annotations.first { $0.type == .note })
        var kept = try #require(records.annotations.first { $0.type == .ink })
        kept.note = "changed"
        records.annotations = records.annotations.compactMap {
            $0.id == deleted.id ? nil : $0.id == kept.id ? kept : $0
        }
        let reread = try PDFDocument(data: original.writing(records))
        let read = reread.annotations()
        #expect(read.map(\.type) == [.highlight, .ink])
        #expect(read.map(\.pdfObjectId) == [nil, kept.pdfObjectId])
        #expect(read.first?.note == "Highlight comment")
        #expect(read.last?.note == "changed")
        #expect(read.last?.lines == kept.lines)
        // The note and its popup (object 6) are freed.
        for number in [try #require(deleted.pdfObjectId), 6] {
            #expect(reread.object(PDFReference(number: number, generation: 0)) == .null)
        }
    }

    /// Deleting an annotation without a popup leaves the page's direct annotations (dictionaries
    /// written into `/Annots` itself) where they are.
    @Test func deletingAnAnnotationWithoutPopupKeepsDirectOnes() throws {
        let original = try PDFDocument(data: TestPDF.annotated())
        var records = original.originalRecords()
        let ink = try #require(records.annotations.first { $0.type == .ink })
        records.annotations.removeAll { $0.id == ink.id }
        let read = try PDFDocument(data: original.writing(records)).annotations()
        #expect(read.map(\.type) == [.note, .highlight])
    }

    /// Comments become replies (`/IRT`) with popups and read back as the thread.
    @Test func commentsBecomeReplies() throws {
        let original = try PDFDocument(data: WriterFixtures.plainPDF)
        var root = WriterFixtures.base(.rectangle, "root", left: 100, top: 100)
        root.strokeColor = RGBColor(red: 0, green: 0, blue: 0)
        root.strokeWidth = 1
        var first = InstantJSON.Comment(rootId: "root", pageIndex: 0, text: AnnotationText(value: "First"), id: "c1")
        first.creatorName = "Ada"
        let second = InstantJSON.Comment(rootId: "root", pageIndex: 0, text: AnnotationText(value: "Second"), id: "c2")
        let written = try original.writing(InstantDocumentJSON(annotations: [root], comments: [first, second]))
        let read = try PDFDocument(data: written).originalRecords()
        let rootID = try #require(read.annotations.first { $0.name == "root" }?.id)
        #expect(read.annotations.count == 1)
        #expect(read.comments.map(\.text?.value) == ["First", "Second"])
        #expect(read.comments.allSatisfy { $0.rootId == rootID })
        #expect(read.comments.first?.creatorName == "Ada")
        let withoutComments = try original.writing(
            InstantDocumentJSON(annotations: [root], comments: [first]), options: .init(includeComments: false))
        #expect(try PDFDocument(data: withoutComments).originalRecords().comments.isEmpty)
    }

    /// Form values go into their fields.
    @Test func formValuesAreWritten() throws {
        let original = try PDFDocument(data: TestPDF.form())
        var records = original.originalRecords()
        let name = try #require(records.formFields.first { $0.kind == .text }?.name)
        let index = try #require(records.formFieldValues.firstIndex { $0.name == name })
        records.formFieldValues[index] = FormFieldValue(name: name, value: "Grüße")
        let written = try original.writing(records)
        let reread = try PDFDocument(data: written)
        #expect(reread.originalRecords().formFieldValues.first { $0.name == name }?.value == "Grüße")
        let form = reread.resolve(reread.catalog["AcroForm"] ?? .null).dictionaryValue
        #expect(form?["NeedAppearances"] == .bool(true))
    }

    /// Flattening draws the annotations into the page and removes them.
    @Test func flattenDrawsIntoThePage() throws {
        let original = try PDFDocument(data: WriterFixtures.plainPDF)
        let written = try original.writing(Self.everyTypeRecords(), options: .init(flatten: true))
        let reread = try PDFDocument(data: written)
        let remaining = reread.annotations()
        #expect(remaining.allSatisfy { $0.type == .link })
        let page = reread.pages[0]
        let contents = try #require(reread.resolve(page.dictionary["Contents"] ?? .null).arrayValue)
        let last = try #require(reread.resolve(contents.last!).streamValue)
        let drawn = String(decoding: try reread.decodedData(of: last), as: UTF8.self)
        #expect(drawn.components(separatedBy: " Do").count - 1 == Self.everyTypeRecords().annotations.count - 2)
    }

    /// Encrypted files stay encrypted with their handler: RC4 with an empty user password,
    /// AES-128 with a user password, and AES-256 (R6) opened with its owner password.
    @Test(arguments: [
        (EncryptedFixtures.Method.rc4, "", ""),
        (.aes128, "asdfzxcv", "asdfzxcv"),
        (.aes256, "asdfzxcv", "owner-secret"),
    ])
    func encryptedFilesStayEncrypted(method: EncryptedFixtures.Method, userPassword: String, password: String) throws {
        let bytes = try EncryptedFixtures.make(method, userPassword: userPassword, ownerPassword: "owner-secret")
        let original = try PDFDocument(data: bytes, password: password)
        var note = WriterFixtures.base(.note, "secret", left: 10, top: 10, width: 20, height: 20)
        note.text = AnnotationText(value: "Encrypted text")
        let written = try original.writing(InstantDocumentJSON(annotations: [note]))
        #expect(!String(decoding: written, as: UTF8.self).contains("Encrypted text"))
        let reread = try PDFDocument(data: written, password: password)
        #expect(reread.annotations().first?.text?.value == "Encrypted text")
        #expect(reread.trailer["Encrypt"] != nil)
        // A file that needed its password still does.
        let neededPassword = (try? PDFDocument(data: bytes)) == nil
        #expect(((try? PDFDocument(data: written)) == nil) == neededPassword)
    }

    /// Found by fuzzing: a damaged encrypted file whose page tree points at the encryption
    /// dictionary. Adding a note to that "page" would rewrite the dictionary and lock the file;
    /// it is refused instead.
    @Test func theEncryptionDictionaryIsNeverRewritten() throws {
        var bytes = try EncryptedFixtures.make(.rc4, userPassword: "", ownerPassword: "owner-secret")
        let kids = try #require(bytes.range(of: Data("/Kids [\(EncryptedFixtures.pageNumber) 0 R]".utf8)))
        bytes.replaceSubrange(kids, with: Data("/Kids [\(EncryptedFixtures.encryptionNumber) 0 R]".utf8))
        let document = try PDFDocument(data: bytes)
        try #require(document.pageCount == 1)
        var note = WriterFixtures.base(.note, "n", left: 10, top: 10)
        note.text = AnnotationText(value: "x")
        #expect {
            try document.writing(InstantDocumentJSON(annotations: [note]))
        } throws: { error in
            (error as? PDFError)?.code == .unwritableRecord
                && (error as? PDFError)?.message.contains("encryption dictionary") == true
        }
    }

    /// A damaged page whose `/Annots` names the catalog, the page tree or the page itself, or
    /// that lists itself as an annotation: the update leaves those objects dictionaries and never
    /// frees them, so the written file still opens (found by fuzzing).
    @Test(arguments: [
        "/Annots 1 0 R", "/Annots 2 0 R", "/Annots 3 0 R", "/Annots [3 0 R] /Subtype /Square /Rect [0 0 9 9]",
    ])
    func structuralObjectsSurviveADamagedAnnotsEntry(_ annots: String) throws {
        let pdf = """
            %PDF-1.4
            1 0 obj <</Type /Catalog /Pages 2 0 R>> endobj
            2 0 obj <</Type /Pages /Kids [3 0 R] /Count 1>> endobj
            3 0 obj <</Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] \(annots)>> endobj
            trailer <</Root 1 0 R /Size 4>>
            %%EOF
            """
        let document = try PDFDocument(data: Data(pdf.utf8))
        try #require(document.pageCount == 1)
        var note = WriterFixtures.base(.note, "n", left: 10, top: 10)
        note.text = AnnotationText(value: "added")
        for written in [
            try document.writing(InstantDocumentJSON(annotations: [note])),
            try document.applying(
                InstantDocumentJSON(annotations: [note], skippedPdfObjectIds: [1, 2, 3])),
        ] {
            let reopened = try PDFDocument(data: written)
            #expect(reopened.pageCount == 1)
            #expect(reopened.annotations().filter { $0.text?.value == "added" }.count == 1)
        }
    }

    /// A damaged trailer that names objects the file does not have (an /Encrypt and an /Info that
    /// resolve to nothing): new objects never take those numbers, so the file does not turn
    /// "encrypted" by its own update, and the new trailer leaves them out (found by fuzzing).
    @Test func danglingTrailerReferencesAreNotTakenByNewObjects() throws {
        let pdf = """
            %PDF-1.4
            1 0 obj <</Type /Catalog /Pages 2 0 R>> endobj
            2 0 obj <</Type /Pages /Kids [3 0 R] /Count 1>> endobj
            3 0 obj <</Type /Page /Parent 2 0 R /MediaBox [0 0 200 200]>> endobj
            trailer <</Root 1 0 R /Info 5 0 R /Encrypt 4 0 R>>
            %%EOF
            """
        let document = try PDFDocument(data: Data(pdf.utf8))
        var note = WriterFixtures.base(.note, "n", left: 10, top: 10)
        note.text = AnnotationText(value: "added")
        let update = try document.incrementalUpdate(InstantDocumentJSON(annotations: [note]))
        let text = String(decoding: update, as: UTF8.self)
        #expect(!text.contains("\n4 0 obj") && !text.contains("\n5 0 obj"))
        #expect(!text.contains("/Encrypt") && !text.contains("/Info"))
        let reopened = try PDFDocument(data: Data(pdf.utf8) + update)
        #expect(reopened.annotations().map(\.text?.value) == ["added"])
    }

    /// A record on a page the PDF does not have is a clear error.
    @Test func recordOnMissingPageIsAnError() throws {
        let original = try PDFDocument(data: WriterFixtures.plainPDF)
        var note = WriterFixtures.base(.note, "n", left: 10, top: 10)
        note.pageIndex = 3
        #expect {
            try original.writing(InstantDocumentJSON(annotations: [note]))
        } throws: { error in
            (error as? PDFError)?.code == .unwritableRecord
                && (error as? PDFError)?.message.contains("has 1 pages") == true
        }
    }

    /// The serializer writes numbers, names and strings every reader parses back the same.
    @Test func serializedObjectsParseBack() throws {
        let object = PDFObject.dictionary(
            PDFDictionary([
                "Name": .name("A B#(c)/é"), "Real": .real(-0.000_000_1), "Small": .real(1.25),
                "Text": .string(Data("(nested) \\ back\nline".utf8)), "Binary": .string(Data([0, 255, 16])),
                "List": .array([.integer(-3), .bool(true), .null, .reference(PDFReference(number: 7, generation: 2))]),
            ]))
        var parser = PDFParser(bytes: PDFSerializer.bytes(object))
        let parsed = try parser.readObject()
        var expected = object.dictionaryValue!
        expected["Real"] = .integer(0)
        #expect(parsed.dictionaryValue?.entries.count == expected.entries.count)
        for (key, value) in expected.entries {
            let actual = parsed.dictionaryValue?[key]
            #expect(
                actual == value || (actual?.doubleValue != nil && actual?.doubleValue == value.doubleValue), "\(key)")
        }
    }
}
