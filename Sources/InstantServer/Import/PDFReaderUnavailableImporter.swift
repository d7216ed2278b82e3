import Foundation

/// The importer of a build whose PDF reader is not wired in yet: it refuses every upload with a
/// reason instead of storing a document it cannot describe.
public struct PDFReaderUnavailableImporter: DocumentImporter {
    /// Creates the importer.
    public init() {}

    public func importDocument(_ pdf: Data, password: String?) async throws -> ImportedDocument {
        throw DocumentImportError(
            .malformed,
            "this server build has no PDF reader wired in, so it cannot read uploads yet"
        )
    }
}
