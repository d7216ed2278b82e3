import Foundation
import JWTKit

/// Signs client JWTs with a private key: what the user's backend does, and what `instant token`
/// and tests do with the development key.
public struct ClientTokenIssuer: Sendable {
    let keys: JWTKeyCollection
    /// The algorithm tokens are signed with.
    public let algorithm: JWTSigningAlgorithm

    /// Creates an issuer from a PEM private key (RSA for RS256/RS512, EC P-256/P-521 for ES256/ES512).
    /// - Throws: ``ClientTokenError`` with ``ClientTokenError/Code/invalidConfiguration`` when the key
    ///   does not fit the algorithm.
    public init(privateKeyPEM: String, algorithm: JWTSigningAlgorithm) async throws {
        let keys = JWTKeyCollection()
        do {
            switch algorithm {
            case .rs256:
                await keys.add(rsa: try Insecure.RSA.PrivateKey(pem: privateKeyPEM), digestAlgorithm: .sha256)
            case .rs512:
                await keys.add(rsa: try Insecure.RSA.PrivateKey(pem: privateKeyPEM), digestAlgorithm: .sha512)
            case .es256:
                await keys.add(ecdsa: try ES256PrivateKey(pem: privateKeyPEM))
            case .es512:
                await keys.add(ecdsa: try ES512PrivateKey(pem: privateKeyPEM))
            default:
                throw ClientTokenError(
                    .invalidConfiguration,
                    "The JWT algorithm \(algorithm) is not supported; use RS256, RS512, ES256 or ES512."
                )
            }
        } catch let error as ClientTokenError {
            throw error
        } catch {
            throw ClientTokenError(
                .invalidConfiguration, "The private key is not a PEM \(algorithm) private key: \(error)")
        }
        self.keys = keys
        self.algorithm = algorithm
    }

    /// Signs the claims.
    public func sign(_ claims: ClientClaims) async throws -> String {
        try await keys.sign(claims)
    }
}

/// A freshly generated EC P-256 key pair for development and tests.
public struct DevelopmentKeyPair: Sendable {
    /// The private key, PEM.
    public var privateKeyPEM: String
    /// The public key, PEM.
    public var publicKeyPEM: String
    /// The algorithm of the pair (ES256).
    public var algorithm: JWTSigningAlgorithm { .es256 }

    /// Generates a new pair.
    public init() {
        let key = ES256PrivateKey()
        privateKeyPEM = key.pemRepresentation
        publicKeyPEM = key.publicKey.pemRepresentation
    }

    /// A pair from PEM texts.
    public init(privateKeyPEM: String, publicKeyPEM: String) {
        self.privateKeyPEM = privateKeyPEM
        self.publicKeyPEM = publicKeyPEM
    }
}
