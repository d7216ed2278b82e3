import Foundation

/// A comment in a thread: its text and the thread's root annotation (`rootId`).
public struct Comment: InstantRecord {
    public var json: JSONObject

    public init(uncheckedJSON: JSONObject) { self.json = uncheckedJSON }

    /// A new version 2 comment in the thread of the root annotation `rootId`.
    public init(rootId: String, pageIndex: Int, text: AnnotationText, id: String? = nil) {
        json = [
            "v": 2, "type": "pspdfkit/comment", "rootId": .string(rootId), "pageIndex": .integer(Int64(pageIndex)),
            "text": text.json(version: 2),
        ]
        if let id { json["id"] = .string(id) }
    }

    public var version: Int {
        get { int("v") ?? 2 }
        set { set("v", newValue) }
    }

    public var id: String? {
        get { string("id") }
        set { set("id", newValue) }
    }

    /// The id of the annotation at the root of the thread.
    public var rootId: String {
        get { string("rootId") ?? "" }
        set { set("rootId", newValue) }
    }

    public var pageIndex: Int {
        get { int("pageIndex") ?? 0 }
        set { set("pageIndex", newValue) }
    }

    public var text: AnnotationText? {
        get { json["text"].flatMap(AnnotationText.init(json:)) }
        set { json["text"] = newValue?.json(version: version) }
    }

    public var creatorName: String? {
        get { string("creatorName") }
        set { set("creatorName", newValue) }
    }

    public var createdAt: String? {
        get { string("createdAt") }
        set { set("createdAt", newValue) }
    }

    public var updatedAt: String? {
        get { string("updatedAt") }
        set { set("updatedAt", newValue) }
    }

    public var pdfObjectId: Int? {
        get { int("pdfObjectId") }
        set { set("pdfObjectId", newValue) }
    }

    public var customData: JSONValue? {
        get { json["customData"] }
        set { json["customData"] = newValue }
    }

    public var group: String? {
        get { string("group") }
        set { set("group", newValue) }
    }

    public static func validationErrors(of value: JSONValue, at path: String) -> [InstantJSONError] {
        let version = value["v"]?.intValue ?? 2
        let rules: [FieldRule] = [
            .required("v", .integerIn([1, 2])), .required("type", .stringIn(["pspdfkit/comment"])),
            .required("pageIndex", .nonNegativeInteger), .required("rootId", .string),
            .required("text", .text(version: version)), .optional("id", .string), .optional("createdAt", .date),
            .optional("updatedAt", .date), .optional("creatorName", .string), .optional("customData", .freeObject),
            .optional("pdfObjectId", .integer(minimum: 0)), .optional("group", .string),
        ]
        return objectErrors(value, at: path, rules: rules)
    }
}
