import Hummingbird
import HummingbirdWebSocket

/// The request context of the Instant server: Hummingbird's core storage plus the verified
/// client token of `/i/...` routes.
public struct InstantRequestContext: RequestContext, WebSocketRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Where the `.../listen` route hands its WebSocket handler to the upgrade.
    public let webSocket = WebSocketHandlerReference<Self>()
    /// The verified client token, set by the JWT middleware on client routes.
    public var clientToken: ClientToken?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.clientToken = nil
    }
}
