import Crypto
import Foundation

/// Binary data of a document, such as the image of an image annotation, keyed by the SHA-256 of
/// its bytes.
public struct Attachment: Hashable, Sendable {
    /// The bytes.
    public var data: Data
    /// The MIME type, such as `image/png`.
    public var contentType: String

    /// An attachment; see ``validateContentType(_:)`` for the content types accepted.
    public init(data: Data, contentType: String) {
        self.data = data
        self.contentType = contentType
    }

    /// The key of the attachment: the SHA-256 of its bytes, in lowercase hexadecimal.
    public var key: String { Self.key(for: data) }

    /// The SHA-256 of bytes in lowercase hexadecimal: the key an attachment of them has.
    public static func key(for data: Data) -> String {
        SHA256.hash(data: data).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// The attachment as the document JSON writes it: `{"binary": base64, "contentType": …}`.
    public var json: JSONValue {
        ["binary": .string(data.base64EncodedString()), "contentType": .string(contentType)]
    }

    /// Reads an attachment of the document JSON, checking the base64 and the content type.
    public init(json value: JSONValue, at path: String = "") throws(InstantJSONError) {
        var errors: [InstantJSONError] = []
        ValueRule.object([.required("binary", .string), .required("contentType", .string)])
            .check(value, at: JSONPath(path), into: &errors)
        if let error = errors.first { throw error }
        let binary = value["binary"]!.stringValue!
        guard let data = Data(base64Encoded: binary) else {
            throw InstantJSONError(
                code: .invalidValue, path: JSONPath(path).appending(key: "binary").rendered,
                rule: "expected base64 data")
        }
        let contentType = value["contentType"]!.stringValue!
        if let problem = Self.validateContentType(contentType) {
            throw InstantJSONError(
                code: .invalidValue, path: JSONPath(path).appending(key: "contentType").rendered, rule: problem)
        }
        self.init(data: data, contentType: contentType)
    }

    /// The longest content type accepted, in characters (RFC 6838 allows 127 for a type and as many for
    /// a subtype; parameters share the rest).
    public static let maxContentTypeLength = 255

    /// Why a content type is not acceptable, or `nil` if it is: it must be a MIME type
    /// `type/subtype` of ASCII token characters (RFC 9110), each name at most 127 characters,
    /// optionally with parameters of printable ASCII, at most ``maxContentTypeLength`` characters in
    /// all.
    public static func validateContentType(_ contentType: String) -> String? {
        let shown = "\"\(contentType.prefix(60))\"\(contentType.count > 60 ? "…" : "")"
        guard contentType.utf8.count <= maxContentTypeLength else {
            return
                "expected a content type of at most \(maxContentTypeLength) characters, found \(contentType.utf8.count)"
        }
        let essenceEnd = contentType.firstIndex(of: ";") ?? contentType.endIndex
        let parts = contentType[..<essenceEnd].trimmingCharacters(in: .whitespaces)
            .split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ (1...127).contains($0.utf8.count) && $0.utf8.allSatisfy(isToken) })
        else {
            return "expected a MIME content type such as \"image/png\", found \(shown)"
        }
        // Parameters: visible ASCII, spaces and tabs; no control characters.
        guard contentType[essenceEnd...].utf8.allSatisfy({ (0x20...0x7E).contains($0) || $0 == 0x09 }) else {
            return "expected content type parameters of printable ASCII, found \(shown)"
        }
        return nil
    }

    /// Whether a byte is a token character of RFC 9110 (letters, digits and ``!#$%&'*+-.^_`|~``).
    private static func isToken(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
