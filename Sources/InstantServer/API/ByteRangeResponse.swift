import Foundation
import Hummingbird

/// Responses for immutable bytes with an entity tag and single byte ranges (RFC 9110).
enum ByteRangeResponse {
    /// Immutable bytes to answer with: their length, and how to read a part of them.
    struct Content: Sendable {
        /// The length in bytes.
        var length: Int
        /// Reads a range of the bytes (within `0..<length`).
        var read: @Sendable (Range<Int>) async throws -> Data

        /// Bytes in memory.
        init(_ data: Data) {
            length = data.count
            read = { range in data[data.startIndex + range.lowerBound..<data.startIndex + range.upperBound] }
        }

        /// Bytes read part by part from elsewhere (a blob store).
        init(length: Int, read: @escaping @Sendable (Range<Int>) async throws -> Data) {
            self.length = length
            self.read = read
        }
    }

    /// How much of the content one read takes: the body is sent as it is read, so a request costs
    /// the server this much memory however large the file.
    static let chunkSize = 256 * 1024

    /// The answer to `request` for `content`: all of it, the one range asked for, or 304 when the
    /// client has it; `disposition` is the `Content-Disposition`, if any.
    static func make(
        _ content: Content, contentType: String, disposition: String? = nil, etag: String, request: Request
    ) throws -> Response {
        var headers: HTTPFields = [
            .contentType: contentType,
            .eTag: etag,
            .acceptRanges: "bytes",
            .cacheControl: "private, max-age=0, must-revalidate",
        ]
        if let disposition { headers[.contentDisposition] = disposition }
        if let match = request.headers[.ifNoneMatch],
            match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == etag || $0 == "*" }
            )
        {
            return Response(status: .notModified, headers: headers)
        }
        let whole = 0..<content.length
        guard let rangeHeader = request.headers[.range], request.headers[.ifRange].map({ $0 == etag }) ?? true else {
            headers[.contentLength] = String(content.length)
            return Response(status: .ok, headers: headers, body: body(content, whole))
        }
        guard let range = parse(rangeHeader, length: content.length) else {
            throw APIError(
                .rangeNotSatisfiable,
                "The range '\(rangeHeader)' does not fit the \(content.length) bytes of the file; use one range like bytes=0-1023.",
                headers: [.contentRange: "bytes */\(content.length)"]
            )
        }
        headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(content.length)"
        headers[.contentLength] = String(range.count)
        return Response(status: .partialContent, headers: headers, body: body(content, range))
    }

    /// A body that reads and sends `range` of the content one chunk at a time.
    private static func body(_ content: Content, _ range: Range<Int>) -> ResponseBody {
        ResponseBody(contentLength: range.count) { writer in
            var offset = range.lowerBound
            while offset < range.upperBound {
                let end = min(offset + chunkSize, range.upperBound)
                let chunk = try await content.read(offset..<end)
                guard chunk.count == end - offset else {
                    throw APIError(.internalServerError, "The stored file is shorter than its recorded size.")
                }
                try await writer.write(ByteBuffer(bytes: chunk))
                offset = end
            }
            try await writer.finish(nil)
        }
    }

    /// The byte range of a `bytes=a-b`, `bytes=a-` or `bytes=-n` header, or `nil` if unsatisfiable
    /// or not a single range.
    static func parse(_ header: String, length: Int) -> Range<Int>? {
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes="), length > 0 else { return nil }
        let spec = trimmed.dropFirst("bytes=".count)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash].trimmingCharacters(in: .whitespaces)
        let last = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        if first.isEmpty {
            guard let suffix = Int(last), suffix > 0 else { return nil }
            return max(0, length - suffix)..<length
        }
        guard let start = Int(first), start >= 0, start < length else { return nil }
        if last.isEmpty { return start..<length }
        guard let end = Int(last), end >= start else { return nil }
        return start..<(end >= length - 1 ? length : end + 1)
    }
}
