/// The rules for identifiers that appear in paths: document ids, layer names and record ids.
enum Identifiers {
    /// The longest accepted identifier, in UTF-8 bytes.
    static let maximumLength = 256

    /// Checks a document or record id: 1...256 bytes, no `/`, no NUL, not `.` or `..`. `what` names
    /// it in the error, and is made only then: a push's every record id comes through here.
    static func validate(_ value: String, what: @autoclosure () -> String) throws(APIError) {
        // One pass over the bytes (every request's path ids come through here); the checks then
        // report in a fixed order. A control character is a byte under 0x20 or 0x7F in UTF-8.
        var (length, slash, nul, dots, control) = (0, false, false, false, false)
        var previous: UInt8 = 0
        for byte in value.utf8 {
            length += 1
            switch byte {
            case UInt8(ascii: "/"), UInt8(ascii: "\\"): slash = true
            case 0: nul = true
            case UInt8(ascii: "."): dots = dots || previous == UInt8(ascii: ".")
            case 0x01..<0x20, 0x7F: control = true
            default: break
            }
            previous = byte
        }
        if length == 0 {
            throw .badRequest("The \(what()) is empty.")
        }
        if length > maximumLength {
            throw .badRequest("The \(what()) is longer than \(maximumLength) bytes.")
        }
        if slash {
            throw .badRequest("The \(what()) '\(value)' contains a slash, which is not allowed.")
        }
        if nul {
            throw .badRequest("The \(what()) contains a NUL byte, which is not allowed.")
        }
        if value == "." || dots {
            throw .badRequest("The \(what()) '\(value)' contains '..', which is not allowed.")
        }
        if control {
            throw .badRequest("The \(what()) contains a control character, which is not allowed.")
        }
    }

    /// Checks a layer name: the document id rules, and no `*`.
    static func validateLayerName(_ value: String) throws(APIError) {
        try validate(value, what: "layer name")
        if value.utf8.contains(UInt8(ascii: "*")) {
            throw .badRequest("The layer name '\(value)' contains '*', which is not allowed.")
        }
    }
}
