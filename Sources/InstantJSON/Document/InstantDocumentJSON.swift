import Foundation

/// A document JSON: the changes of a document relative to its PDF — annotations, bookmarks, form
/// fields and their values, comments and attachments — plus the originals of the PDF it replaces
/// or deletes (`skippedPdfObjectIds`).
///
/// Rules of the format: an original whose object id is in ``skippedPdfObjectIds`` is not loaded
/// from the PDF; if an annotation with the same `pdfObjectId` is present it replaces the original,
/// otherwise the original counts as deleted. An annotation without `pdfObjectId` is new. An empty
/// document JSON leaves the PDF as it is.
public struct InstantDocumentJSON: Hashable, Sendable {
    /// The only `format` this library reads and writes.
    public static let format = "https://pspdfkit.com/instant-json/v1"

    /// The identity of the PDF the changes belong to.
    public var pdfId: PDFId?
    public var annotations: [Annotation]
    public var bookmarks: [Bookmark]
    public var formFields: [FormField]
    public var formFieldValues: [FormFieldValue]
    public var comments: [Comment]
    /// Attachments by key (the SHA-256 of their bytes).
    public var attachments: [String: Attachment]
    /// Object numbers of original annotations (and comments) that this document replaces or deletes.
    public var skippedPdfObjectIds: [Int]
    /// Ids of original bookmarks that this document replaces or deletes.
    public var skippedPdfBookmarkIds: [String]
    /// Object numbers of original form fields that this document replaces or deletes.
    public var skippedPdfFormFieldIds: [Int]
    /// Members of the document that this version does not know, kept as they are.
    public var unknownMembers: JSONObject

    public init(
        pdfId: PDFId? = nil, annotations: [Annotation] = [], bookmarks: [Bookmark] = [], formFields: [FormField] = [],
        formFieldValues: [FormFieldValue] = [], comments: [Comment] = [], attachments: [String: Attachment] = [:],
        skippedPdfObjectIds: [Int] = [], skippedPdfBookmarkIds: [String] = [], skippedPdfFormFieldIds: [Int] = [],
        unknownMembers: JSONObject = [:]
    ) {
        self.pdfId = pdfId
        self.annotations = annotations
        self.bookmarks = bookmarks
        self.formFields = formFields
        self.formFieldValues = formFieldValues
        self.comments = comments
        self.attachments = attachments
        self.skippedPdfObjectIds = skippedPdfObjectIds
        self.skippedPdfBookmarkIds = skippedPdfBookmarkIds
        self.skippedPdfFormFieldIds = skippedPdfFormFieldIds
        self.unknownMembers = unknownMembers
    }

    /// Whether the document carries no change at all.
    public var isEmpty: Bool {
        annotations.isEmpty && bookmarks.isEmpty && formFields.isEmpty && formFieldValues.isEmpty && comments.isEmpty
            && attachments.isEmpty && skippedPdfObjectIds.isEmpty && skippedPdfBookmarkIds.isEmpty
            && skippedPdfFormFieldIds.isEmpty
    }

    /// The document as a JSON value; empty arrays and objects are left out.
    public var jsonValue: JSONValue {
        var members = unknownMembers
        members["format"] = .string(Self.format)
        if let pdfId { members["pdfId"] = pdfId.json }
        func put(_ key: String, _ values: [JSONValue]) { members[key] = values.isEmpty ? nil : .array(values) }
        put("annotations", annotations.map(\.jsonValue))
        put("bookmarks", bookmarks.map(\.jsonValue))
        put("formFields", formFields.map(\.jsonValue))
        put("formFieldValues", formFieldValues.map(\.jsonValue))
        put("comments", comments.map(\.jsonValue))
        put("skippedPdfObjectIds", skippedPdfObjectIds.map { .integer(Int64($0)) })
        put("skippedPdfBookmarkIds", skippedPdfBookmarkIds.map(JSONValue.string))
        put("skippedPdfFormFieldIds", skippedPdfFormFieldIds.map { .integer(Int64($0)) })
        members["attachments"] = attachments.isEmpty ? nil : .object(attachments.mapValues(\.json))
        return .object(members)
    }

    /// The document as compact UTF-8 JSON with sorted keys.
    public func serialized() -> Data { jsonValue.serialized() }
}

/// The identity of a PDF: its trailer `/ID`, base64-encoded. `permanent` stays the same for the
/// life of the document; `changing` changes with every save.
public struct PDFId: Hashable, Sendable {
    public var permanent: String
    public var changing: String

    public init(permanent: String, changing: String) {
        self.permanent = permanent
        self.changing = changing
    }

    /// The identity from the raw bytes of the two strings of a PDF's trailer `/ID`.
    public init(permanent: Data, changing: Data) {
        self.init(permanent: permanent.base64EncodedString(), changing: changing.base64EncodedString())
    }

    public var json: JSONValue { ["permanent": .string(permanent), "changing": .string(changing)] }
}
