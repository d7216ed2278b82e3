import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTPTypes

/// A sync request (`POST /i/d/{documentID}[/l/{layerName}]/sync`) as a connection takes it ahead of
/// the router: its head, the path's names (as they are in the path, not yet decoded or checked),
/// and its body once whole.
struct SyncHTTPRequest: Sendable {
    var head: HTTPRequest
    var route: ClientRoutePath
    /// When its head arrived.
    var started = ContinuousClock.now
    /// The id it is logged with (`hb.request.id`), as the router gives each request.
    var generatedID = RequestID().description
    /// The client token, once checked (before the body is read).
    var token: ClientToken?
    var body = ByteBuffer()
    /// Why the request is refused without being applied (its body is too large), if it is: its
    /// body is then dropped as it arrives.
    var refusal: APIError?

    /// The body's length as its head declares it (`Content-Length`), if it does: read once, for
    /// the size check before the body and the buffer's room.
    let declaredLength: Int?

    init(head: HTTPRequest, route: ClientRoutePath) {
        self.head = head
        self.route = route
        declaredLength = head.headerFields.value(of: .contentLength).flatMap(Int.init)
    }

    /// Whether the client asked to close the connection after the answer.
    var closesConnection: Bool { head.headerFields.asksToCloseConnection }
}

/// The path of a client route, `/i/d/{documentID}[/l/{layerName}]/{name}`, with the document id
/// and layer name (`""` without one) as they are in the path.
struct ClientRoutePath: Sendable {
    var documentID: String
    var layer: String

    /// The router's path of the client routes, and of those of a named layer under it.
    static let documentGroup = "i/d/{documentID}"
    static let layerGroup = "l/{layerName}"
    /// The fixed names of the two groups' paths, before their last part (the `{…}` name):
    /// `["i", "d"]` and `["l"]`.
    private static let documentWords = documentGroup.split(separator: "/").dropLast().map { Array($0.utf8) }
    private static let layerWords = layerGroup.split(separator: "/").dropLast().map { Array($0.utf8) }

    /// The templates the router gives the sync route without and with a layer (metrics label
    /// answers with them; made once, as every sync answer is labelled).
    private static let syncTemplates = (
        document: "/\(documentGroup)/sync", layer: "/\(documentGroup)/\(layerGroup)/sync"
    )
    var syncTemplate: String { layer.isEmpty ? Self.syncTemplates.document : Self.syncTemplates.layer }

    /// The names of `path` (its query left out) if it is the client route `name`, `nil` otherwise.
    ///
    /// Every request's path is matched here, so it is read as bytes: split into strings and
    /// compared as such, it took 2.7% of a node's event loops in a profile of 1-change pushes on
    /// PostgreSQL, 1.0% as bytes. (The HTTP parser refuses bytes over 0x7F in a request's target,
    /// so bytes and characters compare alike.)
    init?(_ path: some StringProtocol, route name: String) {
        let bytes = Array(path.utf8.prefix { $0 != UInt8(ascii: "?") })
        // At most `/i/d/{documentID}/l/{layerName}/{name}`: seven parts, and an eighth with the rest.
        var parts = bytes.split(separator: UInt8(ascii: "/"), maxSplits: 7, omittingEmptySubsequences: false)[...]
        func next(is word: [UInt8]) -> Bool {
            parts.popFirst().map { $0.elementsEqual(word) } == true
        }
        func nextName() -> String? {
            // An empty name is the router's to answer (it matches no route).
            guard let part = parts.popFirst(), !part.isEmpty else { return nil }
            return String(decoding: part, as: UTF8.self)
        }
        guard parts.popLast().map({ $0.elementsEqual(name.utf8) }) == true, next(is: []),
            Self.documentWords.allSatisfy(next(is:)), let documentID = nextName()
        else { return nil }
        self.documentID = documentID
        if parts.isEmpty {
            layer = ""
            return
        }
        guard Self.layerWords.allSatisfy(next(is:)), let layer = nextName(), parts.isEmpty else { return nil }
        self.layer = layer
    }
}

/// Decides what a connection does with each part of the requests it reads, so that sync requests are
/// answered ahead of the router (``SyncRouteHandler``) and every answer still goes out in the order
/// of the requests: a sync request is answered only once the router has answered the requests
/// before it, and what follows it waits until its answer is written.
///
/// A value type: the handler feeds it the parts read, the ends of the router's answers and of its
/// own, and runs the actions it returns.
struct SyncRouteStateMachine {
    enum State {
        /// Requests go on to the router.
        case routing
        /// A sync request's path and token are checked; its body waits (unread) until they pass.
        case authorizing(SyncHTTPRequest)
        /// A sync request's body arrives.
        case collecting(SyncHTTPRequest)
        /// The body of a sync request that was refused before its end (too large) is read to its end
        /// and dropped.
        case discarding
        /// A whole sync request waits for the router to answer the requests before it.
        case waitingForRouter(SyncHTTPRequest)
        /// A sync request is being answered.
        case answering
    }

    /// What the handler does.
    enum Action {
        /// Passes the part on to the router.
        case route(HTTPRequestPart)
        /// Checks the sync request's path and client token (``authorized(_:)`` takes the outcome).
        case authorize(SyncHTTPRequest)
        /// Answers the sync request: with its ``SyncHTTPRequest/refusal`` when it has one (at once,
        /// and before its end when it is not whole yet), else by applying it.
        case answer(SyncHTTPRequest)
        /// Nothing to do.
        case none
    }

