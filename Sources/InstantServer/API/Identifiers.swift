/// The rules for identifiers that appear in paths: document ids, layer names and record ids.
enum Identifiers {
    /// The longest accepted identifier, in UTF-8 bytes.
    static let maximumLength = 256

    /// Checks a document or record id: 1...256 bytes, no `/`, no NUL, not `.` or `..`.
    static func validate(_ value: String, what: String) throws(APIError) {
        if value.isEmpty {
            throw .badRequest("The \(what) is empty.")
        }
        if value.utf8.count > maximumLength {
            throw .badRequest("The \(what) is longer than \(maximumLength) bytes.")
        }
        if value.contains("/") || value.contains("\\") {
            throw .badRequest("The \(what) '\(value)' contains a slash, which is not allowed.")
        }
        if value.utf8.contains(0) {
            throw .badRequest("The \(what) contains a NUL byte, which is not allowed.")
        }
        if value == "." || value == ".." || value.contains("..") {
            throw .badRequest("The \(what) '\(value)' contains '..', which is not allowed.")
        }
        if value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw .badRequest("The \(what) contains a control character, which is not allowed.")
        }
    }

    /// Checks a layer name: the document id rules, and no `*`.
    static func validateLayerName(_ value: String) throws(APIError) {
        try validate(value, what: "layer name")
        if value.contains("*") {
            throw .badRequest("The layer name '\(value)' contains '*', which is not allowed.")
        }
    }
}
