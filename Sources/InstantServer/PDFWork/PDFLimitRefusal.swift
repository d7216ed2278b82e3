import InstantPDF

/// What a client is told when a PDF operation goes over one of the server's ``PDFLimits``: the
/// reader's reason (which limit, its value) and what raises the limit.
enum PDFLimitRefusal {
    /// The reason of the 422 answer to a ``PDFError`` with code ``PDFError/Code/limitExceeded``.
    static func reason(_ error: PDFError) -> String {
        guard let limit = error.limit else { return error.message }
        let setting = PDFProcessingConfiguration.Setting(limit)
        switch limit {
        case .decodedBytes:
            return "\(error.message). If such PDFs are expected, start the server with a larger \(setting.named)."
        case .imagePixels:
            return "\(error.message). Use a smaller image, or start the server with a larger \(setting.named)."
        }
    }
}
