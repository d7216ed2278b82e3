import Foundation
import Hummingbird
import InstantJSON
import NIOCore

/// An error answered to an HTTP client as `{"error": {"reason": "..."}}` with a status code.
public struct APIError: Error, HTTPResponseError, Sendable, CustomStringConvertible {
    /// The HTTP status of the answer.
    public var status: HTTPResponse.Status
    /// What went wrong and what to do, for the client.
    public var reason: String
    /// Extra response headers (for example `Content-Range` of a 416).
    public var headers: HTTPFields
    /// A machine-readable code, for the few routes whose errors the existing server answers as
    /// `{"error": {"reason": CODE, "description": "..."}}` (bulk deletion); `nil` elsewhere.
    public var code: String?

    /// Creates an API error.
    public init(_ status: HTTPResponse.Status, _ reason: String, headers: HTTPFields = [:], code: String? = nil) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.code = code
    }

    public var description: String { "\(status.code) \(reason)" }

    /// The answer's body: `{"error": {"reason": "..."}}`, or with a ``code``
    /// `{"error": {"reason": CODE, "description": "..."}}`.
    var body: Data {
        let error: JSONValue =
            code.map { ["reason": .string($0), "description": .string(reason)] } ?? ["reason": .string(reason)]
        return JSONValue.object(["error": error]).encoded()
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(status: status, headers: answerHeaders, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// The headers of the answer: ``headers``, the JSON content type, and for a 401 the scheme the
    /// server expects.
    var answerHeaders: HTTPFields {
        var headers = self.headers
        headers[.contentType] = "application/json; charset=utf-8"
        if status == .unauthorized {
            headers[.wwwAuthenticate] = "Token"
        }
        return headers
    }

    /// The error a failure is answered with, wherever in handling a request it was thrown: API
    /// errors as they are, storage errors by their code, anything unexpected as a 500 naming it.
    init(answering error: any Error) {
        switch error {
        case let error as APIError:
            self = error
        case let error as StorageError:
            self.init(error)
        case is NIOTooManyBytesError:
            self.init(
                .contentTooLarge,
                "The request body is larger than the server's limit. Send a smaller body or raise --max-body-size.")
        case let error as HTTPResponseError:
            self.init(
                error.status, (error as? HTTPError)?.body ?? "The request failed with status \(error.status.code).")
        default:
            self.init(.internalServerError, "The server failed to handle the request: \(error)")
        }
    }

    static func badRequest(_ reason: String) -> APIError { APIError(.badRequest, reason) }
    static func notFound(_ reason: String) -> APIError { APIError(.notFound, reason) }
    static func unprocessable(_ reason: String) -> APIError { APIError(.unprocessableContent, reason) }
    static func unauthorized(_ reason: String) -> APIError { APIError(.unauthorized, reason) }
    static func forbidden(_ reason: String) -> APIError { APIError(.forbidden, reason) }
}

extension APIError {
    /// The answer to a storage failure.
    init(_ error: StorageError) {
        switch error.code {
        case .documentNotFound, .layerNotFound, .recordNotFound:
            self.init(.notFound, error.message)
        case .documentExists, .layerExists, .recordExists, .recordDeleted:
            self.init(.conflict, error.message)
        case .pushOutOfRange:
            self.init(.badRequest, error.message)
        default:
            self.init(.internalServerError, "The storage failed: \(error.message)")
        }
    }
}
