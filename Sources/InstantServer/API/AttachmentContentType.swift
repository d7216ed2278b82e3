import Hummingbird
import InstantJSON

/// The content type of an attachment: checked when it is uploaded, and turned into the headers it
/// is served with so that a browser never runs an attachment as a page of the server's origin.
///
/// Uploaders say what their bytes are, and nothing checks that they are right. So only image types
/// that browsers display without running anything are served `inline`; every other attachment is
/// served with `Content-Disposition: attachment`, which makes browsers download it instead of
/// showing it. The declared type is kept in `Content-Type` because clients (the SDK) learn an
/// attachment's type from it; it cannot do harm there: it was checked on upload to be a plain
/// `type/subtype`, every answer carries `X-Content-Type-Options: nosniff` and the
/// `Content-Security-Policy` of ``ResponseSecurityHeadersMiddleware`` (no scripts, a sandbox of
/// its own origin), so even a browser that shows the file anyway runs nothing in the server's
/// origin.
enum AttachmentContentType {
    /// The types served inline: raster images browsers show without running anything. SVG is
    /// not among them: it is a document that can run scripts.
    static let inlineTypes: Set<String> = ["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif"]

    /// The type an upload declares in its `Content-Type` (`application/octet-stream` when it
    /// declares none), with the `type/subtype` lowercased.
    /// - Throws: ``APIError`` 400 when the header is not a plain media type.
    static func declared(by request: Request) throws -> String {
        guard let header = request.headers[.contentType] else { return "application/octet-stream" }
        return try accepted(header)
    }

    /// `contentType` trimmed and with its `type/subtype` lowercased, if it is a plain media type
    /// (see `Attachment.validateContentType(_:)`).
    /// - Throws: ``APIError`` 400 with the reason otherwise.
    static func accepted(_ contentType: String) throws -> String {
        if let problem = Attachment.validateContentType(contentType) {
            throw APIError.badRequest(
                "The attachment's Content-Type is not usable: \(problem). Send its media type, such as image/png, "
                    + "or application/octet-stream when it is unknown."
            )
        }
        return normalized(contentType)
    }

    /// A valid content type trimmed and with its `type/subtype` lowercased (media type names are
    /// case-insensitive), as it is stored.
    static func normalized(_ contentType: String) -> String {
        let trimmed = contentType.trimmingCharacters(in: .whitespaces)
        let essenceEnd = trimmed.firstIndex(of: ";") ?? trimmed.endIndex
        return trimmed[..<essenceEnd].trimmingCharacters(in: .whitespaces).lowercased() + trimmed[essenceEnd...]
    }

    /// The `Content-Type` and `Content-Disposition` an attachment is served with.
    /// - Parameters:
    ///   - stored: The content type stored with the attachment.
    ///   - id: The attachment's id, its file name when downloaded.
    static func served(stored: String, id: String) -> (contentType: String, disposition: String) {
        let download = "attachment; filename=\"\(id)\""
        // Attachments stored before types were checked are served as opaque bytes.
        guard let contentType = try? accepted(stored) else { return ("application/octet-stream", download) }
        let essence = contentType.prefix { $0 != ";" }.trimmingCharacters(in: .whitespaces)
        return (contentType, inlineTypes.contains(essence) ? "inline" : download)
    }
}
