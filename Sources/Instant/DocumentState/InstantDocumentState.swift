/// Where a document descriptor stands in its life: not yet known, being migrated, at rest, busy
/// syncing, or unusable.
///
/// A *sync cycle* alternates between ``sendingChanges`` and ``receivingChanges`` until the local
/// store holds no change the server has not confirmed; it then ends in ``clean``. With automatic
/// sync, a cycle starts `delayForSyncingLocalChanges` seconds after the last local edit; while
/// the descriptor listens for server changes, a change announced by the server starts one at
/// once. Otherwise a cycle starts only when `sync()` is called.
///
/// The raw values match the order of the cases and are stable, so they can be stored.
public enum InstantDocumentState: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Nothing has been established yet: the layer may not be downloaded, or its local data
    /// has not been opened. Asking a downloaded descriptor for a document settles the state.
    case unknown = 0
    /// The local data was written by an older version of the SDK and must be migrated (see
    /// `attemptContentMigration()`) before the descriptor can be used.
    case needsContentMigration = 1
    /// A content migration is running; the descriptor becomes usable when it completes.
    case migratingContent = 2
    /// The local data predates collaboration permissions: pending changes must be synced and
    /// the records fetched again with their permissions. Editing is disabled until then.
    case needsResetForDatabaseMigration = 3
    /// The reset described in ``needsResetForDatabaseMigration`` is running. Editing stays
    /// disabled until it completes.
    case resettingForDatabaseMigration = 4
    /// Every local change has been confirmed by the server. While listening for server changes
    /// this also means the local data is as recent as the server's last announced change.
    case clean = 5
    /// The local store holds changes the server has not confirmed yet. They are sent by the
    /// next sync cycle: automatically, or when `sync()` is called if automatic sync is disabled.
    case dirty = 6
    /// A sync cycle is sending the local changes to the server. On failure the descriptor falls
    /// back to ``dirty``; on success it moves on to ``receivingChanges``.
    case sendingChanges = 7
    /// A sync cycle is fetching or applying the server's current truth. On failure the
    /// descriptor falls back to ``dirty`` or ``clean`` depending on unsynced changes; on success
    /// it goes back to ``sendingChanges`` if edits were made meanwhile, or ends in ``clean``.
    case receivingChanges = 8
    /// The descriptor can no longer be used: its client is gone, its storage was removed through
    /// the client, or its local data is corrupt. Removing its local storage is the only useful
    /// operation left; that returns it to ``unknown``.
    case invalid = 9

    /// Whether the descriptor's data is present and usable for reading and editing.
    public var isOperational: Bool {
        switch self {
        case .clean, .dirty, .sendingChanges, .receivingChanges: true
        default: false
        }
    }

    /// Whether a sync cycle is running.
    public var isSyncing: Bool {
        self == .sendingChanges || self == .receivingChanges
    }

    public var description: String {
        switch self {
        case .unknown: "unknown"
        case .needsContentMigration: "needsContentMigration"
        case .migratingContent: "migratingContent"
        case .needsResetForDatabaseMigration: "needsResetForDatabaseMigration"
        case .resettingForDatabaseMigration: "resettingForDatabaseMigration"
        case .clean: "clean"
        case .dirty: "dirty"
        case .sendingChanges: "sendingChanges"
        case .receivingChanges: "receivingChanges"
        case .invalid: "invalid"
        }
    }
}
