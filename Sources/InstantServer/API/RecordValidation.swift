import InstantJSON

/// The checks a record's Instant JSON object must pass before it is stored.
///
/// These cover what the server relies on (the record's type, page and geometry); the complete
/// format rules belong to the InstantJSON module.
enum RecordValidation {
    /// The problem with a record, or `nil` if it is acceptable. `path` names the record in messages.
    static func problem(kind: RecordKind, content: JSONValue, pageCount: Int, path: String) -> String? {
        guard let object = content.objectValue else { return "\(path): expected an object" }
        switch kind {
        case .annotation:
            guard let type = object["type"]?.stringValue, type.hasPrefix("pspdfkit/") else {
                return "\(path).type: expected a string like \"pspdfkit/ink\""
            }
            if let problem = versionProblem(object, path: path) { return problem }
            if let problem = pageProblem(object, pageCount: pageCount, path: path) { return problem }
            guard let bbox = object["bbox"]?.arrayValue, bbox.count == 4, bbox.allSatisfy(\.isNumber) else {
                return "\(path).bbox: expected 4 numbers [left, top, width, height]"
            }
        case .comment:
            guard object["rootId"]?.stringValue != nil else { return "\(path).rootId: expected a string" }
            guard let text = object["text"]?.objectValue, text["value"]?.stringValue != nil else {
                return "\(path).text: expected an object {\"format\": \"plain\" or \"xhtml\", \"value\": string}"
            }
            if let problem = pageProblem(object, pageCount: pageCount, path: path) { return problem }
        case .formFieldValue:
            guard object["name"]?.stringValue?.isEmpty == false else {
                return "\(path).name: expected the form field's name"
            }
        case .formField:
            guard object["name"]?.stringValue?.isEmpty == false else {
                return "\(path).name: expected the form field's name"
            }
            guard object["type"]?.stringValue != nil else { return "\(path).type: expected a string" }
        case .bookmark:
            guard object["action"]?.objectValue != nil else { return "\(path).action: expected an action object" }
        default:
            break
        }
        if let id = object["id"], id.stringValue == nil {
            return "\(path).id: expected a string"
        }
        if let id = object["id"]?.stringValue, (try? Identifiers.validate(id, what: "record id")) == nil {
            return "\(path).id: not a valid id (1 to 256 bytes, no slashes, '..' or control characters)"
        }
        return nil
    }

    private static func versionProblem(_ object: [String: JSONValue], path: String) -> String? {
        guard let version = object["v"]?.integerValue, version >= 1 else {
            return "\(path).v: expected the format version, an integer such as 2"
        }
        return nil
    }

    private static func pageProblem(_ object: [String: JSONValue], pageCount: Int, path: String) -> String? {
        guard let page = object["pageIndex"]?.integerValue, page >= 0 else {
            return "\(path).pageIndex: expected an integer ≥ 0"
        }
        if page >= pageCount {
            return "\(path).pageIndex: \(page) is past the document's last page (it has \(pageCount) pages)"
        }
        return nil
    }
}
