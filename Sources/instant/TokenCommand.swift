import ArgumentParser
import Foundation
import InstantServer

/// `instant token`: mints a client JWT with the development key of a data directory.
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Mint a client JWT signed with the development key of the data directory.",
        discussion: "Start `instant serve` once first: it creates the development key pair."
    )

    @Option(help: "The document the token grants access to.")
    var document: String

    @Option(help: "The layer; the default layer when omitted.")
    var layer: String?

    @Option(help: "The user id (user_id claim).")
    var user: String?

    @Option(help: "The group of new records (default_group claim).")
    var defaultGroup: String?

    @Option(
        parsing: .upToNextOption,
        help: "Permissions: read-document, write, download (default: read-document write download)."
    )
    var permissions: [String] = ["read-document", "write", "download"]

    @Option(parsing: .upToNextOption, help: "Collaboration permissions, e.g. annotations:view:all.")
    var collaborationPermissions: [String] = []

    @Option(help: "Lifetime: a number with s, m, h or d (default 1h).")
    var expires: String = "1h"

    @Option(help: "A token id (jti claim), for revocation.")
    var id: String?

    @Option(help: "The data directory holding the development key. Env: INSTANT_DATA_DIR.")
    var dataDir: String?

    func run() async throws {
        let directory = URL(
            fileURLWithPath: dataDir ?? ProcessInfo.processInfo.environment["INSTANT_DATA_DIR"] ?? "instant-data"
        )
        guard let credentials = DevelopmentCredentials.load(from: directory) else {
            throw ValidationError(
                "No development key in \(directory.path). Run `instant serve --data-dir \(directory.path)` once first."
            )
        }
        guard let lifetime = Self.duration(expires) else {
            throw ValidationError("--expires '\(expires)' is not a duration like 30m, 1h or 7d.")
        }
        let issuer = try await ClientTokenIssuer(
            privateKeyPEM: credentials.keyPair.privateKeyPEM,
            algorithm: credentials.keyPair.algorithm
        )
        let token = try await issuer.sign(
            ClientClaims(
                documentID: document,
                layer: layer,
                permissions: permissions,
                userID: user,
                defaultGroup: defaultGroup,
                collaborationPermissions: collaborationPermissions.isEmpty ? nil : collaborationPermissions,
                expiration: Date().addingTimeInterval(lifetime),
                tokenID: id
            )
        )
        print(token)
    }

    /// Seconds of `30s`, `15m`, `1h`, `7d` (or a plain number of seconds).
    static func duration(_ text: String) -> TimeInterval? {
        let units: [Character: TimeInterval] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        if let last = text.last, let unit = units[last], let value = Double(text.dropLast()), value > 0 {
            return value * unit
        }
        return Double(text).flatMap { $0 > 0 ? $0 : nil }
    }
}
