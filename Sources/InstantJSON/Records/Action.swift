/// What happens when a link, bookmark or widget is activated: go to a page, open a URI, run a
/// script, submit a form, … Actions can chain through `subAction`.
public struct Action: InstantRecord {
    public var json: JSONObject

    public init(uncheckedJSON: JSONObject) { self.json = uncheckedJSON }

    /// The kind of action.
    public struct Kind: WireEnum {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let goTo: Kind = "goTo"
        public static let goToRemote: Kind = "goToRemote"
        public static let goToEmbedded: Kind = "goToEmbedded"
        public static let launch: Kind = "launch"
        public static let uri: Kind = "uri"
        public static let hide: Kind = "hide"
        public static let javaScript: Kind = "javascript"
        public static let submitForm: Kind = "submitForm"
        public static let resetForm: Kind = "resetForm"
        public static let named: Kind = "named"
    }

    /// An action of the given kind with the given members (besides `type`).
    public init(_ kind: Kind, _ members: JSONObject = [:]) {
        var json = members
        json["type"] = .string(kind.rawValue)
        self.json = json
    }

    /// Go to a page of this document (zero-based).
    public static func goTo(pageIndex: Int) -> Action { Action(.goTo, ["pageIndex": .integer(Int64(pageIndex))]) }

    /// Open a URI.
    public static func uri(_ uri: String) -> Action { Action(.uri, ["uri": .string(uri)]) }

    public var kind: Kind {
        get { Kind(rawValue: string("type") ?? "") }
        set { set("type", newValue.rawValue) }
    }

    /// The target page of a `goTo` action.
    public var pageIndex: Int? {
        get { int("pageIndex") }
        set { set("pageIndex", newValue) }
    }

    /// The URI of a `uri` or `submitForm` action.
    public var uri: String? {
        get { string("uri") }
        set { set("uri", newValue) }
    }

    /// The script of a `javascript` action.
    public var script: String? {
        get { string("script") }
        set { set("script", newValue) }
    }

    /// The file of a `goToRemote` or `goToEmbedded` action.
    public var relativePath: String? {
        get { string("relativePath") }
        set { set("relativePath", newValue) }
    }

    /// The named destination of a `goToRemote` action.
    public var namedDestination: String? {
        get { string("namedDestination") }
        set { set("namedDestination", newValue) }
    }

    /// The file of a `launch` action.
    public var filePath: String? {
        get { string("filePath") }
        set { set("filePath", newValue) }
    }

    /// The viewer action of a `named` action (`nextPage`, `print`, …).
    public var namedAction: String? {
        get { string("action") }
        set { set("action", newValue) }
    }

    /// The action that runs after this one.
    public var subAction: Action? {
        get { json["subAction"]?.objectValue.map(Action.init(uncheckedJSON:)) }
        set { json["subAction"] = newValue?.jsonValue }
    }

    public static func validationErrors(of value: JSONValue, at path: String) -> [InstantJSONError] {
        var errors: [InstantJSONError] = []
        check(value, at: JSONPath(path), depth: 0, into: &errors)
        return errors
    }

    private static let reference = ValueRule.object([
        .optional("fieldName", .string), .optional("pdfObjectId", .integer(minimum: nil)),
    ])

    static func rules(for kind: Kind) -> [FieldRule] {
        switch kind {
        case .goTo: return [.required("pageIndex", .nonNegativeInteger)]
        case .goToRemote: return [.required("relativePath", .string), .optional("namedDestination", .string)]
        case .goToEmbedded:
            return [
                .required("relativePath", .string), .optional("newWindow", .bool),
                .optional("targetType", .stringIn(["parent", "child"])),
            ]
        case .launch: return [.required("filePath", .string)]
        case .uri: return [.required("uri", .string)]
        case .hide: return [.required("hide", .bool), .required("annotationReferences", .array(reference))]
        case .javaScript: return [.required("script", .string)]
        case .submitForm:
            return [
                .required("uri", .string), .required("flags", .array(.string)), .optional("fields", .array(reference)),
            ]
        case .resetForm: return [.optional("flags", .string), .optional("fields", .array(reference))]
        case .named: return [.required("action", .string)]
        default: return []
        }
    }

    /// The checks of an action value at a path (the `type` decides the members).
    static func check(_ value: JSONValue, at path: JSONPath, depth: Int, into errors: inout [InstantJSONError]) {
        guard let members = value.objectValue else {
            errors.append(
                InstantJSONError(
                    code: .wrongType, path: path.rendered,
                    rule: "expected an action object, found \(value.kindDescription)"))
            return
        }
        guard let type = members["type"] else {
            errors.append(
                InstantJSONError(
                    code: .missingKey, path: path.appending(key: "type").rendered, rule: "required key is missing"))
            return
        }
        guard let kind = type.stringValue else {
            errors.append(
                InstantJSONError(
                    code: .wrongType, path: path.appending(key: "type").rendered,
                    rule: "expected a string, found \(type.kindDescription)"))
            return
        }
        FieldRule.check(rules(for: Kind(rawValue: kind)), in: members, at: path, into: &errors)
        if let subAction = members["subAction"] {
            guard depth < 32 else {
                errors.append(
                    InstantJSONError(code: .invalidValue, path: path.rendered, rule: "actions nested more than 32 deep")
                )
                return
            }
            check(subAction, at: path.appending(key: "subAction"), depth: depth + 1, into: &errors)
        }
    }
}
