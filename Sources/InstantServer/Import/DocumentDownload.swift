import AsyncHTTPClient
import Foundation
import NIOCore

/// Fetches a document from a URL for `POST /api/documents`, within the configured time and size.
struct DocumentDownload: Sendable {
    let configuration: DocumentDownloadConfiguration
    /// The body limit of the backend API, the default size limit.
    let bodyLimit: Int

    var maxBytes: Int { configuration.maxBytes ?? bodyLimit }

    /// The bytes at `text`, an absolute `http` or `https` URL.
    ///
    /// - Throws: ``APIError`` 400 for a URL that cannot be fetched from (scheme, host not
    ///   allowed), 422 when the fetch fails, answers an error, times out, or the file is over
    ///   the size limit; the message says which.
    func fetch(_ text: String) async throws -> Data {
        guard configuration.isEnabled else {
            throw APIError(
                .unsupportedMediaType,
                "Adding documents from a URL is turned off on this server (instant serve --download-timeout 0); "
                    + "send the PDF bytes as application/pdf or multipart/form-data.")
        }
        guard text.count <= 8_192, let url = URL(string: text), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty
        else {
            throw APIError.badRequest("'url' must be an absolute http or https URL, not '\(text.prefix(200))'.")
        }
        if let allowed = configuration.allowedHosts, !allowed.contains(host.lowercased()) {
            throw APIError.badRequest(
                "Documents cannot be added from \(host): this server only fetches from "
                    + allowed.sorted().joined(separator: ", ") + " (instant serve --download-hosts).")
        }
        let limit = maxBytes
        let seconds = Self.seconds(configuration.timeout)
        do {
            var request = HTTPClientRequest(url: url.absoluteString)
            request.method = .GET
            let response = try await HTTPClient.shared.execute(
                request, deadline: .now() + .nanoseconds(Int64(seconds * 1e9)))
            guard (200..<300).contains(response.status.code) else {
                throw APIError.unprocessable(
                    "The document at \(url.absoluteString) could not be fetched: it answered \(response.status).")
            }
            if let length = response.headers.first(name: "content-length").flatMap(Int.init), length > limit {
                throw Self.tooLarge(url, limit: limit)
            }
            var data = Data()
            for try await buffer in response.body {
                guard data.count + buffer.readableBytes <= limit else { throw Self.tooLarge(url, limit: limit) }
                data.append(contentsOf: buffer.readableBytesView)
            }
            return data
        } catch let error as APIError {
            throw error
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            throw APIError.unprocessable(
                "The document at \(url.absoluteString) could not be fetched within \(Self.describe(seconds)) "
                    + "(instant serve --download-timeout).")
        } catch {
            throw APIError.unprocessable("The document at \(url.absoluteString) could not be fetched: \(error).")
        }
    }

    private static func tooLarge(_ url: URL, limit: Int) -> APIError {
        APIError(
            .contentTooLarge,
            "The document at \(url.absoluteString) is larger than \(limit) bytes, the most this server accepts "
                + "(instant serve --max-body-size).")
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    private static func describe(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? "\(Int(seconds)) s" : String(format: "%.1f s", seconds)
    }
}
