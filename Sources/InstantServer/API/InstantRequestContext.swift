import Hummingbird

/// The request context of the Instant server: Hummingbird's core storage plus the verified
/// client token of `/i/...` routes.
public struct InstantRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The verified client token, set by ``ClientTokenMiddleware`` on client routes.
    public var clientToken: ClientToken?
    /// The executor of the connection's event loop, which the request's handler prefers.
    let executor: EventLoopTaskExecutor

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.clientToken = nil
        self.executor = EventLoopTaskExecutor(source.channel.eventLoop)
    }
}
