import Foundation
import InstantJSON
import JWTKit

/// Verifies client JWTs: the signature with the configured public key and algorithm, the
/// registered claims (`exp` required, `nbf`), revocation, and the Instant claims.
public struct ClientTokenVerifier: Sendable {
    let keys: JWTKeyCollection
    let algorithm: JWTSigningAlgorithm
    let storage: InstantStorage
    /// How much clock difference is tolerated for `exp` and `nbf`, in seconds.
    let leeway: TimeInterval = 5
    /// Tokens whose signature and claims were checked already: a client sends the same token with
    /// every request, and checking a signature costs more than the rest of a small sync.
    let verified = VerifiedTokens()

    /// Creates a verifier for the configured key.
    /// - Throws: ``ClientTokenError`` with ``ClientTokenError/Code/invalidConfiguration`` when the key
    ///   cannot be read for the algorithm.
    public init(configuration: JWTConfiguration, storage: InstantStorage) async throws {
        let keys = JWTKeyCollection()
        do {
            switch configuration.algorithm {
            case .rs256:
                await keys.add(
                    rsa: try Insecure.RSA.PublicKey(pem: configuration.publicKeyPEM), digestAlgorithm: .sha256)
            case .rs512:
                await keys.add(
                    rsa: try Insecure.RSA.PublicKey(pem: configuration.publicKeyPEM), digestAlgorithm: .sha512)
            case .es256:
                await keys.add(ecdsa: try ES256PublicKey(pem: configuration.publicKeyPEM))
            case .es512:
                await keys.add(ecdsa: try ES512PublicKey(pem: configuration.publicKeyPEM))
            default:
                throw ClientTokenError(
                    .invalidConfiguration,
                    "The JWT algorithm \(configuration.algorithm) is not supported; use RS256, RS512, ES256 or ES512."
                )
            }
        } catch let error as ClientTokenError {
            throw error
        } catch {
            throw ClientTokenError(
                .invalidConfiguration,
                "The JWT public key is not a PEM \(configuration.algorithm) public key: \(error)"
            )
        }
        self.keys = keys
        self.algorithm = configuration.algorithm
        self.storage = storage
    }

    /// Verifies a token and returns its claims.
    /// - Throws: ``ClientTokenError`` saying which check failed.
    public func verify(_ token: String, now: Date = Date()) async throws -> ClientToken {
        switch try cached(token, now: now) {
        case .usable(let known):
            return known
        case .revocationUnknown(let known, let jti):
            // Verified before, its id's revocation not known: read.
            if try await storage.isTokenRevoked(id: jti) { throw Self.revoked(jti) }
            return known
        case .absent:
            let checked = try await verifySignatureAndClaims(token, now: now)
            verified[token] = checked
            return checked
        }
    }

    /// The claims of a token this node verified before, checked again without a wait when whether
    /// its id was revoked is known (``InstantStorage/knownRevocation(ofTokenID:)``); `nil` when
    /// ``verify(_:now:)`` has to check it.
    /// - Throws: ``ClientTokenError`` when the token expired or was revoked since.
    func knownToken(_ token: String, now: Date = Date()) throws(ClientTokenError) -> ClientToken? {
        if case .usable(let known) = try cached(token, now: now) { return known }
        return nil
    }

    /// What this node knows of a token without a wait.
    private enum CachedToken {
        /// Verified before, unexpired, and its id (if it has one) known not to be revoked.
        case usable(ClientToken)
        /// Verified before and unexpired; whether its id was revoked has to be read.
        case revocationUnknown(ClientToken, tokenID: String)
        /// Not among the verified tokens (never verified, or forgotten since): its signature and
        /// claims have to be checked.
        case absent
    }

    /// Looks `token` up once among the verified tokens, and checks its expiry and known revocation.
    private func cached(_ token: String, now: Date) throws(ClientTokenError) -> CachedToken {
        guard let known = verified[token] else { return .absent }
        try checkUnexpired(known.expiresAt, now: now)
        guard let jti = known.tokenID else { return .usable(known) }
        guard let revoked = storage.knownRevocation(ofTokenID: jti) else {
            return .revocationUnknown(known, tokenID: jti)
        }
        if revoked { throw Self.revoked(jti) }
        return .usable(known)
    }

