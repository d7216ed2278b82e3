import InstantJSON

/// The checks a record's Instant JSON object must pass before it is stored: the format's rules
/// for its kind (the InstantJSON module's validation, strict), plus what only the server knows: the
/// document's page count and the id rules of its paths.
enum RecordValidation {
    /// The problem with a record, or `nil` if it is acceptable. `path` names the record in messages.
    /// Without a `pageCount`, a page index is checked to be one, not to be on a page of the
    /// document (``pageRangeProblem(page:pageCount:path:)`` does that later, from ``pageIndex(kind:content:)``).
    static func problem(kind: RecordKind, content: JSONValue, pageCount: Int?, path: String) -> String? {
        guard let object = content.objectValue else { return "\(path): expected an object" }
        let errors: [InstantJSONError]
        switch kind {
        case .annotation: errors = Annotation.validationErrors(of: content, at: path)
        case .comment: errors = Comment.validationErrors(of: content, at: path)
        case .formFieldValue: errors = FormFieldValue.validationErrors(of: content, at: path)
        case .formField: errors = FormField.validationErrors(of: content, at: path)
        case .bookmark: errors = Bookmark.validationErrors(of: content, at: path)
        default: errors = []
        }
        if let error = errors.first { return error.description }
        // Each member looked up once: this runs for every change of every push.
        // The format lets types it does not know through (files from newer versions read and
        // write back unchanged); the server stores only types every client can show and every
        // export can write.
        if kind == .annotation, let type = object["type"]?.stringValue,
            !AnnotationType.allKnown.contains(AnnotationType(rawValue: type))
        {
            return "\(path).type: '\(type.prefix(60))' is not an annotation type of Instant JSON (pspdfkit/ink, "
                + "pspdfkit/note, pspdfkit/shape/rectangle, …)"
        }
        if kind == .annotation || kind == .comment, let page = object["pageIndex"],
            let problem = pageProblem(page, pageCount: pageCount, path: path)
        {
            return problem
        }
        if let id = object["id"] {
            guard let id = id.stringValue else { return "\(path).id: expected a string" }
            if (try? Identifiers.validate(id, what: "record id")) == nil {
                return "\(path).id: not a valid id (1 to 256 bytes, no slashes, '..' or control characters)"
            }
        }
        return nil
    }

    /// The page index of a record that ``problem(kind:content:pageCount:path:)`` accepted without a
    /// page count, `nil` for a record on no page.
    static func pageIndex(kind: RecordKind, content: JSONValue) -> Int64? {
        guard kind == .annotation || kind == .comment else { return nil }
        return content["pageIndex"]?.integerValue
    }

    /// Whether a page index is past the document's last page.
    static func pageRangeProblem(page: Int64, pageCount: Int, path: String) -> String? {
        guard page >= pageCount else { return nil }
        return "\(path).pageIndex: \(page) is past the document's last page (it has \(pageCount) pages)"
    }

    private static func pageProblem(_ value: JSONValue, pageCount: Int?, path: String) -> String? {
        guard let page = value.integerValue, page >= 0 else {
            return "\(path).pageIndex: expected an integer ≥ 0"
        }
        return pageCount.flatMap { pageRangeProblem(page: page, pageCount: $0, path: path) }
    }
}
