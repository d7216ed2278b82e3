import Foundation
import HTTPTypes
import InstantJSON
import InstantTesting
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Synchronization
import Testing

@testable import InstantServer

/// What happens on a connection while ``SyncRouteHandler`` holds sync requests back, seen from its
/// two sides on an `NIOAsyncTestingChannel`: the answers written to the client, and what is handed
/// on to the router (played by ``RouterStandIn``).
@Suite("Sync requests ahead of the router: held events", .timeLimit(.minutes(2)))
struct SyncRouteHandlerEventTests {
    /// What the two sides of the handler saw, in the order they saw it.
    final class Trace: Sendable {
        private let lines = Mutex<[String]>([])

        func add(_ line: String) { lines.withLock { $0.append(line) } }

        /// What was seen since the last call.
        func take() -> [String] {
            lines.withLock { lines in
                let taken = lines
                lines = []
                return taken
            }
        }
    }

    /// Notes the answers as they are written to the client (first in the pipeline, before the
    /// handler), by their request id and status.
    final class AnswersSeen: ChannelOutboundHandler {
        typealias OutboundIn = HTTPResponsePart
        typealias OutboundOut = HTTPResponsePart
        let trace: Trace

        init(_ trace: Trace) { self.trace = trace }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            if case .head(let head) = unwrapOutboundIn(data) {
                trace.add("answer \(head.headerFields[RequestLog.headerName] ?? "?") \(head.status.code)")
            }
            context.write(data, promise: promise)
        }
    }

    /// The router's place after the handler: notes what it is handed, and answers the requests
    /// named in `answersAtOnce` as soon as their end is handed on (the others are answered by the
    /// test, as the router's task would).
    final class RouterStandIn: ChannelInboundHandler {
        typealias InboundIn = HTTPRequestPart
        typealias OutboundOut = HTTPResponsePart
        let trace: Trace
        let answersAtOnce: Set<String>
        private var id = ""

        init(_ trace: Trace, answersAtOnce: Set<String>) {
            self.trace = trace
            self.answersAtOnce = answersAtOnce
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                id = head.headerFields[RequestLog.headerName] ?? "?"
                trace.add("router: \(id)")
            case .body:
                trace.add("router: body")
            case .end:
                trace.add("router: end")
                guard answersAtOnce.contains(id) else { return }
                context.write(wrapOutboundOut(.head(SyncRouteHandlerEventTests.routerAnswer(to: id))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }

        func channelReadComplete(context: ChannelHandlerContext) { trace.add("router: read complete") }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            trace.add("router: event \(event)")
        }

        // Kept here: an error passing the end of the testing channel's pipeline fails its next call.
        func errorCaught(context: ChannelHandlerContext, error: any Error) { trace.add("router: error \(error)") }
    }

    struct ConnectionReset: Error, CustomStringConvertible {
        var description: String { "connection reset" }
    }

    static func routerAnswer(to id: String) -> HTTPResponse {
        HTTPResponse(status: .ok, headerFields: [RequestLog.headerName: id, .contentLength: "0"])
    }

    /// The parts of a request, named by its `X-Request-Id`.
    static func request(
        _ method: HTTPRequest.Method, _ path: String, id: String, token: String? = nil, body: String = ""
    )
        -> [HTTPRequestPart]
    {
        var fields: HTTPFields = [RequestLog.headerName: id]
        if let token { fields[.authorization] = "Token token=\"\(token)\"" }
        if !body.isEmpty { fields[.contentLength] = String(body.utf8.count) }
        let head = HTTPRequest(method: method, scheme: "http", authority: "h", path: path, headerFields: fields)
        return [.head(head)] + (body.isEmpty ? [] : [.body(ByteBuffer(string: body))]) + [.end(nil)]
    }

    /// A client that sends requests without waiting for their answers, and whose connection then
    /// reports the end of its input and a failure, gets every answer, in the order of its requests;
    /// and the router's connection handling learns of that end and that failure only after those
    /// answers, once each, after the last request it is handed, so that it neither closes the
    /// connection before the answers nor hears of them twice.
    ///
    /// The input here: a request for the router; a pull, which waits for the router's answer; a
    /// request the router answers as it is handed on; a sync request whose token this node verified
    /// before but which is for another document, refused at once (without a task) when the pull's
    /// answer lets it go; a last request for the router. The end of the input and the failure
    /// arrive while the pull waits. When the refusal is answered, the handler is already going
    /// through the waiting requests (the router's answer as the request is handed on is what lets
    /// the refusal be decided within that pass): it goes on with them itself rather than starting
    /// over inside, which would hand the router the end of the read a second time, after the end
    /// of the input.
    @Test func eventsHeldBehindSyncRequestsFollowTheirAnswersOnce() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await ServeProcessTests.storeDocument(in: directory.url)
        let key = try await TestSigningKey(.es256)
        let configuration = InstantServerConfiguration(apiAuthToken: "token", jwt: key.jwtConfiguration)
        let endpoint = try await buildInstantRouters(
            configuration: configuration, storage: try InstantStorage.sqlite(directory: directory.url),
            importer: InstantPDFImporter(), pdfWork: PDFWorkPool(configuration: configuration.pdfProcessing)
        ).sync
        func token(_ documentID: String) async throws -> String {
            let token = try await key.token(
                ClientClaims(
                    documentID: documentID, permissions: ["read-document", "write"], userID: "alice",
                    expiration: Date().addingTimeInterval(3600)))
            // Verified once: checked again on the event loop from now on.
            _ = try await #require(endpoint.verifier).verify(token)
            return token
        }
        let (ours, others) = (try await token("doc"), try await token("other"))

        let trace = Trace()
        let channel = NIOAsyncTestingChannel()
        try await channel.testingEventLoop.executeInContext {
            try channel.pipeline.syncOperations.addHandlers(
                AnswersSeen(trace), SyncRouteHandler(endpoint: endpoint, logger: Logger(label: "test.sync")),
                RouterStandIn(trace, answersAtOnce: ["at-once"]))
        }
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 0))

        // One read brings every request; the connection then ends and fails.
        let parts =
            Self.request(.get, "/healthcheck", id: "first")
            + Self.request(.post, "/i/d/doc/sync", id: "pull", token: ours, body: #"{"clientId":"c","baseRevision":0}"#)
            + Self.request(.get, "/healthcheck", id: "at-once")
            + Self.request(.post, "/i/d/doc/sync", id: "refused", token: others, body: #"{"clientId":"c"}"#)
            + Self.request(.get, "/healthcheck", id: "last")
        try await channel.testingEventLoop.executeInContext {
            for part in parts { channel.pipeline.syncOperations.fireChannelRead(NIOAny(part)) }
            channel.pipeline.syncOperations.fireChannelReadComplete()
            channel.pipeline.syncOperations.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
            channel.pipeline.syncOperations.fireErrorCaught(ConnectionReset())
        }
        #expect(trace.take() == ["router: first", "router: end", "router: read complete"])

        // The router answers the first request: the pull is applied in a task, then what waited
        // goes on.
        try await channel.writeOutbound(HTTPResponsePart.head(Self.routerAnswer(to: "first")))
        try await channel.writeOutbound(HTTPResponsePart.end(nil))
        await channel.testingEventLoop.run()
        var answers: [(head: HTTPResponse, body: String)] = []
        while answers.count < 4 {
            guard case .head(let head) = try await channel.waitForOutboundWrite(as: HTTPResponsePart.self) else {
                Issue.record("an answer's part came before its head")
                return
            }
            var body = ""
            while case .body(let bytes) = try await channel.waitForOutboundWrite(as: HTTPResponsePart.self) {
                body += String(buffer: bytes)
            }
            answers.append((head, body))
        }
        // Once the loop is done with the last answer's turn.
        try await channel.testingEventLoop.executeInContext {}
        #expect(answers.map { $0.head.headerFields[RequestLog.headerName] } == ["first", "pull", "at-once", "refused"])
        #expect(try JSONValue(parsing: Data(answers[1].body.utf8))["revision"] == 0)
        #expect(answers[3].head.status == .forbidden)
        #expect(answers[3].body.contains("document 'other'"), "\(answers[3].body)")
        #expect(
            trace.take() == [
                "answer first 200", "answer pull 200",
                "router: at-once", "router: end", "answer at-once 200",
                "answer refused 403",
                "router: last", "router: end", "router: read complete",
                "router: event inputClosed", "router: error connection reset",
            ])

        // The last answer is the router's, and nothing more was held.
        try await channel.writeOutbound(HTTPResponsePart.head(Self.routerAnswer(to: "last")))
        try await channel.writeOutbound(HTTPResponsePart.end(nil))
        #expect(trace.take() == ["answer last 200"])
        _ = try await channel.finish()
    }
}
