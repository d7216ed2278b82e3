import Foundation
import Hummingbird

/// Responses for immutable bytes with an entity tag and single byte ranges (RFC 9110).
enum ByteRangeResponse {
    /// The answer to `request` for `data`: all of it, the one range asked for, or 304 when the
    /// client has it; `disposition` is the `Content-Disposition`, if any.
    static func make(data: Data, contentType: String, disposition: String? = nil, etag: String, request: Request)
        throws -> Response
    {
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
        guard let rangeHeader = request.headers[.range] else {
            headers[.contentLength] = String(data.count)
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
        }
        if let ifRange = request.headers[.ifRange], ifRange != etag {
            headers[.contentLength] = String(data.count)
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
        }
        guard let range = parse(rangeHeader, length: data.count) else {
            throw APIError(
                .rangeNotSatisfiable,
                "The range '\(rangeHeader)' does not fit the \(data.count) bytes of the file; use one range like bytes=0-1023.",
                headers: [.contentRange: "bytes */\(data.count)"]
            )
        }
        headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(data.count)"
        headers[.contentLength] = String(range.count)
        let slice = data[data.startIndex + range.lowerBound..<data.startIndex + range.upperBound]
        return Response(status: .partialContent, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: slice)))
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
