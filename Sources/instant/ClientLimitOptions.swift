import ArgumentParser
import Foundation
import InstantServer

/// The options of `instant serve` that bound what one client token can make the server do
/// (docs/SECURITY.md).
struct ClientLimitOptions: ParsableArguments {
    @Option(help: "The largest body of POST .../sync, in bytes (default 8 MiB). Env: MAX_SYNC_BODY_SIZE.")
    var maxSyncBodySize: Int?

    @Option(
        help: "The largest attachment a client uploads, in bytes (default 32 MiB). Env: MAX_CLIENT_ATTACHMENT_SIZE.")
    var maxClientAttachmentSize: Int?

    @Option(help: "The largest record a client stores, in bytes of Instant JSON (default 1 MiB). Env: MAX_RECORD_SIZE.")
    var maxRecordSize: Int?

    @Option(help: "The most changes one push may carry (default 5000). Env: MAX_CHANGES_PER_PUSH.")
    var maxChangesPerPush: Int?

    @Option(help: "The most listening connections of one token (default 16). Env: MAX_LISTENERS_PER_TOKEN.")
    var maxListenersPerToken: Int?

    @Option(help: "The most listening connections of one layer (default 1000). Env: MAX_LISTENERS_PER_LAYER.")
    var maxListenersPerLayer: Int?

    @Option(
        help: ArgumentHelp(
            "The largest change message of one commit on a listening WebSocket, in bytes (default 256 KiB); "
                + "larger commits are announced by revision only. Env: MAX_CHANGE_MESSAGE_SIZE."))
    var maxChangeMessageSize: Int?

    @Option(
        help: "The shortest time between presence messages of a layer, in seconds (default 1). Env: PRESENCE_INTERVAL.")
    var presenceInterval: Double?

    /// Refuses bad values when the command line is parsed, before the server starts.
    func validate() throws {
        _ = try limits(environment: ProcessInfo.processInfo.environment)
    }

    /// The limits, from the flags, else the environment, else the defaults.
    func limits(environment: [String: String]) throws -> ClientLimits {
        var limits = ClientLimits()
        let counts: [(WritableKeyPath<ClientLimits, Int>, Int?, String, String)] = [
            (\.maxSyncBodySize, maxSyncBodySize, "--max-sync-body-size", "MAX_SYNC_BODY_SIZE"),
            (
                \.maxAttachmentSize, maxClientAttachmentSize, "--max-client-attachment-size",
                "MAX_CLIENT_ATTACHMENT_SIZE"
            ),
            (\.maxRecordSize, maxRecordSize, "--max-record-size", "MAX_RECORD_SIZE"),
            (\.maxChangesPerPush, maxChangesPerPush, "--max-changes-per-push", "MAX_CHANGES_PER_PUSH"),
            (
                \.listening.maximumListenersPerToken, maxListenersPerToken, "--max-listeners-per-token",
                "MAX_LISTENERS_PER_TOKEN"
            ),
            (
                \.listening.maximumListenersPerLayer, maxListenersPerLayer, "--max-listeners-per-layer",
                "MAX_LISTENERS_PER_LAYER"
            ),
            (
                \.listening.maximumChangeMessageSize, maxChangeMessageSize, "--max-change-message-size",
                "MAX_CHANGE_MESSAGE_SIZE"
            ),
        ]
        for (field, flag, flagName, variable) in counts {
            if let value = try LimitOption.count(flag, flagName, variable, environment) {
                limits[keyPath: field] = value
            }
        }
        if let interval = try LimitOption.seconds(
            presenceInterval, "--presence-interval", "PRESENCE_INTERVAL", environment, in: 0...3600)
        {
            limits.listening.presenceInterval = interval
        }
        return limits
    }
}
