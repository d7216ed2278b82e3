import Foundation
import InstantJSON

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The transport over HTTP with Foundation's URLSession (available on Linux and Apple platforms).
struct URLSessionTransport: InstantTransport {
    let serverURL: URL
    let session: URLSession

    init(serverURL: URL, session: URLSession = URLSession(configuration: Self.configuration)) {
        self.serverURL = serverURL
        self.session = session
    }

    /// An ephemeral session without a URL cache: sync answers must never come from a cache, and
    /// on Linux a request cancelled while FoundationNetworking consults the cache can crash the
    /// process (its cache lookup runs on another queue before the request is registered).
    static var configuration: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return configuration
    }

    /// The path of a layer's client routes; `appendingPathComponent` percent-encodes what a path
    /// cannot hold (identifiers never contain slashes).
    func layerPath(_ documentID: String, _ layer: String) -> String {
        layer.isEmpty ? "i/d/\(documentID)" : "i/d/\(documentID)/l/\(layer)"
    }

    func request(
        _ path: String, query: [URLQueryItem] = [], jwt: String, method: String = "GET", body: Data? = nil,
        timeout: TimeInterval = 60
    ) -> URLRequest {
        var url = serverURL.appendingPathComponent(path)
        if !query.isEmpty, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) {
            components.queryItems = query
            url = components.url ?? url
        }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method
        request.setValue("Token token=\"\(jwt)\"", forHTTPHeaderField: "Authorization")
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        return request
    }

    /// Sends a request and maps failures to ``InstantError``.
    func send(_ request: URLRequest) async throws(InstantError) -> Data {
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.cancellableData(for: request)
        } catch let error as URLError where error.code == .cancelled {
            throw InstantError(.cancelled, "The request was cancelled.")
        } catch is CancellationError {
            throw InstantError(.cancelled, "The request was cancelled.")
        } catch {
            throw InstantError(
                .couldNotReachServer, "Could not reach the server at \(serverURL.absoluteString): \(error)")
        }
        try Self.check(response, data)
        return data
    }

    /// Maps an HTTP status to the SDK's errors, with the server's reason.
    static func check(_ response: URLResponse, _ data: Data) throws(InstantError) {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard !(200..<300).contains(status) else { return }
        let reason =
            (try? JSONValue(parsing: data))?["error"]?["reason"]?.stringValue ?? "HTTP status \(status)"
        throw InstantError(status: status, reason: reason)
    }

    func json(_ data: Data) throws(InstantError) -> JSONValue {
        do { return try JSONValue(parsing: data) } catch {
            throw InstantError(.invalidServerResponse, "The server's answer is not JSON: \(error)")
        }
    }

    /// The size of each ranged request of a PDF download: progress is reported and cancellation
    /// checked between chunks.
    static let downloadChunkSize = 4 << 20

    func downloadPDF(
        documentID: String, layer: String, jwt: String, progress: @escaping @Sendable (Int64, Int64?) -> Void
    )
        async throws(InstantError) -> Data
    {
        var data = Data()
        var total: Int64?
        repeat {
            if Task.isCancelled { throw InstantError(.cancelled, "The download was cancelled.") }
            var request = request("\(layerPath(documentID, layer))/pdf", jwt: jwt, timeout: 120)
            let end = data.count + Self.downloadChunkSize - 1
            request.setValue("bytes=\(data.count)-\(end)", forHTTPHeaderField: "Range")
            let chunk: Data
            let response: URLResponse
            do {
                (chunk, response) = try await session.cancellableData(for: request)
            } catch is CancellationError {
                throw InstantError(.cancelled, "The download was cancelled.")
            } catch let error as URLError where error.code == .cancelled {
                throw InstantError(.cancelled, "The download was cancelled.")
            } catch {
                throw InstantError(.couldNotReachServer, "The PDF download broke off: \(error)")
            }
            try Self.check(response, chunk)
            let http = response as? HTTPURLResponse
            if http?.statusCode == 206, let range = http?.value(forHTTPHeaderField: "Content-Range"),
                let size = range.split(separator: "/").last.flatMap({ Int64($0) })
            {
                total = size
                data.append(chunk)
            } else {
                // The whole file in one answer.
                data = chunk
                total = Int64(chunk.count)
            }
            progress(Int64(data.count), total)
        } while Int64(data.count) < (total ?? 0)
        return data
    }

    func snapshot(documentID: String, layer: String, jwt: String) async throws(InstantError) -> (
        revision: Int64, records: [SyncRecord]
    ) {
        let answer = try json(try await send(request("\(layerPath(documentID, layer))/snapshot", jwt: jwt)))
        guard let revision = answer["revision"]?.intValue else {
            throw InstantError(.invalidServerResponse, "The snapshot has no revision.")
        }
        let records = try (answer["records"]?.arrayValue ?? []).map { item throws(InstantError) in
            try SyncRecord(item)
        }
        return (Int64(revision), records)
    }

    func sync(documentID: String, layer: String, jwt: String, body: JSONValue) async throws(InstantError) -> SyncAnswer
    {
        let data = try await send(
            request("\(layerPath(documentID, layer))/sync", jwt: jwt, method: "POST", body: body.serialized()))
        return try SyncAnswer(try json(data))
    }

    func waitForChange(documentID: String, layer: String, jwt: String, since: Int64) async throws(InstantError)
        -> Int64
    {
        let data = try await send(
            request(
                "\(layerPath(documentID, layer))/listen", query: [URLQueryItem(name: "since", value: "\(since)")],
                jwt: jwt, timeout: 70))
        guard let revision = try json(data)["revision"]?.intValue else {
            throw InstantError(.invalidServerResponse, "The listen answer has no revision.")
        }
        return Int64(revision)
    }

    func uploadAttachment(
        documentID: String, layer: String, jwt: String, id: String, data: Data, contentType: String
    ) async throws(InstantError) {
        var request = request("\(layerPath(documentID, layer))/attachments/\(id)", jwt: jwt, method: "PUT")
        request.httpBody = data
        request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        _ = try await send(request)
    }

    func downloadAttachment(documentID: String, layer: String, jwt: String, id: String) async throws(InstantError)
        -> (data: Data, contentType: String)
    {
        let request = request("\(layerPath(documentID, layer))/attachments/\(id)", jwt: jwt)
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.cancellableData(for: request)
        } catch {
            throw InstantError(.couldNotReachServer, "Could not download the attachment: \(error)")
        }
        try Self.check(response, data)
        let contentType =
            (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type") ?? "application/octet-stream"
        return (data, contentType)
    }
}
