import Foundation
import InstantServer

/// The importer `instant serve` reads uploads with.
func makeDocumentImporter() -> any DocumentImporter {
    InstantPDFImporter()
}
