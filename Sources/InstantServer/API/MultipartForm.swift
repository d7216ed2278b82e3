import Foundation

/// A parsed `multipart/form-data` body.
struct MultipartForm {
    /// One part of the form.
    struct Part {
        var name: String
        var filename: String?
        var contentType: String?
        var data: Data
    }

    var parts: [Part]

    func part(named name: String) -> Part? { parts.first { $0.name == name } }

    func text(named name: String) -> String? {
        part(named: name).map { String(decoding: $0.data, as: UTF8.self) }
    }

    /// The longest boundary RFC 2046 allows.
    static let maximumBoundaryLength = 70

    /// The boundary parameter of a `multipart/form-data` content type (possibly empty or invalid:
    /// ``parse(_:boundary:)`` checks it), or `nil` for other types.
    static func boundary(contentType: String) -> String? {
        let pieces = contentType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard pieces.first?.lowercased() == "multipart/form-data" else { return nil }
        for piece in pieces.dropFirst() where piece.lowercased().hasPrefix("boundary=") {
            var value = String(piece.dropFirst("boundary=".count))
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 {
                value = String(value.dropFirst().dropLast())
            }
            return value
        }
        return ""
    }

    /// Parses a body with the given boundary.
    /// - Throws: ``APIError`` (400) for a boundary that is empty, longer than 70 characters or not
    ///   made of the characters RFC 2046 allows, and for a body that does not follow it.
    static func parse(_ body: Data, boundary: String) throws(APIError) -> MultipartForm {
        try validate(boundary: boundary)
        let bytes = [UInt8](body)
        let delimiter = Array("--\(boundary)".utf8)
        guard var position = find(delimiter, in: bytes, from: 0) else {
            throw .badRequest("The multipart body does not contain its boundary '\(boundary)'.")
        }
        var parts: [Part] = []
        while true {
            position += delimiter.count
            // "--" after a delimiter closes the body.
            if position + 1 < bytes.count, bytes[position] == 0x2D, bytes[position + 1] == 0x2D { break }
            guard let headerStart = skipLineBreak(bytes, position),
                let headerEnd = find(Array("\r\n\r\n".utf8), in: bytes, from: headerStart)
            else { throw .badRequest("A part of the multipart body has no header section.") }
            let headers = String(decoding: bytes[headerStart..<headerEnd], as: UTF8.self)
            let contentStart = headerEnd + 4
            guard let next = find(Array("\r\n".utf8) + delimiter, in: bytes, from: contentStart) else {
                throw .badRequest("The multipart body ends before its closing boundary.")
            }
            parts.append(try part(headers: headers, data: Data(bytes[contentStart..<next])))
            position = next + 2
        }
        return MultipartForm(parts: parts)
    }

    /// Checks a boundary against RFC 2046: 1 to 70 characters of `bcharsnospace` and spaces, not
    /// ending in a space. (The search for it is then linear in the body.)
    private static func validate(boundary: String) throws(APIError) {
        let allowed = Set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=? ")
        guard !boundary.isEmpty, boundary.count <= maximumBoundaryLength, boundary.allSatisfy(allowed.contains),
            boundary.last != " "
        else {
            throw .badRequest(
                "The multipart boundary '\(boundary.prefix(80))' is not valid: RFC 2046 allows 1 to "
                    + "\(maximumBoundaryLength) letters, digits and '()+_,-./:=? characters; let your HTTP library "
                    + "choose one."
            )
        }
    }

    private static func part(headers: String, data: Data) throws(APIError) -> Part {
        var name: String?
        var filename: String?
        var contentType: String?
        for line in headers.split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let field = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if field == "content-type" {
                contentType = value
            } else if field == "content-disposition" {
                for parameter in value.split(separator: ";").dropFirst() {
                    let pair = parameter.split(separator: "=", maxSplits: 1).map {
                        $0.trimmingCharacters(in: .whitespaces)
                    }
                    guard pair.count == 2 else { continue }
                    var text = pair[1]
                    if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2 {
                        text = String(text.dropFirst().dropLast())
                    }
                    if pair[0].lowercased() == "name" { name = text }
                    if pair[0].lowercased() == "filename" { filename = text }
                }
            }
        }
        guard let name else { throw .badRequest("A part of the multipart body has no name.") }
        return Part(name: name, filename: filename, contentType: contentType, data: data)
    }

    private static func skipLineBreak(_ bytes: [UInt8], _ position: Int) -> Int? {
        if position + 1 < bytes.count, bytes[position] == 0x0D, bytes[position + 1] == 0x0A { return position + 2 }
        return nil
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count, start <= haystack.count - needle.count else {
            return nil
        }
        let first = needle[0]
        var index = start
        let last = haystack.count - needle.count
        while index <= last {
            if haystack[index] == first {
                var matches = true
                for offset in 1..<needle.count where haystack[index + offset] != needle[offset] {
                    matches = false
                    break
                }
                if matches { return index }
            }
            index += 1
        }
        return nil
    }
}
