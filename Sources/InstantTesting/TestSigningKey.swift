import InstantServer
import JWTKit
import _CryptoExtras

/// A freshly generated signing key pair for any algorithm the server accepts, with an issuer
/// that mints client JWTs signed by it.
public struct TestSigningKey: Sendable {
    /// The algorithm of the key.
    public let algorithm: JWTSigningAlgorithm
    /// The private key, PEM.
    public let privateKeyPEM: String
    /// The public key, PEM: what the server is configured with.
    public let publicKeyPEM: String
    /// Signs claims with the private key.
    public let issuer: ClientTokenIssuer

    /// Generates a key pair: RSA 2048 for RS256/RS512, P-256 for ES256, P-521 for ES512.
    public init(_ algorithm: JWTSigningAlgorithm) async throws {
        switch algorithm {
        case .rs256, .rs512:
            let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            privateKeyPEM = key.pemRepresentation
            publicKeyPEM = key.publicKey.pemRepresentation
        case .es512:
            let key = ES512PrivateKey()
            privateKeyPEM = key.pemRepresentation
            publicKeyPEM = key.publicKey.pemRepresentation
        default:
            let key = ES256PrivateKey()
            privateKeyPEM = key.pemRepresentation
            publicKeyPEM = key.publicKey.pemRepresentation
        }
        self.algorithm = algorithm
        issuer = try await ClientTokenIssuer(privateKeyPEM: privateKeyPEM, algorithm: algorithm)
    }

    /// The server configuration that trusts this key.
    public var jwtConfiguration: JWTConfiguration {
        JWTConfiguration(publicKeyPEM: publicKeyPEM, algorithm: algorithm)
    }

    /// Mints a token.
    public func token(_ claims: ClientClaims) async throws -> String {
        try await issuer.sign(claims)
    }
}
