import Foundation

/// The key pair and API token a server writes into its data directory on first start, so that it
/// works with no configuration. Not for production: configure your own key and token there.
public struct DevelopmentCredentials: Sendable {
    /// The ES256 key pair client tokens are signed with.
    public var keyPair: DevelopmentKeyPair
    /// The API token of `/api/...`.
    public var apiAuthToken: String
    /// Whether this call created the files (first start).
    public var wereCreated: Bool

    /// The file names inside the data directory.
    public static let privateKeyFile = "dev-jwt-private.pem"
    public static let publicKeyFile = "dev-jwt-public.pem"
    public static let apiTokenFile = "dev-api-token"

    /// Loads the credentials from the directory, creating any that are missing.
    public static func loadOrCreate(in directory: URL) throws -> DevelopmentCredentials {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let privateURL = directory.appendingPathComponent(privateKeyFile)
        let publicURL = directory.appendingPathComponent(publicKeyFile)
        let tokenURL = directory.appendingPathComponent(apiTokenFile)
        var created = false
        let keyPair: DevelopmentKeyPair
        if let privatePEM = try? String(contentsOf: privateURL, encoding: .utf8),
            let publicPEM = try? String(contentsOf: publicURL, encoding: .utf8)
        {
            keyPair = DevelopmentKeyPair(privateKeyPEM: privatePEM, publicKeyPEM: publicPEM)
        } else {
            keyPair = DevelopmentKeyPair()
            try writeSecret(keyPair.privateKeyPEM, to: privateURL)
            try Data(keyPair.publicKeyPEM.utf8).write(to: publicURL, options: .atomic)
            created = true
        }
        let token: String
        if let existing = try? String(contentsOf: tokenURL, encoding: .utf8),
            !existing.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
        {
            token = existing.trimmingCharacters(in: .whitespacesAndNewlines)
        } else {
            var generator = SystemRandomNumberGenerator()
            token = (0..<4).map { _ in String(generator.next() as UInt64, radix: 16) }.joined()
            try writeSecret(token + "\n", to: tokenURL)
            created = true
        }
        return DevelopmentCredentials(keyPair: keyPair, apiAuthToken: token, wereCreated: created)
    }

    /// Loads the credentials if the directory has them.
    public static func load(from directory: URL) -> DevelopmentCredentials? {
        guard
            let privatePEM = try? String(
                contentsOf: directory.appendingPathComponent(privateKeyFile),
                encoding: .utf8
            ),
            let publicPEM = try? String(contentsOf: directory.appendingPathComponent(publicKeyFile), encoding: .utf8),
            let token = try? String(contentsOf: directory.appendingPathComponent(apiTokenFile), encoding: .utf8)
        else { return nil }
        return DevelopmentCredentials(
            keyPair: DevelopmentKeyPair(privateKeyPEM: privatePEM, publicKeyPEM: publicPEM),
            apiAuthToken: token.trimmingCharacters(in: .whitespacesAndNewlines),
            wereCreated: false
        )
    }

    private static func writeSecret(_ text: String, to url: URL) throws {
        try Data(text.utf8).write(to: url, options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
    }
}
