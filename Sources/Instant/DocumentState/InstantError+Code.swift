extension InstantError {
    /// An extensible set of error kinds.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        /// The JWT could not be decoded, lacks a claim the SDK needs, or is for another layer.
        public static let invalidJWT = Code(rawValue: "invalidJWT")
        /// The layer's data is already on this device; there is nothing to download.
        public static let alreadyDownloaded = Code(rawValue: "alreadyDownloaded")
        /// The operation needs the layer's data, which has not been downloaded yet.
        public static let notDownloaded = Code(rawValue: "notDownloaded")
        /// The JWT names a different user than the one the local data belongs to.
        public static let userIDMismatch = Code(rawValue: "userIDMismatch")
        /// The server refused the JWT (expired, badly signed, or revoked).
        public static let authenticationFailed = Code(rawValue: "authenticationFailed")
        /// The JWT is valid but does not grant the permission the request needs.
        public static let accessDenied = Code(rawValue: "accessDenied")
        /// The server could not be reached, or the connection broke off.
        public static let couldNotReachServer = Code(rawValue: "couldNotReachServer")
        /// The server answered that it cannot serve the request right now (a 5xx status).
        public static let serverUnavailable = Code(rawValue: "serverUnavailable")
        /// The server sent a response the SDK cannot understand.
        public static let invalidServerResponse = Code(rawValue: "invalidServerResponse")
        /// The server does not know the document or layer.
        public static let documentNotFound = Code(rawValue: "documentNotFound")
        /// The operation was cancelled before it completed.
        public static let cancelled = Code(rawValue: "cancelled")
        /// The document descriptor has been invalidated and can no longer be used.
        public static let documentInvalidated = Code(rawValue: "documentInvalidated")
        /// The local data of the layer is damaged and cannot be read.
        public static let corruptedData = Code(rawValue: "corruptedData")
        /// Reading or writing the local store failed.
        public static let storageFailed = Code(rawValue: "storageFailed")
        /// The local data must be migrated before the operation can run.
        public static let contentMigrationNeeded = Code(rawValue: "contentMigrationNeeded")
        /// A content migration is already running.
        public static let performingContentMigration = Code(rawValue: "performingContentMigration")
        /// There is nothing to migrate: the local data is already current.
        public static let migrationNotNeeded = Code(rawValue: "migrationNotNeeded")
        /// The content migration could not complete.
        public static let contentMigrationFailed = Code(rawValue: "contentMigrationFailed")
        /// No annotation of the document has the identifier (or the annotation has none: use the
        /// value ``InstantDocument/add(_:)`` returned).
        public static let annotationNotFound = Code(rawValue: "annotationNotFound")
        /// The value given for `delayForSyncingLocalChanges` is not supported.
        public static let invalidSyncDelay = Code(rawValue: "invalidSyncDelay")
    }
}

extension InstantError {
    /// The error for a JWT that cannot be used, with the reason.
    public static func invalidJWT(_ reason: String) -> InstantError {
        let sentence = reason.hasSuffix(".") ? String(reason.dropLast()) : reason
        return InstantError(
            .invalidJWT, "The JWT cannot be used: \(sentence). Ask your server for a new token for this layer.")
    }

    /// The error for a download requested while the data is already present.
    public static var alreadyDownloaded: InstantError {
        InstantError(
            .alreadyDownloaded,
            "The layer is already downloaded. Use its documents directly, or call removeLocalStorage() first to download it again."
        )
    }

    /// The error for an operation that needs downloaded data.
    public static var notDownloaded: InstantError {
        InstantError(
            .notDownloaded, "The layer has not been downloaded yet. Call download(usingJWT:) and wait for it to finish."
        )
    }

    /// The error for a JWT whose `user_id` does not match the local data's user.
    public static func userIDMismatch(expected: String?, found: String?) -> InstantError {
        InstantError(
            .userIDMismatch,
            "The JWT is for user \(found.map { "'\($0)'" } ?? "(none)") but the local data belongs to user "
                + "\(expected.map { "'\($0)'" } ?? "(none)"). Call removeLocalStorage() before using a token for another user."
        )
    }

    /// The error for a JWT the server refused.
    public static var authenticationFailed: InstantError {
        InstantError(
            .authenticationFailed,
            "The server refused the JWT (it may have expired). Obtain a new token and call reauthenticate(withJWT:)."
        )
    }

    /// The error for an operation interrupted on purpose.
    public static var cancelled: InstantError {
        InstantError(.cancelled, "The operation was cancelled before it completed.")
    }

    /// The error for any use of an invalidated descriptor.
    public static var documentInvalidated: InstantError {
        InstantError(
            .documentInvalidated,
            "The document descriptor is invalid (its client is gone, its storage was removed, or its data is corrupt). "
                + "Call removeLocalStorage() and obtain the descriptor again."
        )
    }

    /// The error for local data that cannot be read.
    public static var corruptedData: InstantError {
        InstantError(
            .corruptedData,
            "The layer's local data is corrupt. Call removeLocalStorage() and download the layer again."
        )
    }

    /// The error for a sync attempted while the local data awaits a content migration.
    public static var contentMigrationNeeded: InstantError {
        InstantError(
            .contentMigrationNeeded,
            "The layer's local data was written by an older version and must be migrated. Call attemptContentMigration()."
        )
    }

    /// The error for a migration requested while one is running.
    public static var performingContentMigration: InstantError {
        InstantError(
            .performingContentMigration,
            "A content migration is already running. Observe its progress instead of starting another."
        )
    }

    /// The error for a migration requested when the data is already current.
    public static var migrationNotNeeded: InstantError {
        InstantError(.migrationNotNeeded, "The layer's local data is current; there is nothing to migrate.")
    }

    /// The error for an unsupported `delayForSyncingLocalChanges`.
    public static func invalidSyncDelay(_ value: Double) -> InstantError {
        InstantError(
            .invalidSyncDelay,
            "\(value) is not a valid delay for syncing local changes. Use a positive number of seconds (1 or more "
                + "is recommended), or instantSyncingLocalChangesDisabled to sync only when sync() is called."
        )
    }
}
