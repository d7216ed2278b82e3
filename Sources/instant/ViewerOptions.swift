import ArgumentParser
import Foundation
import InstantServer

/// The web viewer's options of `instant serve`.
struct ViewerOptions: ParsableArguments {
    @Option(
        name: .customLong("pdfjs-dir"),
        help: """
            The directory of the pdf.js 2.x distribution the web viewer uses (build/pdf.js, build/pdf.worker.js), \
            served at /viewer/pdfjs/ (default \(ViewerConfiguration.debianPDFJSDirectory), where Debian's \
            libjs-pdf installs it). Env: PDFJS_DIR.
            """)
    var pdfjsDirectory: String?

    /// The viewer's configuration from the options, else from the environment, else the defaults.
    /// - Parameter development: The development start page, when the server runs with its
    ///   generated development credentials.
    func configuration(environment: [String: String], development: DevelopmentViewer?) -> ViewerConfiguration {
        ViewerConfiguration(
            pdfjsDirectory: pdfjsDirectory ?? environment["PDFJS_DIR"] ?? ViewerConfiguration.debianPDFJSDirectory,
            development: development)
    }
}
