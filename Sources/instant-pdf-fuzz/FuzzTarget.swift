import Foundation
import InstantJSON
import InstantPDF

/// Everything a PDF from an untrusted upload goes through: opening (with recovery), the page tree,
/// the identity, every annotation, comment and form field as Instant JSON, opening with a
/// password, and two exports: all its annotations deleted and a note added, and the note, a
/// deletion and a reply applied as Instant JSON changes; each written as an incremental update
/// that must open again. It must never crash, hang or exhaust memory.
func exercise(_ data: Data) {
    for password in [nil, "x"] as [String?] {
        guard let document = try? PDFDocument(data: data, password: password) else { continue }
        _ = document.pageCount
        _ = document.pdfId
        _ = document.title
        let originals = document.originalRecords()
        var records = originals
        _ = records.serialized()
        _ = document.warnings
        guard document.pageCount > 0 else { continue }
        var note = Annotation(type: .note, pageIndex: 0, bbox: Rect(left: 10, top: 10, width: 20, height: 20))
        note.text = AnnotationText(value: "fuzz")
        records.annotations = [note]
        records.skippedPdfObjectIds = []
        if let written = try? document.writing(records, options: PDFExportOptions(flatten: data.count % 2 == 0)) {
            precondition((try? PDFDocument(data: written, password: password)) != nil, "a written PDF does not open")
        }
        // The same note as Instant JSON changes: the second original deleted, a reply to the first.
        var changes = InstantDocumentJSON(annotations: [note])
        let numbered = originals.annotations.filter { $0.pdfObjectId != nil }
        if numbered.count > 1, let deleted = numbered[1].pdfObjectId { changes.skippedPdfObjectIds = [deleted] }
        if let root = numbered.first, let id = root.id {
            changes.comments = [
                Comment(rootId: id, pageIndex: root.pageIndex, text: AnnotationText(value: "fuzz"), id: "fuzz-reply")
            ]
        }
        if let written = try? document.applying(changes) {
            precondition((try? PDFDocument(data: written, password: password)) != nil, "an applied PDF does not open")
        }
    }
}

#if FUZZING
/// The libFuzzer entry point (`swift build --sanitize fuzzer -Xswiftc -DFUZZING`, see Fuzz/README.md).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    exercise(Data(bytes: start, count: count))
    return 0
}
#else
/// Without the fuzzer: replays the files given as arguments (crashes found by the fuzzer, a
/// corpus), one at a time, printing each one's name first so that a crash names its input.
@main
struct FuzzReplay {
    static func main() {
        let paths = CommandLine.arguments.dropFirst()
        guard !paths.isEmpty else {
            print("usage: instant-pdf-fuzz FILE…  (replays inputs; build with -DFUZZING for libFuzzer)")
            return
        }
        for path in paths {
            print(path)
            guard let data = FileManager.default.contents(atPath: path) else {
                print("  cannot read \(path)")
                continue
            }
            exercise(data)
        }
        print("\(paths.count) inputs replayed")
    }
}
#endif
