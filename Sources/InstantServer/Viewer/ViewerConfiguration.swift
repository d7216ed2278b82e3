import Foundation

/// What the server needs to serve the web viewer (docs/VIEWER.md): where pdf.js is, and whether
/// the development start page is on.
public struct ViewerConfiguration: Sendable {
    /// Where Debian's `libjs-pdf` installs pdf.js (`build/pdf.js`, `build/pdf.worker.js`,
    /// `web/pdf_viewer.js`, …).
    public static let debianPDFJSDirectory = "/usr/share/javascript/pdf"

    /// The directory of a pdf.js 2.x distribution, served at `/viewer/pdfjs/`.
    public var pdfjsDirectory: String
    /// The development start page at `/`, or `nil` for the page that says how to embed the viewer.
    public var development: DevelopmentViewer?

    /// Creates a configuration.
    /// - Parameters:
    ///   - pdfjsDirectory: The directory of pdf.js; Debian's by default.
    ///   - development: The start page of a server running with its generated development
    ///     credentials; only for development (see ``DevelopmentViewer``).
    public init(pdfjsDirectory: String = Self.debianPDFJSDirectory, development: DevelopmentViewer? = nil) {
        self.pdfjsDirectory = pdfjsDirectory
        self.development = development
    }
}

/// The development start page: lists the documents, uploads PDFs and opens one in the viewer as any
/// user on any layer, with tokens the server mints itself with the development key.
///
/// Only for development: whoever reaches a server with this page can do what the API token allows
/// (list and upload documents) and act as any user on any document, with no credential at all.
/// `instant serve` turns it on only when it runs with the development credentials it generated
/// (the development key pair and API token), which are not for production either.
public struct DevelopmentViewer: Sendable {
    /// The key pair the server verifies client tokens with, whose private key signs the page's tokens.
    public var keyPair: DevelopmentKeyPair
    /// How long the tokens the page mints are valid.
    public var tokenLifetime: Duration

    /// Creates the development start page's settings.
    public init(keyPair: DevelopmentKeyPair, tokenLifetime: Duration = .seconds(3600)) {
        self.keyPair = keyPair
        self.tokenLifetime = tokenLifetime
    }
}
