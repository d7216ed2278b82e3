import Foundation
import InstantTesting
import Testing

@testable import InstantPDF

/// Where the reader looks for a PDF: like other readers, anywhere in the first 1,024 bytes
/// (mail gateways and web servers put headers or a byte order mark before `%PDF-`).
@Suite("PDF header")
struct PDFHeaderTests {
    /// A PDF after `count` bytes of something else (no `%`, so no other header appears in them).
    static func pdf(after count: Int, pageCount: Int = 3, crossReference: TestPDF.CrossReference) -> Data {
        Data((0..<count).map { UInt8(ascii: "a") + UInt8($0 % 26) })
            + TestPDF.make(pageCount: pageCount, crossReference: crossReference)
    }

    @Test(arguments: [TestPDF.CrossReference.table, .stream])
    func bytesBeforeTheHeaderAreSkipped(_ crossReference: TestPDF.CrossReference) throws {
        for prefix in [1, 200, 1019] {
            let document = try PDFDocument(data: Self.pdf(after: prefix, crossReference: crossReference))
            #expect(document.pageCount == 3, "\(prefix) bytes before %PDF-")
        }
    }

    @Test func theHeaderIsLookedForInTheFirst1024Bytes() {
        #expect(PDFDocument.findHeader(PDFBytes(Self.pdf(after: 1100, crossReference: .table))) == nil)
        #expect(PDFDocument.findHeader(PDFBytes(Self.pdf(after: 1019, crossReference: .table))) == 1019)
    }
}