    private var state = State.routing
    /// The largest body a sync request may have.
    let bodyLimit: InstantAPI.BodyLimit
    private var maxBodySize: Int { bodyLimit.bytes }
    /// Whether every request goes to the router from now on: the connection is to close after an
    /// answer the router writes (the server shuts down, or a client asked to close), and the router
    /// reads nothing after it.
    private var routesEverything = false
    /// Requests passed to the router that it has not finished answering.
    private var routerAnswersDue = 0
    /// Parts read while a sync request waited or was answered, to handle once it is.
    private var waiting = CircularBuffer<HTTPRequestPart>()

    init(bodyLimit: InstantAPI.BodyLimit) {
        self.bodyLimit = bodyLimit
    }

    /// Whether the connection should stop reading for now: a sync request waits or is answered,
    /// and what follows it waits (a client that sends request after request without reading the
    /// answers is held to what one read brought).
    var holdsReads: Bool {
        switch state {
        case .authorizing, .waitingForRouter, .answering: true
        case .routing, .collecting, .discarding: false
        }
    }

    /// Whether parts read wait for a sync request.
    var hasWaitingParts: Bool { !waiting.isEmpty }

    /// Whether the sync request under way is whole (only its answer is to come).
    var isWhole: Bool {
        switch state {
        case .waitingForRouter, .answering: true
        case .routing, .authorizing, .collecting, .discarding: false
        }
    }

    /// Whether no sync request is under way (its body arriving, waiting, or being answered).
    var isIdle: Bool {
        if case .routing = state { true } else { false }
    }

    /// A part read from the connection. `isSyncRoute` tells whether a head is one of a sync
    /// request the connection answers itself.
    mutating func read(_ part: HTTPRequestPart, isSyncRoute: (HTTPRequest) -> ClientRoutePath?) -> Action {
        switch state {
        case .authorizing, .waitingForRouter, .answering:
            waiting.append(part)
            return .none
        case .routing:
            guard case .head(let head) = part, !routesEverything, let route = isSyncRoute(head) else {
                if case .head(let head) = part {
                    routerAnswersDue += 1
                    if head.headerFields.asksToCloseConnection { routesEverything = true }
                }
                return .route(part)
            }
            var request = SyncHTTPRequest(head: head, route: route)
            if let declared = request.declaredLength, declared > maxBodySize {
                request.refusal = tooLarge("\(declared)")
                return refuseEarly(request)
            }
            state = .authorizing(request)
            return .authorize(request)
        case .collecting(var request):
            switch part {
            case .head:
                // The decoder gives every request its end before the next head; were it not so, the
                // request would be dropped unanswered and the head taken as new.
                state = .routing
                return read(part, isSyncRoute: isSyncRoute)
            case .body(var bytes):
                guard request.refusal == nil else { return .none }
                guard request.body.readableBytes + bytes.readableBytes <= maxBodySize else {
                    request.body = ByteBuffer()
                    request.refusal = tooLarge("more than \(maxBodySize)")
                    return refuseEarly(request)
                }
                // The state lets go of the body first, so that it grows in place rather than copied.
                state = .discarding
                request.body.writeBuffer(&bytes)
                state = .collecting(request)
                return .none
            case .end:
                guard routerAnswersDue == 0 else {
                    state = .waitingForRouter(request)
                    return .none
                }
                state = .answering
                return .answer(request)
            }
        case .discarding:
            if case .end = part { state = .routing }
            return .none
        }
    }

    /// The outcome of the check of ``Action/authorize(_:)``: the body is read from now on (kept
    /// with the token, or dropped when the request is refused).
    mutating func authorized(_ outcome: Result<ClientToken, APIError>) -> Action {
        guard case .authorizing(var request) = state else { return .none }
        switch outcome {
        case .success(let token):
            request.token = token
            if let declared = request.declaredLength {
                request.body.reserveCapacity(declared)
            }
            state = .collecting(request)
            return .none
        case .failure(let refusal):
            request.refusal = refusal
            return refuseEarly(request)
        }
    }

    /// The connection is to close after the router's answers (the server shuts down): requests go
    /// to the router, which reads none after its answer.
    mutating func routeEverything() {
        routesEverything = true
    }

    /// The sync request whose body was arriving is dropped (its connection failed).
    mutating func abandonRequest() {
        switch state {
        case .authorizing, .collecting, .discarding: state = .routing
        case .routing, .waitingForRouter, .answering: break
        }
    }

    /// A request refused before its end: answered at once, unless the router still owes answers
    /// to requests before it (then at its end, after them); its body is dropped either way.
    private mutating func refuseEarly(_ request: SyncHTTPRequest) -> Action {
        guard routerAnswersDue == 0 else {
            state = .collecting(request)
            return .none
        }
        state = .discarding
        return .answer(request)
    }

    /// The router wrote the end of an answer.
    mutating func routerAnswered() -> Action {
        routerAnswersDue = max(routerAnswersDue - 1, 0)
        guard routerAnswersDue == 0, case .waitingForRouter(let request) = state else { return .none }
        state = .answering
        return .answer(request)
    }

    /// The answer of the sync request was written: the parts that waited go on.
    mutating func answered() {
        if case .answering = state { state = .routing }
    }

    /// The next part that waited, once nothing holds it any longer.
    mutating func nextWaitingPart() -> HTTPRequestPart? {
        holdsReads ? nil : waiting.popFirst()
    }

    private func tooLarge(_ size: String) -> APIError {
        bodyLimit.refusal(ofBodyWithSize: size)
    }
}
