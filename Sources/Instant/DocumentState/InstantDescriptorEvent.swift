import Foundation

/// Something that happened to a document descriptor: the events its notifications announce and
/// its client's delegate receives, as values for ``InstantDocumentDescriptor/events``.
public enum InstantDescriptorEvent: Sendable, Hashable {
    /// A sync cycle started (`instantDidBeginSyncing`).
    case didBeginSyncing
    /// A running sync cycle moved to the given state (`instantSyncCycleDidChangeState`).
    case syncCycleDidChangeState(InstantDocumentState)
    /// A sync cycle completed (`instantDidFinishSyncing`).
    case didFinishSyncing
    /// A sync cycle ended early (`instantDidFailSyncing`).
    case didFailSyncing(InstantError)
    /// The server refused the descriptor's JWT (`instantDidFailAuthentication`).
    case didFailAuthentication
    /// The download finished (`instantDidFinishDownload`).
    case didFinishDownload
    /// The download failed or was cancelled (`instantDidFailDownload`).
    case didFailDownload(InstantError)
    /// A reauthentication succeeded (`instantDidFinishReauthentication`).
    case didFinishReauthentication
    /// A reauthentication failed (`instantDidFailReauthentication`).
    case didFailReauthentication(InstantError)
    /// The connection on which the descriptor listens for server changes dropped or could not be
    /// made (`instantDidFailListening`).
    case didFailListening(InstantError)
    /// The listening connection is back after ``didFailListening(_:)`` (`instantDidResumeListening`).
    case didResumeListening

    /// The Foundation name this event is posted under.
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
        case .didFailListening: .instantDidFailListening
        case .didResumeListening: .instantDidResumeListening
        }
    }

    /// The `userInfo` to post with; `jwt` is the token accepted by a successful reauthentication.
    func userInfo(jwt: String? = nil) -> [String: any Sendable] {
        switch self {
        case .syncCycleDidChangeState(let state): [InstantNotificationKey.documentState: state]
        case .didFailSyncing(let error), .didFailDownload(let error), .didFailReauthentication(let error),
            .didFailListening(let error):
            [InstantNotificationKey.error: error]
        case .didFinishReauthentication: jwt.map { [InstantNotificationKey.jwt: $0] } ?? [:]
        default: [:]
        }
    }
}
