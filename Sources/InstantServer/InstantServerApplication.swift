import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle

/// Builds the Instant server: the REST API for the user's backend on `/api/...` (API token), the
/// client routes on `/i/...` (JWT) and `/healthcheck`, on connections held to
/// ``InstantServerConfiguration/httpLimits``.
///
/// - Parameters:
///   - configuration: Address, tokens, keys and limits.
///   - storage: Where documents and records live. Its backend's services (a database pool) run
///     with the application, its schema is brought up to date before the server listens, and
///     with a database shared by several nodes a ``NodeRelay`` keeps this node's listeners in step
///     with the others.
///   - importer: Reads uploaded PDFs.
///   - logger: The server's logger.
///   - metrics: The registry `/metrics` serves in the Prometheus text format; request counts and
///     durations are recorded in it, and the server's own measures (``ServerMetrics``).
///   - pdfWork: Runs uploads and exports; by default a pool as ``InstantServerConfiguration/pdfProcessing``
///     says. The application runs it as a service, which stops its workers when the server stops.
///   - onServerRunning: Called with the bound port once the server listens (tests use it to learn
///     the port when ``InstantServerConfiguration/port`` is `0`).
/// - Throws: ``ClientTokenError`` when the JWT key configuration is unusable.
public func buildInstantApplication(
    configuration: InstantServerConfiguration,
    storage: InstantStorage,
    importer: any DocumentImporter,
    logger: Logger = Logger(label: "instant.server"),
    metrics: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
    pdfWork: PDFWorkPool? = nil,
    onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
) async throws -> some ApplicationProtocol {
    let events = LayerEvents(limits: configuration.clientLimits.listening, metrics: ServerMetrics(registry: metrics))
    let pdfWork = pdfWork ?? PDFWorkPool(configuration: configuration.pdfProcessing)
    let routers = try await buildInstantRouters(
        configuration: configuration,
        storage: storage,
        importer: importer,
        events: events,
        metrics: metrics,
        pdfWork: pdfWork
    )
    // The database's services first: they stop last, after the server and the relay.
    var services = storage.backend.services
    if let channel = storage.backend.nodeChannel {
        services.append(NodeRelay(channel: channel, events: events, storage: storage, logger: logger))
    }
    services.append(pdfWork)
    services.append(ClientWorkShutdown(events: events, syncRequests: routers.sync.underWay))
    var application = Application(
        router: routers.http,
        server: .guardedHTTP1(
            listening: routers.listening, sync: routers.sync, configuration: configuration, logger: logger),
        configuration: .init(
            address: .hostname(configuration.hostname, port: configuration.port),
            serverName: instantServerName
        ),
        services: services,
        onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
        // The loops whose requests the sync requests under way share out.
        eventLoopGroupProvider: .shared(routers.sync.underWay.group),
        logger: logger
    )
    application.beforeServerStarts { try await storage.backend.prepare() }
    return application
}

/// The `Server` header of the answers.
let instantServerName = "OpenInstant"

