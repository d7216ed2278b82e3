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

    /// Why a content type is not acceptable, or `nil` if it is: it must be a MIME type
    /// `type/subtype` of token characters, optionally with parameters.
    public static func validateContentType(_ contentType: String) -> String? {
        let essence = contentType.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
        let parts = essence.trimmingCharacters(in: .whitespaces).split(separator: "/", omittingEmptySubsequences: false)
        let token = CharacterSet(charactersIn: "!#$%&'*+-.^_`|~").union(.alphanumerics)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.unicodeScalars.allSatisfy(token.contains) }) else {
            return "expected a MIME content type such as \"image/png\", found \"\(contentType.prefix(60))\""
        }
        return nil
    }
}
