import Foundation

/// The size of one page of a document, in PDF points, after the page's rotation is applied.
public struct PageInfo: Sendable, Hashable, Codable {
    /// The page width in points.
    public var width: Double
    /// The page height in points.
    public var height: Double
    /// The page rotation in degrees (0, 90, 180 or 270).
    public var rotation: Int

    /// Creates a page description.
    public init(width: Double, height: Double, rotation: Int = 0) {
        self.width = width
        self.height = height
        self.rotation = rotation
    }
}

/// The PDF's file identifier (trailer `/ID`), base64 encoded as in Instant JSON's `pdfId`.
public struct DocumentPDFID: Sendable, Hashable, Codable {
    /// The permanent identifier (first element of `/ID`).
    public var permanent: String
    /// The changing identifier (second element of `/ID`).
    public var changing: String

    /// Creates a PDF identifier.
    public init(permanent: String, changing: String) {
        self.permanent = permanent
        self.changing = changing
    }
}

/// A document as stored: one immutable PDF plus what the upload learned about it.
public struct StoredDocument: Sendable, Hashable {
    /// The document id (the client's `identifier`).
    public var id: String
    /// The title, from the upload or the PDF's metadata.
    public var title: String?
    /// The SHA-256 of the uploaded PDF, lowercase hex; the key of its blob.
    public var sourcePDFSHA256: String
    /// The size of the uploaded PDF in bytes.
    public var byteSize: Int
    /// The pages of the PDF.
    public var pages: [PageInfo]
    /// The PDF's file identifier, if it has one.
    public var pdfID: DocumentPDFID?
    /// Whether the PDF is encrypted with a user password.
    public var isPasswordProtected: Bool
    /// When the document was created.
    public var createdAt: Date

    /// Creates a document value.
    public init(
        id: String,
        title: String?,
        sourcePDFSHA256: String,
        byteSize: Int,
        pages: [PageInfo],
        pdfID: DocumentPDFID?,
        isPasswordProtected: Bool,
        createdAt: Date
    ) {
        self.id = id
        self.title = title
        self.sourcePDFSHA256 = sourcePDFSHA256
        self.byteSize = byteSize
        self.pages = pages
        self.pdfID = pdfID
        self.isPasswordProtected = isPasswordProtected
        self.createdAt = createdAt
    }

    /// The number of pages.
    public var pageCount: Int { pages.count }
}

/// A layer of a document with its current revision.
public struct StoredLayer: Sendable, Hashable {
    /// The document the layer belongs to.
    public var documentID: String
    /// The layer name; `""` is the default layer.
    public var name: String
    /// The layer's revision: the number of committed batches that changed it.
    public var revision: Int64

    /// Creates a layer value.
    public init(documentID: String, name: String, revision: Int64) {
        self.documentID = documentID
        self.name = name
        self.revision = revision
    }
}

/// Where the records of a new layer come from.
public enum LayerSource: Sendable, Hashable {
    /// The document's base records (the PDF's own annotations and form values).
    case baseRecords
    /// Nothing: the layer starts without records.
    case empty
    /// A copy of the current live records of another layer of the same document.
    case layer(String)
}

/// An immutable attachment (image or file data), addressed by the SHA-256 of its bytes.
public struct StoredAttachment: Sendable, Hashable {
    /// The SHA-256 of ``data``, lowercase hex.
    public var sha256: String
    /// The MIME type given at upload.
    public var contentType: String
    /// The attachment's bytes.
    public var data: Data

    /// Creates an attachment value.
    public init(sha256: String, contentType: String, data: Data) {
        self.sha256 = sha256
        self.contentType = contentType
        self.data = data
    }
}

/// How to list documents.
public struct DocumentQuery: Sendable, Hashable {
    /// The order of the listing.
    public enum Order: String, Sendable, Hashable {
        /// By creation time, then id.
        case createdAt = "created_at"
        /// By title, then id.
        case title
    }
    /// The order of the listing.
    public var order: Order = .createdAt
    /// Whether the listing ascends.
    public var ascending = false
    /// Only documents whose title contains this text (case-insensitive), if set.
    public var titleFilter: String?
    /// The maximum number of documents returned.
    public var limit = 10
    /// The number of matching documents skipped.
    public var offset = 0

    /// Creates a query with the defaults: newest first, ten documents.
    public init() {}
}

/// One page of a document listing.
public struct DocumentListing: Sendable, Hashable {
    /// The documents of the page.
    public var documents: [StoredDocument]
    /// The number of documents matching the query in total.
    public var totalCount: Int

    /// Creates a listing page.
    public init(documents: [StoredDocument], totalCount: Int) {
        self.documents = documents
        self.totalCount = totalCount
    }
}

/// An attachment to send without loading it whole (``InstantStorage/attachmentContent(documentID:sha256:)``).
public struct AttachmentContent: Sendable {
    /// The SHA-256 of the bytes, lowercase hex.
    public var sha256: String
    /// The MIME type given at upload.
    public var contentType: String
    /// The size in bytes.
    public var byteSize: Int
    /// Reads a range of the bytes (within `0..<byteSize`).
    public var read: @Sendable (Range<Int>) async throws -> Data
}
