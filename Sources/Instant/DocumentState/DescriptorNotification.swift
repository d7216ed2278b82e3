import Foundation

/// A notification the state machine asks its owner to post (and to forward to the delegate).
enum DescriptorNotification: Sendable, Hashable {
    case didBeginSyncing
    case syncCycleDidChangeState(InstantDocumentState)
    case didFinishSyncing
    case didFailSyncing(InstantError)
    case didFailAuthentication
    case didFinishDownload
    case didFailDownload(InstantError)
    case didFinishReauthentication
    case didFailReauthentication(InstantError)

    /// The Foundation name this notification is posted under.
    var name: Notification.Name {
        switch self {
        case .didBeginSyncing: .instantDidBeginSyncing
        case .syncCycleDidChangeState: .instantSyncCycleDidChangeState
        case .didFinishSyncing: .instantDidFinishSyncing
        case .didFailSyncing: .instantDidFailSyncing
        case .didFailAuthentication: .instantDidFailAuthentication
        case .didFinishDownload: .instantDidFinishDownload
        case .didFailDownload: .instantDidFailDownload
        case .didFinishReauthentication: .instantDidFinishReauthentication
        case .didFailReauthentication: .instantDidFailReauthentication
        }
    }

    /// The `userInfo` to post with; `jwt` is the token accepted by a successful reauthentication.
    func userInfo(jwt: String? = nil) -> [String: any Sendable] {
        switch self {
        case .syncCycleDidChangeState(let state): [InstantNotificationKey.documentState: state]
        case .didFailSyncing(let error), .didFailDownload(let error), .didFailReauthentication(let error):
            [InstantNotificationKey.error: error]
        case .didFinishReauthentication: jwt.map { [InstantNotificationKey.jwt: $0] } ?? [:]
        default: [:]
        }
    }
}
