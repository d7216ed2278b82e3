import Foundation
import InstantJSON

/// The entry point of the SDK: one client per server, owning the local store in its data
/// directory and the document descriptors it hands out.
///
/// ```swift
/// let client = try InstantClient(serverURL: URL(string: "https://instant.example.com")!,
///                                dataDirectory: applicationSupport.appendingPathComponent("Instant"))
/// let descriptor = try client.documentDescriptor(forJWT: jwt)
/// try descriptor.download(usingJWT: jwt)
/// ```
public final class InstantClient: @unchecked Sendable {
    /// The server this client syncs with.
    public let serverURL: URL
    /// Where the local store and the downloaded PDFs live.
    public let dataDirectory: URL
    let store: LocalStore
    let transport: any InstantTransport
    private let lock = NSLock()
    private var descriptors: [DescriptorKey: InstantDocumentDescriptor] = [:]
    private var pdfDownloads: [String: PDFDownload] = [:]
    private weak var _delegate: (any InstantClientDelegate)?

    struct DescriptorKey: Hashable {
        var documentID: String
        var layer: String
    }

    /// A document's PDF being downloaded, and the layers waiting for it with their progress handlers.
    private struct PDFDownload {
        let id: UUID
        let task: Task<Void, any Error>
        var waiters: [UUID: @Sendable (Int64, Int64?) -> Void] = [:]
    }

    /// Receives the same events as the notifications, for every descriptor of this client.
    public var delegate: (any InstantClientDelegate)? {
        get { lock.withLock { _delegate } }
        set { lock.withLock { _delegate = newValue } }
    }

    /// Opens (or creates) the local store in `dataDirectory` for the server at `serverURL`.
    /// - Throws: ``InstantError`` (``InstantError/Code/storageFailed``) when the directory cannot be used.
    public convenience init(serverURL: URL, dataDirectory: URL) throws {
        try self.init(
            serverURL: serverURL, dataDirectory: dataDirectory, transport: URLSessionTransport(serverURL: serverURL))
    }

    init(serverURL: URL, dataDirectory: URL, transport: any InstantTransport) throws(InstantError) {
        self.serverURL = serverURL
        self.dataDirectory = dataDirectory
        self.store = try LocalStore(directory: dataDirectory)
        self.transport = transport
    }

    /// A released client's descriptors become ``InstantDocumentState/invalid``: nothing syncs or
    /// edits through a client the app let go of.
    deinit {
        for descriptor in descriptors.values { descriptor.invalidate() }
    }

    /// The descriptor of the document and layer a JWT is for; the same instance for the same pair.
    /// The JWT's signature is not checked here (only the server can); its claims are read.
    /// - Throws: ``InstantError/Code/invalidJWT`` if the text is not a JWT with a `document_id`.
    public func documentDescriptor(forJWT jwt: String) throws -> InstantDocumentDescriptor {
        guard let claims = InstantJWT(jwt) else {
            throw InstantError.invalidJWT("The text is not a JWT with a 'document_id' claim.")
        }
        return try descriptor(documentID: claims.documentID, layer: claims.layerName)
    }

    /// Every descriptor with downloaded data in the local store.
    public func localDocumentDescriptors() throws -> [InstantDocumentDescriptor] {
        try store.layers().map { layer throws(InstantError) in
            try descriptor(documentID: layer.documentID, layer: layer.name)
        }
    }

    /// Deletes the PDF and every layer of a document from the local store; their descriptors
    /// become unusable (``InstantDocumentState/invalid``).
    public func removeLocalStorage(forDocumentIdentifier identifier: String) throws {
        let affected = lock.withLock {
            let keys = descriptors.keys.filter { $0.documentID == identifier }
            defer { for key in keys { descriptors[key] = nil } }
            return keys.compactMap { descriptors[$0] }
        }
        for descriptor in affected { descriptor.invalidate() }
        try store.removeDocument(documentID: identifier)
    }

    /// Deletes the PDFs that no downloaded layer uses any more.
    public func removeUnreferencedCacheEntries() throws {
        let inUse = lock.withLock { Set(descriptors.values.filter(\.isDownloading).map(\.identifier)) }
        try store.removeUnreferencedPDFs(keeping: inUse)
    }

    /// Downloads a document's PDF into the store. Layers downloading at the same time share one
    /// download and each sees its progress; it stops only when every one of them was cancelled.
    func downloadPDF(
        documentID: String, layer: String, jwt: String, progress: @escaping @Sendable (Int64, Int64?) -> Void
    ) async throws {
        try Task.checkCancellation()
        let waiter = UUID()
        let download = lock.withLock {
            var download = pdfDownloads[documentID] ?? startPDFDownload(documentID: documentID, layer: layer, jwt: jwt)
            download.waiters[waiter] = progress
            pdfDownloads[documentID] = download
            return download
        }
        defer { stopWaiting(waiter, for: download, of: documentID) }
        try await withTaskCancellationHandler {
            try await download.task.value
        } onCancel: {
            stopWaiting(waiter, for: download, of: documentID)
        }
    }

    /// Starts downloading a PDF; the caller holds the lock and registers the download.
    private func startPDFDownload(documentID: String, layer: String, jwt: String) -> PDFDownload {
        let id = UUID()
        let task = Task { [store, transport] in
            let data = try await transport.downloadPDF(documentID: documentID, layer: layer, jwt: jwt) {
                received, total in
                for handler in self.progressHandlers(of: id, documentID: documentID) { handler(received, total) }
            }
            try store.storePDF(data, documentID: documentID)
        }
        return PDFDownload(id: id, task: task)
    }

    /// The progress handlers of the layers waiting for a PDF download.
    private func progressHandlers(of download: UUID, documentID: String) -> [@Sendable (Int64, Int64?) -> Void] {
        lock.withLock {
            guard let current = pdfDownloads[documentID], current.id == download else { return [] }
            return Array(current.waiters.values)
        }
    }

    /// A layer stops waiting for a PDF download (it finished, or the layer's download was
    /// cancelled); when nobody waits any more, the download is cancelled and forgotten.
    private func stopWaiting(_ waiter: UUID, for download: PDFDownload, of documentID: String) {
        let abandoned = lock.withLock {
            guard var current = pdfDownloads[documentID], current.id == download.id,
                current.waiters.removeValue(forKey: waiter) != nil
            else { return false }
            pdfDownloads[documentID] = current.waiters.isEmpty ? nil : current
            return current.waiters.isEmpty
        }
        if abandoned { download.task.cancel() }
    }

    func descriptor(documentID: String, layer: String) throws(InstantError) -> InstantDocumentDescriptor {
        let key = DescriptorKey(documentID: documentID, layer: layer)
        if let existing = lock.withLock({ descriptors[key] }) { return existing }
        let local = try store.layer(documentID: documentID, name: layer)
        let created = lock.withLock {
            if let existing = descriptors[key] { return (existing, false) }
            let descriptor = InstantDocumentDescriptor(client: self, documentID: documentID, layerName: layer)
            descriptors[key] = descriptor
            return (descriptor, true)
        }
        if created.1, let local {
            created.0.foundLocalData(local)
        }
        return created.0
    }
}
