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
        help: "The shortest time between presence messages of a layer, in seconds (default 1). Env: PRESENCE_INTERVAL.")
    var presenceInterval: Double?

    /// The limits, from the flags, else the environment, else the defaults.
    func limits(environment: [String: String]) throws -> ClientLimits {
        let defaults = ClientLimits()
        func count(_ flag: Int?, _ name: String, _ fallback: Int) throws -> Int {
            if let flag { return try positive(flag, name) }
            guard let text = environment[name] else { return fallback }
            guard let value = Int(text) else { throw ValidationError("\(name) '\(text)' is not a whole number.") }
            return try positive(value, name)
        }
        func positive(_ value: Int, _ name: String) throws -> Int {
            guard value > 0 else { throw ValidationError("\(name) must be above 0, not \(value).") }
            return value
        }
        let interval =
            try presenceInterval
            ?? environment["PRESENCE_INTERVAL"].map { text in
                guard let value = Double(text) else {
                    throw ValidationError("PRESENCE_INTERVAL '\(text)' is not seconds.")
                }
                return value
            }
        if let interval, !(0...3600).contains(interval) {
            throw ValidationError("PRESENCE_INTERVAL must be from 0 to 3600 seconds, not \(interval).")
        }
        return ClientLimits(
            maxSyncBodySize: try count(maxSyncBodySize, "MAX_SYNC_BODY_SIZE", defaults.maxSyncBodySize),
            maxAttachmentSize: try count(
                maxClientAttachmentSize, "MAX_CLIENT_ATTACHMENT_SIZE", defaults.maxAttachmentSize),
            maxRecordSize: try count(maxRecordSize, "MAX_RECORD_SIZE", defaults.maxRecordSize),
            maxChangesPerPush: try count(maxChangesPerPush, "MAX_CHANGES_PER_PUSH", defaults.maxChangesPerPush),
            listening: ListeningLimits(
                maximumListenersPerToken: try count(
                    maxListenersPerToken, "MAX_LISTENERS_PER_TOKEN", defaults.listening.maximumListenersPerToken),
                maximumListenersPerLayer: try count(
                    maxListenersPerLayer, "MAX_LISTENERS_PER_LAYER", defaults.listening.maximumListenersPerLayer),
                presenceInterval: interval.map { .milliseconds(Int64($0 * 1000)) }
                    ?? defaults.listening.presenceInterval
            )
        )
    }
}