/// Builds the routers of the Instant server (see
/// ``buildInstantApplication(configuration:storage:importer:logger:metrics:onServerRunning:)``):
/// the router of HTTP requests, and the listening WebSocket of `.../listen` (which decides its
/// upgrades and serves them). The caller runs `pdfWork` as a service of its application.
public func buildInstantRouters(
    configuration: InstantServerConfiguration,
    storage: InstantStorage,
    importer: any DocumentImporter,
    events: LayerEvents? = nil,
    metrics: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
    pdfWork: PDFWorkPool
) async throws -> (http: Router<InstantRequestContext>, listening: ListeningEndpoint, sync: SyncEndpoint) {
    let serverMetrics = ServerMetrics(registry: metrics)
    let requestMetrics = RequestMetrics(registry: metrics)
    let events = events ?? LayerEvents(limits: configuration.clientLimits.listening, metrics: serverMetrics)
    storage.addObserver(events)
    storage.addObserver(serverMetrics)
    let api = InstantAPI(
        storage: storage, importer: importer, configuration: configuration, events: events, pdfWork: pdfWork)
    var verifier: ClientTokenVerifier?
    if let jwt = configuration.jwt {
        verifier = try await ClientTokenVerifier(configuration: jwt, storage: storage)
    }
    let router = Router(context: InstantRequestContext.self)
    router.add(middleware: EventLoopPreferenceMiddleware())
    router.add(middleware: ResponseSecurityHeadersMiddleware())
    router.add(middleware: RequestLoggingMiddleware())
    router.add(middleware: MetricsMiddleware(metrics: requestMetrics))
    router.add(middleware: ErrorMiddleware())
    router.get("healthcheck") { _, context in
        // Healthy means able to serve: the process answers and its database does too.
        do {
            try await storage.backend.checkHealth()
            return InstantAPI.respond(["ok": true])
        } catch {
            context.logger.warning("Healthcheck: the database does not answer", metadata: ["error": "\(error)"])
            return InstantAPI.respond(
                [
                    "ok": false,
                    "reason": .string(
                        "The database (\(storage.backend.description)) does not answer: \(error). "
                            + "The server reconnects by itself once it is reachable again."),
                ],
                status: .serviceUnavailable)
        }
    }
    router.get("metrics") { _, _ in
        Response(
            status: .ok,
            headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: metrics.emitToBuffer()))
        )
    }

    let backend = router.group("api").add(middleware: APITokenMiddleware(token: configuration.apiAuthToken))
    backend.post("revoke", use: api.revoke)
    backend.post("copy_document", use: api.copyDocument)
    backend.post("documents", use: api.createDocument)
    backend.get("documents", use: api.listDocuments)
    backend.delete("documents", use: api.deleteDocuments)
    let document = backend.group("documents/{documentID}")
    document.get(use: api.documentProperties)
    document.delete(use: api.deleteDocument)
    document.get("properties", use: api.documentProperties)
    document.get("outline.json", use: api.documentOutline)
    document.get("search", use: api.searchDocument)
    document.get("layers", use: api.listLayers)
    document.post("layers", use: api.createLayer)
    document.delete("layers/{layerName}", use: api.deleteLayer)
    document.post("attachments", use: api.uploadAttachment)
    document.get("attachments/{attachmentID}", use: api.downloadAttachment)
    for layer in [document, document.group("layers/{layerName}")] {
        layer.get("annotations", use: api.listAnnotations)
        layer.post("annotations", use: api.createAnnotations)
        layer.put("annotations", use: api.updateAnnotations)
        layer.delete("annotations", use: api.deleteAnnotations)
        layer.get("annotations/{annotationID}", use: api.getAnnotation)
        layer.put("annotations/{annotationID}", use: api.updateAnnotation)
        layer.delete("annotations/{annotationID}", use: api.deleteAnnotation)
        layer.get("pages/{pageIndex}/annotations", use: api.listAnnotations)
        layer.get("document.json", use: api.exportDocumentJSON)
        layer.get("pdf", use: api.documentPDF)
        layer.post("pdf_with_instant_json", use: api.documentPDFWithInstantJSON)
        layer.post("apply_instant_json", use: api.applyInstantJSON)
        layer.post("copy_with_instant_json", use: api.copyWithInstantJSON)
        layer.get("document.xfdf", use: api.exportXFDF)
        layer.get("document_info", use: api.documentInfo)
        layer.get("pages/text", use: api.documentText)
        layer.get("pages/{pageIndex}/text", use: api.pageText)
        layer.post("comments", use: api.createThread)
        layer.post("apply_xfdf", use: api.applyXFDF)
        layer.get("form-field-values", use: api.listFormFieldValues)
        layer.get("form-fields", use: api.listFormFields)
        layer.post("form-fields", use: api.createFormRecords(.fields))
        layer.put("form-fields", use: api.updateFormRecords(.fields))
        layer.delete("form-fields", use: api.deleteFormRecords(.fields))
        layer.get("form-fields/{formFieldID}", use: api.getFormField)
        layer.get("form-field-widgets", use: api.listFormFieldWidgets)
        layer.post("form-field-widgets", use: api.createFormRecords(.widgets))
        layer.put("form-field-widgets", use: api.updateFormRecords(.widgets))
        layer.delete("form-field-widgets", use: api.deleteFormRecords(.widgets))
        layer.get("form-field-widgets/{formFieldWidgetID}", use: api.getFormFieldWidget)
        layer.post("form-field-values", use: api.setFormFieldValues)
        layer.get("bookmarks", use: api.listBookmarks)
        layer.post("bookmarks", use: api.createBookmark)
        layer.put("bookmarks/{bookmarkID}", use: api.updateBookmark)
        layer.delete("bookmarks/{bookmarkID}", use: api.deleteBookmark)
        layer.get("annotations/{annotationID}/comments", use: api.listComments)
        layer.post("annotations/{annotationID}/comments", use: api.createComments)
    }

    let client = router.group(RouterPath(ClientRoutePath.documentGroup))
        .add(middleware: ClientTokenMiddleware(api: api, verifier: verifier))
    for layer in [client, client.group(RouterPath(ClientRoutePath.layerGroup))] {
        layer.get("pdf", use: api.clientPDF)
        layer.get("document.pdf", use: api.clientExportedPDF)
        layer.get("snapshot", use: api.clientSnapshot)
        layer.post("sync", use: api.sync)
        layer.get("listen", use: api.listenLongPoll)
        layer.put("attachments/{attachmentID}", use: api.clientUploadAttachment)
        layer.get("attachments/{attachmentID}", use: api.clientDownloadAttachment)
    }

    try await ViewerRoutes(api: api, configuration: configuration.viewer).register(on: router)

    // After every route: it wraps only the router's 404 answer.
    router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes))

    let clientVerifier = verifier
    let syncRequests = SyncRequestsUnderWay()
    let listening = ListeningEndpoint(
        admit: { request, _ in await api.admitListener(request, verifier: clientVerifier) },
        events: events,
        storedRevision: { layer in
            try await storage.layerCreatingIfNeeded(documentID: layer.documentID, name: layer.name).revision
        },
        answer: { message, token, listener, logger in
            await api.answerOnSocket(message, token: token, listener: listener, logger: logger)
        },
        underWay: syncRequests,
        maxMessageSize: configuration.clientLimits.maxSocketMessageSize,
        pingInterval: configuration.webSocketPingInterval
    )
    let sync = SyncEndpoint(
        api: api, verifier: verifier, metrics: requestMetrics, serverName: instantServerName, underWay: syncRequests)
    return (router, listening, sync)
}

