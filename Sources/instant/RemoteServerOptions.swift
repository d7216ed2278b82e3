import ArgumentParser
import Foundation
import InstantServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How the document commands reach a running server.
struct RemoteServerOptions: ParsableArguments {
    @Option(help: "The server's base URL. Env: INSTANT_URL.")
    var server: String?

    @Option(help: "The API token; defaults to API_AUTH_TOKEN, then the development token of --data-dir.")
    var apiToken: String?

    @Option(help: "The data directory whose development API token is used when no token is given.")
    var dataDir: String?

    /// The server's base URL.
    func baseURL() throws -> URL {
        let text = server ?? ProcessInfo.processInfo.environment["INSTANT_URL"] ?? "http://127.0.0.1:5000"
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https" else {
            throw ValidationError("'\(text)' is not an http(s) URL.")
        }
        return url
    }

    /// The API token to send.
    func token() throws -> String {
        if let apiToken { return apiToken }
        if let token = ProcessInfo.processInfo.environment["API_AUTH_TOKEN"] { return token }
        let directory = URL(fileURLWithPath: dataDir ?? "instant-data")
        if let credentials = DevelopmentCredentials.load(from: directory) { return credentials.apiAuthToken }
        throw ValidationError(
            "No API token: pass --api-token, set API_AUTH_TOKEN, or point --data-dir at the server's data.")
    }

    /// Sends a request and returns the body, or throws the server's reason.
    /// - Parameter progress: Shown for bodies of a megabyte or more (on standard error).
    func send(
        _ method: String,
        _ path: String,
        contentType: String? = nil,
        body: Data? = nil,
        progress: ProgressBar? = nil
    ) async throws -> Data {
        var base = try baseURL().absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        guard let url = URL(string: "\(base)/\(path)") else { throw ValidationError("Bad request path: \(path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.setValue("Token token=\"\(try token())\"", forHTTPHeaderField: "Authorization")
        if let contentType { request.setValue(contentType, forHTTPHeaderField: "Content-Type") }
        let data: Data
        let response: URLResponse
        if let body, let progress, body.count >= 1_000_000 {
            let delegate = UploadProgressDelegate { sent, total in progress.update(done: sent, total: total) }
            let session = URLSession(configuration: .default, delegate: delegate, delegateQueue: nil)
            defer { session.finishTasksAndInvalidate() }
            (data, response) = try await session.upload(for: request, from: body)
            progress.update(done: Int64(body.count), total: Int64(body.count))
            progress.finish()
        } else {
            request.httpBody = body
            (data, response) = try await URLSession.shared.data(for: request)
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            let reason =
                (try? JSONSerialization.jsonObject(with: data) as? [String: Any])
                .flatMap { ($0["error"] as? [String: Any])?["reason"] as? String }
                ?? String(decoding: data, as: UTF8.self)
            throw ValidationError("The server answered \(status): \(reason)")
        }
        return data
    }
}

/// Writes bytes to a file, or to standard output when the path is `-` or absent.
func writeOutput(_ data: Data, to path: String?, endOfLine: Bool = true) throws {
    if let path, path != "-" {
        try data.write(to: URL(fileURLWithPath: path), options: .atomic)
    } else {
        FileHandle.standardOutput.write(data)
        if endOfLine { FileHandle.standardOutput.write(Data("\n".utf8)) }
    }
}
