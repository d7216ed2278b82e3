import HTTPTypes

extension HTTPFields {
    /// The value of the fields named `name`, as the name subscript gives it (repeated fields joined
    /// with ", "; not for `Cookie`, which the subscript joins with "; ").
    ///
    /// In a profile of 1-change pushes the subscript's join ran through generic code looked up at
    /// run time (`joined(separator:)` on a lazy map), about 1% of a node's processor time for the
    /// headers each sync request reads.
    func value(of name: HTTPField.Name) -> String? {
        assert(name != .cookie, "Cookie fields are joined with \"; \"")
        var value: String?
        for field in self where field.name == name {
            value = value.map { $0 + ", " + field.value } ?? field.value
        }
        return value
    }

    /// Whether the client asks to close the connection after the answer: one of the options its
    /// `Connection` fields list is `close`. The options are comma-separated tokens, with optional
    /// spaces around them, compared without regard to case (RFC 9110, section 7.6.1), so
    /// `Connection: keep-alive, Close` asks to close as `Connection: close` does. (Hummingbird's
    /// router closes only after a field that is exactly `close`; the sync route follows the RFC.)
    var asksToCloseConnection: Bool {
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        for field in self where field.name == .connection {
            // Option by option, as slices of the value (no array of them is made).
            var rest = field.value.utf8[...]
            while !rest.isEmpty {
                let end = rest.firstIndex(of: UInt8(ascii: ",")) ?? rest.endIndex
                let token = rest[..<end].drop(while: isSpace).reversed().drop(while: isSpace).reversed()
                // Letters only in `close`: setting the 0x20 bit lowers their capitals and nothing else.
                if token.count == Self.close.count, zip(token, Self.close).allSatisfy({ $0 | 0x20 == $1 }) {
                    return true
                }
                rest = end == rest.endIndex ? rest[end...] : rest[rest.index(after: end)...]
            }
        }
        return false
    }

    private static let close = Array("close".utf8)
}
