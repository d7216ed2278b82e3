import Crypto
import Foundation
import Hummingbird

/// Requires `Authorization: Token token="<API_AUTH_TOKEN>"` on the user's backend routes.
struct APITokenMiddleware: RouterMiddleware {
    typealias Context = InstantRequestContext
    let token: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        guard let header = request.headers[.authorization] else {
            throw APIError.unauthorized(
                "This route needs the API token: send 'Authorization: Token token=\"<API_AUTH_TOKEN>\"'."
            )
        }
        guard let presented = AuthorizationHeader.token(from: header),
            Self.constantTimeEqual(presented, token)
        else {
            throw APIError.unauthorized("The API token is wrong. Use the API_AUTH_TOKEN the server was started with.")
        }
        return try await next(request, context)
    }

    /// Compares the SHA-256 of both strings so that timing does not reveal the token.
    static func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
        let left = SHA256.hash(data: Data(lhs.utf8))
        let right = SHA256.hash(data: Data(rhs.utf8))
        return zip(left, right).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

/// Parsing of `Authorization` headers.
enum AuthorizationHeader {
    /// The token of `Token token="..."` (quotes optional) or `Bearer ...`.
    static func token(from header: String) -> String? {
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        if trimmed.lowercased().hasPrefix("bearer ") {
            let value = trimmed.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces)
            return value.isEmpty ? nil : value
        }
        guard trimmed.lowercased().hasPrefix("token ") else { return nil }
        let parameter = trimmed.dropFirst("token ".count).trimmingCharacters(in: .whitespaces)
        guard parameter.lowercased().hasPrefix("token=") else { return nil }
        var value = parameter.dropFirst("token=".count)
        if value.hasPrefix("\"") {
            guard value.count >= 2, value.hasSuffix("\"") else { return nil }
            value = value.dropFirst().dropLast()
        }
        return value.isEmpty ? nil : String(value)
    }
}
