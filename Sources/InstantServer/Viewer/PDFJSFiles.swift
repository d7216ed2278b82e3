import Foundation
import Hummingbird

/// Serves a pdf.js distribution (Debian's `libjs-pdf` by default) from its directory under
/// `/viewer/pdfjs/`: only files below it with known extensions, named by plain path segments.
struct PDFJSFiles: Sendable {
    /// The distribution's directory.
    let directory: String
    private let fileIO = FileIO()

    init(directory: String) {
        self.directory = directory
    }

    /// The content type of each extension a pdf.js distribution needs: its scripts and styles, the
    /// images of its styles, its character maps and standard fonts, and its source maps.
    static let contentTypes = [
        "js": "text/javascript; charset=utf-8",
        "css": "text/css; charset=utf-8",
        "map": "application/json",
        "bcmap": "application/octet-stream",
        "pfb": "application/octet-stream",
        "ttf": "font/ttf",
        "svg": "image/svg+xml",
        "png": "image/png",
        "gif": "image/gif",
    ]

    /// Why pdf.js cannot be served, for the viewer to show.
    var missingReason: String {
        "pdf.js was not found on the server (expected build/pdf.js in the pdf.js directory). Install Debian's "
            + "libjs-pdf package (apt-get install libjs-pdf), or start instant serve with --pdfjs-dir (PDFJS_DIR) "
            + "pointing to a pdf.js 2.x distribution."
    }

    /// The relative path of a request, or `nil` unless every segment is a plain name (letters,
    /// digits, `_`, `-`, `.`; not starting with a dot) and the last has a known extension.
    static func relativePath(_ segments: [Substring]) -> (path: String, contentType: String)? {
        guard (1...4).contains(segments.count) else { return nil }
        for segment in segments {
            guard let first = segment.first, first != ".", segment.utf8.count <= 128,
                segment.unicodeScalars.allSatisfy({ scalar in
                    scalar.isASCII
                        && (CharacterSet.alphanumerics.contains(scalar) || scalar == "_" || scalar == "-"
                            || scalar == ".")
                })
            else { return nil }
        }
        guard let name = segments.last, let dot = name.lastIndex(of: "."),
            let type = contentTypes[String(name[name.index(after: dot)...])]
        else { return nil }
        return (segments.joined(separator: "/"), type)
    }

    /// The file, with a validator from its size and modification time (`304` when the browser has it).
    func response(path segments: [Substring], request: Request, context: some RequestContext) async throws -> Response {
        guard FileManager.default.fileExists(atPath: directory + "/build/pdf.js") else {
            throw APIError.notFound(missingReason)
        }
        guard let (path, contentType) = Self.relativePath(segments) else {
            throw APIError.notFound("pdf.js has no file of that name.")
        }
        let url = URL(fileURLWithPath: directory).appendingPathComponent(path).resolvingSymlinksInPath()
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue,
            let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
            let size = (attributes[.size] as? NSNumber)?.intValue,
            let modified = attributes[.modificationDate] as? Date
        else { throw APIError.notFound("pdf.js has no file '\(path)'.") }
        let etag = "\"\(size)-\(Int64(modified.timeIntervalSince1970 * 1000))\""
        var headers: HTTPFields = [.eTag: etag, .cacheControl: "no-cache"]
        if let match = request.headers[.ifNoneMatch],
            match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == etag })
        {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = contentType
        return Response(
            status: .ok, headers: headers, body: try await fileIO.loadFile(path: url.path, context: context))
    }
}
