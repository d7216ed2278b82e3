import Foundation
import InstantJSON
import InstantServer
import InstantTesting
import Testing

@testable import Instant

@Suite("The PDF to show", .timeLimit(.minutes(10)))
struct PDFAccessTests {
    @Test func theDownloadedPDFItsPagesAndWhereAnnotationsGoOnThem() async throws {
        let server = try await LiveServer()
        defer { server.remove() }
        // Page 0: a crop box away from the origin, turned by 90°; page 1: plain US Letter.
        let pdf = TestPDF.assemble(
            [
                "<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>",
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 600 800] /CropBox [10 20 510 720] /Rotate 90 >>",
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>",
            ].map { Data($0.utf8) }, trailer: "/Root 1 0 R")
        let documentID = try await server.upload(pdf)
        let jwt = try await server.key.token(
            ClientClaims(
                documentID: documentID, permissions: ["read-document", "write", "download"], userID: "alice",
                expiration: Date().addingTimeInterval(3600)))
        let client = try server.client("pdf")
        let descriptor = try client.documentDescriptor(forJWT: jwt)
        let document = descriptor.editableDocument
        #expect { try document.pdfFileURL() } throws: { ($0 as? InstantError)?.code == .notDownloaded }
        #expect { try document.pages() } throws: { ($0 as? InstantError)?.code == .notDownloaded }

        try await descriptor.downloadAndWait(usingJWT: jwt)
        let url = try document.pdfFileURL()
        #expect(url.isFileURL)
        #expect(try Data(contentsOf: url) == pdf, "the PDF as uploaded")
        #expect(try document.pageCount() == 2)
        let pages = try document.pages()
        #expect(
            pages == [
                InstantPDFPage(index: 0, width: 500, height: 700, originX: 10, originY: 20, rotation: 90),
                InstantPDFPage(index: 1, width: 612, height: 792, originX: 0, originY: 0, rotation: 0),
            ])
        #expect(pages[0].displayWidth == 700 && pages[0].displayHeight == 500)
        // A bbox 30 pt from the crop box's left and 40 pt from its top, 100 × 50.
        let rect = pages[0].pdfRect(for: Rect(left: 30, top: 40, width: 100, height: 50))
        #expect(rect.x == 40 && rect.y == 630 && rect.width == 100 && rect.height == 50)
        #expect(try descriptor.readOnlyDocument().pages() == pages, "every document of the layer reads the same")
        await server.stop()
    }
}
