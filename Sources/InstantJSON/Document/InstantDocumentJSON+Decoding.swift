import Foundation

extension InstantDocumentJSON {
    /// How to treat records that break the format.
    public enum ValidationMode: Sendable {
        /// Any problem rejects the whole document.
        case strict
        /// Records with problems are left out and reported; problems of the document itself
        /// (malformed JSON, wrong `format`, a member of the wrong type) still reject it.
        case lenient
    }

    /// A document read in lenient mode, with the problems of the records left out.
    public struct DecodingResult: Sendable {
        public var document: InstantDocumentJSON
        /// One problem per record left out (the first found in it), in document order.
        public var skipped: [InstantJSONError]
    }

    /// Reads a document JSON from UTF-8 bytes.
    ///
    /// - Throws: in ``ValidationMode/strict`` mode, the first ``InstantJSONError`` found; in
    ///   lenient mode, only problems of the document itself.
    public static func decode(_ data: some DataProtocol, mode: ValidationMode = .strict) throws(InstantJSONError)
        -> DecodingResult
    {
        try decode(JSONValue(parsing: data), mode: mode)
    }

    /// Reads a document JSON from a JSON value; see ``decode(_:mode:)-(DataProtocol,_)``.
    public static func decode(_ value: JSONValue, mode: ValidationMode = .strict) throws(InstantJSONError)
        -> DecodingResult
    {
        guard var members = value.objectValue else {
            throw InstantJSONError(
                code: .wrongType, path: "", rule: "expected a document object, found \(value.kindDescription)")
        }
        guard let format = members.removeValue(forKey: "format") else {
            throw InstantJSONError(code: .missingKey, path: "format", rule: "required key is missing")
        }
        guard format.stringValue == Self.format else {
            throw InstantJSONError(
                code: .unsupportedFormat, path: "format",
                rule:
                    "expected \"\(Self.format)\", found \(format.stringValue.map { "\"\($0)\"" } ?? format.kindDescription)"
            )
        }
        var skipped: [InstantJSONError] = []

        func records<Record: InstantRecord>(_ key: String, as: Record.Type) throws(InstantJSONError) -> [Record] {
            guard let value = members.removeValue(forKey: key) else { return [] }
            guard let elements = value.arrayValue else {
                throw InstantJSONError(
                    code: .wrongType, path: key, rule: "expected an array, found \(value.kindDescription)")
            }
            var result: [Record] = []
            result.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() {
                let errors = Record.validationErrors(of: element, at: "\(key)[\(index)]")
                if let error = errors.first {
                    if mode == .strict { throw error }
                    skipped.append(error)
                    continue
                }
                result.append(Record(uncheckedJSON: element.objectValue ?? [:]))
            }
            return result
        }

        func list<Element>(_ key: String, _ rule: ValueRule, _ read: (JSONValue) -> Element?) throws(InstantJSONError)
            -> [Element]
        {
            guard let value = members.removeValue(forKey: key) else { return [] }
            var errors: [InstantJSONError] = []
            ValueRule.array(rule).check(value, at: JSONPath(key), into: &errors)
            if let error = errors.first { throw error }
            return value.arrayValue!.compactMap(read)
        }

        var document = InstantDocumentJSON()
        if let pdfId = members.removeValue(forKey: "pdfId") {
            var errors: [InstantJSONError] = []
            ValueRule.object([.required("permanent", .string), .required("changing", .string)])
                .check(pdfId, at: JSONPath("pdfId"), into: &errors)
            if let error = errors.first { throw error }
            document.pdfId = PDFId(
                permanent: pdfId["permanent"]!.stringValue!, changing: pdfId["changing"]!.stringValue!)
        }
        document.annotations = try records("annotations", as: Annotation.self)
        document.bookmarks = try records("bookmarks", as: Bookmark.self)
        document.formFields = try records("formFields", as: FormField.self)
        document.formFieldValues = try records("formFieldValues", as: FormFieldValue.self)
        document.comments = try records("comments", as: Comment.self)
        document.skippedPdfObjectIds = try list("skippedPdfObjectIds", .nonNegativeInteger, \.intValue)
        document.skippedPdfBookmarkIds = try list("skippedPdfBookmarkIds", .string, \.stringValue)
        document.skippedPdfFormFieldIds = try list("skippedPdfFormFieldIds", .nonNegativeInteger, \.intValue)
        if let attachments = members.removeValue(forKey: "attachments") {
            guard let entries = attachments.objectValue else {
                throw InstantJSONError(
                    code: .wrongType, path: "attachments",
                    rule: "expected an object, found \(attachments.kindDescription)")
            }
            for key in entries.keys.sorted() {
                do {
                    document.attachments[key] = try Attachment(json: entries[key]!, at: "attachments.\(key)")
                } catch {
                    if mode == .strict { throw error }
                    skipped.append(error)
                }
            }
        }
        document.unknownMembers = members
        return DecodingResult(document: document, skipped: skipped)
    }

    /// Reads a document JSON in strict mode.
    public init(parsing data: some DataProtocol) throws(InstantJSONError) {
        self = try Self.decode(data, mode: .strict).document
    }
}