    private func checkUnexpired(_ expiration: Date, now: Date) throws(ClientTokenError) {
        if expiration.addingTimeInterval(leeway) < now {
            throw ClientTokenError(.expired, "The token expired at \(expiration).")
        }
    }

    private static func revoked(_ id: String) -> ClientTokenError {
        ClientTokenError(.revoked, "The token '\(id)' was revoked.")
    }

    private func verifySignatureAndClaims(_ token: String, now: Date) async throws -> ClientToken {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerData = Self.base64URLDecode(parts[0]),
            let header = try? JSONValue.parse(headerData), let alg = header["alg"]?.stringValue
        else {
            throw ClientTokenError(.malformed, "The token is not a JWT (three base64url parts with an 'alg' header).")
        }
        if alg.lowercased() == "none" {
            throw ClientTokenError(.algorithmRefused, "Unsigned tokens (alg 'none') are refused.")
        }
        if alg.uppercased().hasPrefix("HS") {
            throw ClientTokenError(
                .algorithmRefused,
                "HMAC-signed tokens (\(alg)) are refused; tokens must be signed with the private key (\(algorithm))."
            )
        }
        guard alg == algorithm.rawValue else {
            throw ClientTokenError(
                .algorithmRefused,
                "The token is signed with \(alg) but the server accepts only \(algorithm)."
            )
        }
        let claims: ClientClaims
        do {
            claims = try await keys.verify(token, as: ClientClaims.self)
        } catch let error as ClientTokenError {
            throw error
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            throw ClientTokenError(.badSignature, "The token's signature does not match the server's public key.")
        } catch {
            let payload = Self.base64URLDecode(parts[1]).flatMap { try? JSONValue.parse($0) }
            throw ClientTokenError(
                .malformed,
                payload.flatMap(ClientClaims.typeProblem(in:))
                    ?? "The token's payload is not a JSON object of claims; mint it with a JWT library."
            )
        }
        guard let expiration = claims.exp else {
            throw ClientTokenError(.missingClaim, "The token has no 'exp' claim; every token must expire.")
        }
        try checkUnexpired(expiration.value, now: now)
        if let notBefore = claims.nbf, notBefore.value > now.addingTimeInterval(leeway) {
            throw ClientTokenError(.notYetValid, "The token is not valid before \(notBefore.value) ('nbf').")
        }
        guard let documentID = claims.documentID, !documentID.isEmpty else {
            throw ClientTokenError(.missingClaim, "The token has no 'document_id' claim.")
        }
        if let jti = claims.jti?.value, try await storage.isTokenRevoked(id: jti) { throw Self.revoked(jti) }
        return ClientToken(
            documentID: documentID,
            layer: claims.layer ?? "",
            permissions: Set(claims.permissions ?? []),
            userID: claims.userID,
            defaultGroup: claims.defaultGroup,
            creatorName: claims.creatorName,
            collaborationPermissions: try claims.collaborationPermissions.map(CollaborationPermissions.init(claim:)),
            tokenID: claims.jti?.value,
            expiresAt: expiration.value,
            key: claims.jti.map { "jti:\($0.value)" }
                ?? "sha256:" + Attachment.key(for: Data(token.utf8))
        )
    }

    static func base64URLDecode(_ text: Substring) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}

/// The claims of a client JWT as they appear on the wire.
public struct ClientClaims: JWTPayload {
    /// The document (`document_id`).
    public var documentID: String?
    /// The layer (`layer`).
    public var layer: String?
    /// The permissions (`permissions`).
    public var permissions: [String]?
    /// The user (`user_id`).
    public var userID: String?
    /// The group of new records (`default_group`).
    public var defaultGroup: String?
    /// The creator name (`creator_name`).
    public var creatorName: String?
    /// The collaboration permission rules (`collaboration_permissions`).
    public var collaborationPermissions: [String]?
    /// The expiration (`exp`).
    public var exp: ExpirationClaim?
    /// Not valid before (`nbf`).
    public var nbf: NotBeforeClaim?
    /// The token id (`jti`).
    public var jti: IDClaim?

    enum CodingKeys: String, CodingKey {
        case documentID = "document_id"
        case layer
        case permissions
        case userID = "user_id"
        case defaultGroup = "default_group"
        case creatorName = "creator_name"
        case collaborationPermissions = "collaboration_permissions"
        case exp, nbf, jti
    }

