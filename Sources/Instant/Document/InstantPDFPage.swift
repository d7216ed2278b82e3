import Foundation
import InstantJSON
import InstantPDF

/// One page of a document's PDF, as an app needs it to render the page and place annotations.
///
/// Instant JSON places annotations (`bbox`) in the page's visible area, the crop box before
/// rotation: in points (1/72 inch) from its top-left corner, y growing downwards. ``width`` and
/// ``height`` are that area's size; ``pdfRect(for:)`` turns a `bbox` into the PDF's own
/// coordinates (y up, from the PDF's origin), which PDFKit's `PDFAnnotation` bounds and most PDF
/// renderers use.
public struct InstantPDFPage: Sendable, Hashable {
    /// The page's position, from 0 (the `pageIndex` of its annotations).
    public var index: Int
    /// The width of the page's visible area (crop box) in points, before rotation.
    public var width: Double
    /// The height of the page's visible area (crop box) in points, before rotation.
    public var height: Double
    /// The lower-left corner of the visible area in the PDF's own coordinates.
    public var originX: Double
    /// The lower-left corner of the visible area in the PDF's own coordinates.
    public var originY: Double
    /// How the page is shown: turned clockwise by 0, 90, 180 or 270 degrees.
    public var rotation: Int

    /// The width of the page as shown (rotation applied).
    public var displayWidth: Double { rotation % 180 == 0 ? width : height }
    /// The height of the page as shown (rotation applied).
    public var displayHeight: Double { rotation % 180 == 0 ? height : width }

    /// Creates a page.
    public init(index: Int, width: Double, height: Double, originX: Double, originY: Double, rotation: Int) {
        self.index = index
        self.width = width
        self.height = height
        self.originX = originX
        self.originY = originY
        self.rotation = rotation
    }

    /// A page from what InstantPDF read of it.
    init(_ page: PDFPage) {
        index = page.index
        width = page.cropBox.width
        height = page.cropBox.height
        originX = page.cropBox.minX
        originY = page.cropBox.minY
        rotation = page.rotation
    }

    /// An annotation's `bbox` in the PDF's own coordinates: the lower-left corner and the size,
    /// in points, y up.
    public func pdfRect(for bbox: Rect) -> (x: Double, y: Double, width: Double, height: Double) {
        (originX + bbox.left, originY + height - bbox.top - bbox.height, bbox.width, bbox.height)
    }
}

extension InstantDocument {
    /// The file of the document's PDF on this device, to render it: with PDFKit
    /// (`PDFDocument(url:)`) on Apple platforms, or with any PDF renderer elsewhere.
    ///
    /// The file holds the PDF as uploaded; the layer's records are not written into it: draw them
    /// from ``annotations()`` (see ``InstantPDFPage/pdfRect(for:)``). All layers of the document
    /// share the file: read it, never change or move it. It is removed with the document's local
    /// storage.
    /// - Throws: ``InstantError/Code/notDownloaded`` until the download finished.
    public func pdfFileURL() throws -> URL {
        let (descriptor, _) = try ready()
        return descriptor.store.pdfURL(documentID: descriptor.identifier)
    }

    /// The pages of the document's PDF, as InstantPDF reads them (once per descriptor).
    /// - Throws: ``InstantError/Code/notDownloaded`` until the download finished;
    ///   ``InstantError/Code/corruptedData`` if the PDF cannot be read.
    public func pages() throws -> [InstantPDFPage] {
        let (descriptor, _) = try ready()
        return try descriptor.pdfPages()
    }

    /// The number of pages of the document's PDF.
    /// - Throws: What ``pages()`` throws.
    public func pageCount() throws -> Int {
        try pages().count
    }
}
