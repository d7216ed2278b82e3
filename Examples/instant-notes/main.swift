// instant-notes: a complete command-line app on the Instant SDK, with `import Instant` alone.
//
//     instant-notes <server-url> <jwt> <data-directory> [note text]
//
// Downloads the layer the JWT is for (once; later runs open the local copy), adds a note with the
// given text on the first page, syncs, and prints the PDF's pages and the layer's notes with who
// wrote them. Its edits are committed to the local store before they are sent: run it offline and
// the note syncs on the next run.
import Foundation
import Instant

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 3 || arguments.count == 4, let serverURL = URL(string: arguments[1]) else {
    FileHandle.standardError.write(Data("usage: instant-notes <server-url> <jwt> <data-directory> [note text]\n".utf8))
    exit(64)
}
let jwt = arguments[2]
let dataDirectory = URL(fileURLWithPath: arguments[3])

do {
    let client = try InstantClient(serverURL: serverURL, dataDirectory: dataDirectory)
    let descriptor = try client.documentDescriptor(forJWT: jwt)
    if descriptor.isDownloaded {
        // Tokens live in memory only: a new launch hands the token over again.
        try await descriptor.reauthenticateAndWait(withJWT: jwt)
    } else {
        try await descriptor.downloadAndWait(usingJWT: jwt)
        print("downloaded document \(descriptor.identifier), layer '\(descriptor.layerName)'")
    }
    let document = descriptor.editableDocument
    if let text = arguments.dropFirst(3).first {
        var note = Annotation(type: .note, pageIndex: 0, bbox: Rect(left: 20, top: 20, width: 24, height: 24))
        note.text = AnnotationText(value: text)
        note.icon = "comment"
        let added = try document.add(note)
        print("added note \(try descriptor.identifier(for: added))")
    }
    try await descriptor.syncAndWait()
    // The PDF to show, for any renderer (PDFKit: PDFDocument(url:)); the notes are drawn from the records.
    let pages = try document.pages()
    print("\(pages.count) pages: \(pages.map { "\(Int($0.width))×\(Int($0.height))" }.joined(separator: ", ")) pt")
    print("PDF: \(try document.pdfFileURL().path)")
    let notes = try document.annotations().filter { $0.type == .note }
    print("\(notes.count) notes, state \(descriptor.documentState):")
    for note in notes {
        let author = try document.serverMetadata(for: note)?.createdBy ?? "not synced yet"
        print("- \(note.text?.value ?? "") (by \(author))")
    }
} catch {
    FileHandle.standardError.write(Data("instant-notes: \(error)\n".utf8))
    exit(1)
}