    /// Creates claims.
    public init(
        documentID: String?,
        layer: String? = nil,
        permissions: [String]?,
        userID: String? = nil,
        defaultGroup: String? = nil,
        creatorName: String? = nil,
        collaborationPermissions: [String]? = nil,
        expiration: Date?,
        notBefore: Date? = nil,
        tokenID: String? = nil
    ) {
        self.documentID = documentID
        self.layer = layer
        self.permissions = permissions
        self.userID = userID
        self.defaultGroup = defaultGroup
        self.creatorName = creatorName
        self.collaborationPermissions = collaborationPermissions
        // Whole seconds, as JWT libraries everywhere expect (`NumericDate` may be fractional, but
        // many verifiers reject it).
        self.exp = expiration.map {
            ExpirationClaim(value: Date(timeIntervalSince1970: $0.timeIntervalSince1970.rounded(.down)))
        }
        self.nbf = notBefore.map {
            NotBeforeClaim(value: Date(timeIntervalSince1970: $0.timeIntervalSince1970.rounded(.down)))
        }
        self.jti = tokenID.map(IDClaim.init(value:))
    }

    /// The first claim of a token payload whose value has the wrong type, as a message, or `nil`.
    static func typeProblem(in payload: JSONValue) -> String? {
        guard payload.objectValue != nil else { return "The token's payload is not a JSON object of claims." }
        let strings = ["document_id", "layer", "user_id", "default_group", "creator_name", "jti"]
        for claim in strings where payload[claim].map({ $0 != .null && $0.stringValue == nil }) == true {
            return "The token's '\(claim)' claim must be a string."
        }
        for claim in ["permissions", "collaboration_permissions"] {
            guard let value = payload[claim], value != .null else { continue }
            guard let items = value.arrayValue, items.allSatisfy({ $0.stringValue != nil }) else {
                return "The token's '\(claim)' claim must be an array of strings."
            }
        }
        for claim in ["exp", "nbf"] where payload[claim].map({ $0 != .null && $0.doubleValue == nil }) == true {
            return "The token's '\(claim)' claim must be a number of seconds since 1970."
        }
        return nil
    }

    /// Time claims are checked by ``ClientTokenVerifier`` so that each refusal has its own reason.
    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// A refused client token.
public struct ClientTokenError: Error, Sendable, CustomStringConvertible {
    /// Why the token was refused.
    public struct Code: RawRepresentable, Hashable, Sendable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// No token was sent.
        public static let missing = Code(rawValue: "missing")
        /// The token is not a readable JWT.
        public static let malformed = Code(rawValue: "malformed")
        /// The token's algorithm is not the configured one (`none`, HMAC, or another).
        public static let algorithmRefused = Code(rawValue: "algorithmRefused")
        /// The signature does not verify with the public key.
        public static let badSignature = Code(rawValue: "badSignature")
        /// A required claim is missing.
        public static let missingClaim = Code(rawValue: "missingClaim")
        /// `exp` is in the past.
        public static let expired = Code(rawValue: "expired")
        /// `nbf` is in the future.
        public static let notYetValid = Code(rawValue: "notYetValid")
        /// The token id was revoked.
        public static let revoked = Code(rawValue: "revoked")
        /// The token is for another document.
        public static let wrongDocument = Code(rawValue: "wrongDocument")
        /// The token is for another layer.
        public static let wrongLayer = Code(rawValue: "wrongLayer")
        /// A needed permission is missing.
        public static let permissionDenied = Code(rawValue: "permissionDenied")
        /// The server's key configuration is unusable.
        public static let invalidConfiguration = Code(rawValue: "invalidConfiguration")
    }

    /// Why the token was refused.
    public var code: Code
    /// A message saying which check failed.
    public var message: String

    /// Creates a token error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

/// A bounded memory of verified tokens (by their text).
final class VerifiedTokens: @unchecked Sendable {
    private let lock = NSLock()
    private var tokens: [String: ClientToken] = [:]
    /// Past this many tokens the memory starts afresh.
    static let capacity = 10_000

    subscript(token: String) -> ClientToken? {
        get { lock.withLock { tokens[token] } }
        set {
            lock.withLock {
                if tokens.count >= Self.capacity { tokens.removeAll(keepingCapacity: true) }
                tokens[token] = newValue
            }
        }
    }
}
