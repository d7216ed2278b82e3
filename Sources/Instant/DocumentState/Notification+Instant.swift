import Foundation

// Every notification below is posted with the document descriptor as its `object`, usually on a
// background thread. The client's delegate receives the same events.
extension Notification.Name {
    /// A sync cycle has started. The descriptor is now `sendingChanges` (it had local changes) or
    /// `receivingChanges` (it is fetching the server's changes).
    public static let instantDidBeginSyncing = Notification.Name("InstantDidBeginSyncing")
    /// A running sync cycle moved between sending and receiving changes. The new state is in
    /// `userInfo[InstantNotificationKey.documentState]`.
    public static let instantSyncCycleDidChangeState = Notification.Name("InstantSyncCycleDidChangeState")
    /// A sync cycle completed: every change it sent was confirmed and the server's truth applied.
    public static let instantDidFinishSyncing = Notification.Name("InstantDidFinishSyncing")
    /// A sync cycle ended early; the `InstantError` is in `userInfo[InstantNotificationKey.error]`.
    /// Not posted for authentication failures, which post ``instantDidFailAuthentication``.
    public static let instantDidFailSyncing = Notification.Name("InstantDidFailSyncing")
    /// The server refused the descriptor's JWT. No sync is attempted until
    /// `reauthenticate(withJWT:)` succeeds.
    public static let instantDidFailAuthentication = Notification.Name("InstantDidFailAuthentication")
    /// The PDF and the layer's records were downloaded; the descriptor is now usable.
    public static let instantDidFinishDownload = Notification.Name("InstantDidFinishDownload")
    /// The download failed or was cancelled; the `InstantError` is in
    /// `userInfo[InstantNotificationKey.error]`. Documents obtained earlier are now invalid.
    public static let instantDidFailDownload = Notification.Name("InstantDidFailDownload")
    /// `reauthenticate(withJWT:)` succeeded; the accepted token is in
    /// `userInfo[InstantNotificationKey.jwt]` and may be stored.
    public static let instantDidFinishReauthentication = Notification.Name("InstantDidFinishReauthentication")
    /// `reauthenticate(withJWT:)` failed; the `InstantError` is in
    /// `userInfo[InstantNotificationKey.error]`.
    public static let instantDidFailReauthentication = Notification.Name("InstantDidFailReauthentication")
    /// The connection on which the descriptor listens for server changes
    /// (`startListeningForServerChanges()`) dropped or could not be made; the `InstantError` is in
    /// `userInfo[InstantNotificationKey.error]`. After a network failure (`isRetryable`) the
    /// descriptor keeps trying to reconnect, less and less often, and posts
    /// ``instantDidResumeListening`` once it is back; this notification is posted once per lost
    /// connection, not for every failed attempt. After any other failure listening has ended:
    /// call `startListeningForServerChanges()` again once the cause is fixed. A refused token posts
    /// ``instantDidFailAuthentication`` instead.
    public static let instantDidFailListening = Notification.Name("InstantDidFailListening")
    /// The listening connection is back after ``instantDidFailListening``; changes made on the
    /// server meanwhile are fetched by a sync cycle.
    public static let instantDidResumeListening = Notification.Name("InstantDidResumeListening")
}

/// Keys of the `userInfo` dictionaries of the SDK's notifications.
public enum InstantNotificationKey {
    /// The `InstantError` that caused a failure notification.
    public static let error = "InstantError"
    /// The `InstantDocumentState` the descriptor entered.
    public static let documentState = "InstantDocumentState"
    /// The JWT (a `String`) accepted by a reauthentication.
    public static let jwt = "InstantJWT"
}
