/// A bookmark: a named action, usually going to a page.
public struct Bookmark: InstantRecord {
    public var json: JSONObject

    public init(uncheckedJSON: JSONObject) { self.json = uncheckedJSON }

    /// A new bookmark with the given action.
    public init(name: String? = nil, action: Action, id: String? = nil) {
        json = ["v": 1, "type": "pspdfkit/bookmark", "action": action.jsonValue]
        if let name { json["name"] = .string(name) }
        if let id { json["id"] = .string(id) }
    }

    public var id: String? {
        get { string("id") }
        set { set("id", newValue) }
    }

    public var name: String? {
        get { string("name") }
        set { set("name", newValue) }
    }

    public var action: Action? {
        get { json["action"]?.objectValue.map(Action.init(uncheckedJSON:)) }
        set { json["action"] = newValue?.jsonValue }
    }

    /// The id of the original bookmark in the PDF, for bookmarks that came from the PDF.
    public var pdfBookmarkId: String? {
        get { string("pdfBookmarkId") }
        set { set("pdfBookmarkId", newValue) }
    }

    static let rules: [FieldRule] = [
        .required("v", .integerIn([1])), .required("type", .stringIn(["pspdfkit/bookmark"])),
        .required("action", .action), .optional("name", .string), .optional("id", .string),
        .optional("pdfBookmarkId", .string),
    ]

    public static func validationErrors(of value: JSONValue, at path: String) -> [InstantJSONError] {
        objectErrors(value, at: path, rules: rules)
    }
}
