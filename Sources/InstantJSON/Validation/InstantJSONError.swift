/// A problem with Instant JSON input: where it is (a JSON path such as `annotations[3].bbox`) and
/// which rule it breaks (such as `expected 4 numbers`).
///
/// The `description` puts both together: `annotations[3].bbox: expected 4 numbers`.
public struct InstantJSONError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of problem. New codes may be added; switch over them with a `default` case.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The bytes are not JSON (truncated, a stray character, bad escape, too deep, …).
        public static let malformedJSON = Code(rawValue: "malformedJSON")
        /// A required key is missing.
        public static let missingKey = Code(rawValue: "missingKey")
        /// A value has the wrong JSON type (a string where a number belongs, …).
        public static let wrongType = Code(rawValue: "wrongType")
        /// A value has the right type but is not allowed (negative page index, 3 numbers in a bbox, …).
        public static let invalidValue = Code(rawValue: "invalidValue")
        /// The document's `format` is not the Instant JSON format this library reads.
        public static let unsupportedFormat = Code(rawValue: "unsupportedFormat")
    }

    /// The kind of problem.
    public var code: Code
    /// Where the problem is, as a JSON path from the root of the input (`""` for the root itself).
    public var path: String
    /// The rule that the value breaks, in words.
    public var rule: String

    public init(code: Code, path: String, rule: String) {
        self.code = code
        self.path = path
        self.rule = rule
    }

    public var description: String {
        path.isEmpty ? rule : "\(path): \(rule)"
    }
}

/// A JSON path under construction: `annotations[3].bbox`.
struct JSONPath: Sendable {
    private(set) var rendered: String

    init(_ rendered: String = "") { self.rendered = rendered }

    func appending(key: String) -> JSONPath {
        JSONPath(rendered.isEmpty ? key : "\(rendered).\(key)")
    }

    func appending(index: Int) -> JSONPath {
        JSONPath("\(rendered)[\(index)]")
    }
}
