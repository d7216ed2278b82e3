import Foundation
import InstantJSON

/// The claims of a client JWT that the SDK reads, decoded without checking the signature (only the
/// server can check it; the client uses the claims to know which document and layer a token is for).
struct InstantJWT: Sendable, Hashable {
    /// The token as given.
    var token: String
    /// The `document_id` claim: the document identifier.
    var documentID: String
    /// The `layer` claim, `""` for the default layer.
    var layerName: String
    /// The `user_id` claim.
    var userID: String?
    /// The `default_group` claim.
    var defaultGroup: String?
    /// The `permissions` claim.
    var permissions: [String]
    /// The `exp` claim.
    var expiresAt: Date?

    /// Decodes a token's payload.
    /// - Returns: `nil` when the text is not a JWT with a `document_id` claim.
    init?(_ token: String) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = Self.base64URLDecoded(parts[1]),
            let claims = try? JSONValue(parsing: payload), let documentID = claims["document_id"]?.stringValue,
            !documentID.isEmpty
        else { return nil }
        self.token = token
        self.documentID = documentID
        self.layerName = claims["layer"]?.stringValue ?? ""
        self.userID = claims["user_id"]?.stringValue
        self.defaultGroup = claims["default_group"]?.stringValue
        self.permissions = claims["permissions"]?.arrayValue?.compactMap(\.stringValue) ?? []
        self.expiresAt = claims["exp"]?.doubleValue.map(Date.init(timeIntervalSince1970:))
    }

    private static func base64URLDecoded(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}
