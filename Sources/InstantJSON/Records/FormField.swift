/// A form field: its name, kind, options and the widget annotations that show it.
public struct FormField: InstantRecord {
    public var json: JSONObject

    public init(uncheckedJSON: JSONObject) { self.json = uncheckedJSON }

    /// The kind of field, such as `pspdfkit/form-field/text`.
    public struct Kind: WireEnum {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let button: Kind = "pspdfkit/form-field/button"
        public static let checkBox: Kind = "pspdfkit/form-field/checkbox"
        public static let comboBox: Kind = "pspdfkit/form-field/combobox"
        public static let listBox: Kind = "pspdfkit/form-field/listbox"
        public static let radio: Kind = "pspdfkit/form-field/radio"
        public static let text: Kind = "pspdfkit/form-field/text"
        public static let signature: Kind = "pspdfkit/form-field/signature"
    }

    /// An option of a choice, check box or radio field: what is shown and what is stored.
    public struct Option: Hashable, Sendable {
        public var label: String
        public var value: String
        public init(label: String, value: String) {
            self.label = label
            self.value = value
        }
    }

    /// A new field of the given kind, shown by the given widget annotations.
    public init(kind: Kind, name: String, label: String = "", annotationIds: [String], id: String? = nil) {
        json = [
            "v": 1, "type": .string(kind.rawValue), "name": .string(name), "label": .string(label),
            "annotationIds": .array(annotationIds.map(JSONValue.string)),
        ]
        if let id { json["id"] = .string(id) }
    }

    public var kind: Kind {
        get { Kind(rawValue: string("type") ?? "") }
        set { set("type", newValue.rawValue) }
    }

    public var id: String? {
        get { string("id") }
        set { set("id", newValue) }
    }

    /// The fully qualified field name (`parent.child`).
    public var name: String {
        get { string("name") ?? "" }
        set { set("name", newValue) }
    }

    public var label: String {
        get { string("label") ?? "" }
        set { set("label", newValue) }
    }

    /// The ids of the widget annotations of the field.
    public var annotationIds: [String] {
        get { json["annotationIds"]?.arrayValue?.compactMap(\.stringValue) ?? [] }
        set { json["annotationIds"] = .array(newValue.map(JSONValue.string)) }
    }

    public var pdfObjectId: Int? {
        get { int("pdfObjectId") }
        set { set("pdfObjectId", newValue) }
    }

    /// `readOnly`, `required`, `noExport`.
    public var flags: [String]? {
        get { json["flags"]?.arrayValue?.compactMap(\.stringValue) }
        set { json["flags"] = newValue.map { .array($0.map(JSONValue.string)) } }
    }

    public var options: [Option]? {
        get {
            json["options"]?.arrayValue?.compactMap { option in
                guard let label = option["label"]?.stringValue, let value = option["value"]?.stringValue else {
                    return nil
                }
                return Option(label: label, value: value)
            }
        }
        set {
            json["options"] = newValue.map {
                .array($0.map { ["label": .string($0.label), "value": .string($0.value)] })
            }
        }
    }

    public var defaultValue: String? {
        get { string("defaultValue") }
        set { set("defaultValue", newValue) }
    }

    public var defaultValues: [String]? {
        get { json["defaultValues"]?.arrayValue?.compactMap(\.stringValue) }
        set { json["defaultValues"] = newValue.map { .array($0.map(JSONValue.string)) } }
    }

    static let option = ValueRule.object([.required("label", .string), .required("value", .string)])

    static func rules(for kind: Kind) -> [FieldRule] {
        let base: [FieldRule] = [
            .required("v", .integerIn([1])), .required("type", .string), .optional("id", .string),
            .required("name", .string), .required("label", .string), .required("annotationIds", .array(.string)),
            .optional("pdfObjectId", .integer(minimum: 0)), .optional("flags", .array(.string)),
            .optional("additionalActions", .freeObject),
        ]
        let choice: [FieldRule] = [
            .required("options", .array(option)), .optional("multiSelect", .bool), .optional("commitOnChange", .bool),
            .optional("defaultValues", .array(.string)),
        ]
        switch kind {
        case .button: return base + [.required("buttonLabel", .string)]
        case .listBox: return base + choice
        case .comboBox: return base + choice + [.required("edit", .bool), .required("doNotSpellCheck", .bool)]
        case .checkBox:
            return base + [.required("options", .array(option)), .required("defaultValues", .array(.string))]
        case .radio:
            return base + [
                .required("options", .array(option)), .optional("defaultValue", .string),
                .optional("noToggleToOff", .bool), .optional("radiosInUnison", .bool),
            ]
        case .text:
            return base + [
                .optional("password", .bool), .optional("maxLength", .nonNegativeInteger),
                .required("doNotSpellCheck", .bool), .required("doNotScroll", .bool), .required("multiLine", .bool),
                .required("comb", .bool), .required("defaultValue", .string), .optional("richText", .bool),
                .optional("richTextValue", .string),
            ]
        default: return base
        }
    }

    public static func validationErrors(of value: JSONValue, at path: String) -> [InstantJSONError] {
        objectErrors(value, at: path, rules: rules(for: Kind(rawValue: value["type"]?.stringValue ?? "")))
    }
}

/// The value of a form field: text, the selected options, or the on-state of check boxes and radios.
public struct FormFieldValue: InstantRecord {
    public var json: JSONObject

    public init(uncheckedJSON: JSONObject) { self.json = uncheckedJSON }

    /// A value for the field with the given fully qualified name.
    public init(name: String, value: JSONValue, optionIndexes: [Int]? = nil) {
        json = ["v": 1, "type": "pspdfkit/form-field-value", "name": .string(name), "value": value]
        if let optionIndexes { json["optionIndexes"] = .array(optionIndexes.map { .integer(Int64($0)) }) }
    }

    /// The fully qualified field name.
    public var name: String {
        get { string("name") ?? "" }
        set { set("name", newValue) }
    }

    /// A string, `null`, or an array of strings (the selected options).
    public var value: JSONValue? {
        get { json["value"] }
        set { json["value"] = newValue }
    }

    /// The selected options of choice fields, by index.
    public var optionIndexes: [Int]? {
        get { json["optionIndexes"]?.arrayValue?.compactMap(\.intValue) }
        set { json["optionIndexes"] = newValue.map { .array($0.map { .integer(Int64($0)) }) } }
    }

    static let rules: [FieldRule] = [
        .required("v", .integerIn([1])), .required("type", .stringIn(["pspdfkit/form-field-value"])),
        .required("name", .string),
        .optional(
            "value",
            .either(
                .either(.string, .array(.string), meaning: "a string or an array of strings"),
                .stringIn([]), meaning: "a string, null or an array of strings")),
        .optional("optionIndexes", .array(.nonNegativeInteger)), .optional("isFitting", .bool),
    ]

    public static func validationErrors(of value: JSONValue, at path: String) -> [InstantJSONError] {
        var members = value.objectValue
        // `null` is a valid value (an empty field).
        if members?["value"]?.isNull == true { members?["value"] = nil }
        return objectErrors(members.map(JSONValue.object) ?? value, at: path, rules: rules)
    }
}
