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
    /// The token of `Token token="..."` (quotes optional) or `Bearer ...`; the scheme and the
    /// `token=` parameter name in any case, spaces and tabs around them.
    ///
    /// Every request of a client carries its token, so this reads the header's bytes once and
    /// copies only the token.
    static func token(from header: String) -> String? {
        var bytes = Substring(header).utf8[...]
        bytes.trimSpaces()
        if bytes.dropCaseInsensitivePrefix("bearer ") {
            bytes.trimSpaces()
            return bytes.isEmpty ? nil : String(Substring(bytes))
        }
        guard bytes.dropCaseInsensitivePrefix("token ") else { return nil }
        bytes.trimSpaces()
        guard bytes.dropCaseInsensitivePrefix("token=") else { return nil }
        if bytes.first == UInt8(ascii: "\"") {
            guard bytes.count >= 2, bytes.last == UInt8(ascii: "\"") else { return nil }
            bytes = bytes.dropFirst().dropLast()
        }
        return bytes.isEmpty ? nil : String(Substring(bytes))
    }
}

extension Substring.UTF8View {
    /// Drops leading and trailing spaces and tabs.
    fileprivate mutating func trimSpaces() {
        func isSpace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        while let first, isSpace(first) { removeFirst() }
        while let last, isSpace(last) { removeLast() }
    }

    /// Drops `prefix` (lowercase ASCII letters, spaces and `=`) when the view starts with it in
    /// any case.
    fileprivate mutating func dropCaseInsensitivePrefix(_ prefix: String) -> Bool {
        var rest = self
        for expected in prefix.utf8 {
            guard let byte = rest.first else { return false }
            let lowered = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
            guard lowered == expected else { return false }
            rest.removeFirst()
        }
        self = rest
        return true
    }
}