/// The listening WebSocket of the client routes (`.../listen` with `Upgrade: websocket`), served
/// by ``ListeningWebSocketHandler``.
public struct ListeningEndpoint: Sendable {
    /// Decides whether an upgrade request becomes a listening WebSocket.
    let admit: @Sendable (Request, Logger) async -> ListeningSession?
    /// Wakes the listeners and tells them what changed.
    let events: LayerEvents
    /// The layer's stored revision (creating the layer from its document's records if needed).
    let storedRevision: @Sendable (LayerEvents.Layer) async throws -> Int64
    /// The answer to a message a client sent (`nil`: a binary message), and the revision it brings
    /// the client to.
    let answer: @Sendable (ByteBuffer?, ClientToken, UUID, Logger) async -> (text: SyncAnswerBody, revision: Int64?)
    /// Counts the requests being answered, for the server's shutdown to wait for.
    let underWay: SyncRequestsUnderWay
    /// The largest message a client may send (``ClientLimits/maxSocketMessageSize``).
    let maxMessageSize: Int
    /// How often the server pings (a client that has not answered the last ping is cut off).
    let pingInterval: Duration
}

/// Keeps the process alive on shutdown, once the server has stopped, for what its connections
/// leave running; the last of our services, it is shut down after the server and before the
/// storage's.
///
/// - The listening WebSockets close: the server tells each to close (`1001`) and stops without
///   waiting for them, since no task serves them. Waited for until every listener has stopped (its
///   client answered the close, or the handler's close timeout cut it), at most
///   `listenersLimit` (3 s).
/// - Then the sync requests no connection waits for (``SyncRequestsUnderWay``) reach their
///   commit: waited for at most `syncRequestsLimit` (10 s), more than a push within the limits
///   takes. At worst, the two waits add up.
struct ClientWorkShutdown: Service {
    let events: LayerEvents
    let syncRequests: SyncRequestsUnderWay
    var listenersLimit = Duration.seconds(3)
    var syncRequestsLimit = Duration.seconds(10)

    func run() async throws {
        try? await gracefulShutdown()
        await events.untilNoListeners(waitingAtMost: listenersLimit)
        await syncRequests.untilNone(waitingAtMost: syncRequestsLimit)
    }
}
