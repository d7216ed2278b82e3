import ArgumentParser
import Foundation
import InstantJSON
import InstantPDF

/// `instant convert FILE --pdf PDF`: Instant JSON to XFDF or XFDF to Instant JSON, offline.
struct ConvertCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "convert",
        abstract: "Convert Instant JSON to XFDF, or XFDF to Instant JSON, without a server.",
        discussion: """
            The direction follows the input: a file whose first character is '<' is XFDF and becomes \
            Instant JSON; anything else is read as Instant JSON and becomes XFDF. XFDF gives coordinates \
            in the PDF's own page space, so the PDF the records belong to is needed (--pdf). Elements \
            XFDF cannot carry, or Instant JSON cannot hold, are listed on standard error.
            """
    )

    @Argument(help: "The Instant JSON or XFDF file.")
    var file: String

    @Option(help: "The PDF the records belong to.")
    var pdf: String

    @Option(help: "The password of an encrypted PDF.")
    var password: String?

    @Option(name: .shortAndLong, help: "The output file; standard output when omitted.")
    var output: String?

    @OptionGroup var limits: PDFLimitOptions

    func run() throws {
        let input: Data
        do {
            input = try Data(contentsOf: URL(fileURLWithPath: file))
        } catch {
            throw ValidationError("Cannot read \(file): \(error.localizedDescription)")
        }
        let document: PDFDocument
        do {
            document = try PDFDocument(
                contentsOf: URL(fileURLWithPath: pdf), password: password, limits: try limits.limits())
        } catch let error as PDFError {
            throw ValidationError("Cannot open \(pdf): \(PDFLimitOptions.describe(error))")
        } catch {
            throw ValidationError("Cannot read \(pdf): \(error.localizedDescription)")
        }
        if XFDFImport.isXML(input) {
            let read: XFDFImport
            do {
                read = try document.xfdfRecords(input)
            } catch {
                throw ValidationError("\(file) is not valid XFDF: \(error)")
            }
            for line in read.skipped { FileHandle.standardError.write(Data("\(file): \(line)\n".utf8)) }
            try writeOutput(read.records.serialized(), to: output)
            return
        }
        let records: InstantDocumentJSON
        do {
            records = try InstantDocumentJSON.decode(input).document
        } catch {
            throw ValidationError("\(file) is neither XFDF nor valid Instant JSON: \(error)")
        }
        let onMissingPages = records.annotations.filter { $0.pageIndex >= document.pageCount }.count
        if onMissingPages > 0 {
            FileHandle.standardError.write(
                Data("\(file): \(onMissingPages) annotations on pages \(pdf) does not have are left out\n".utf8))
        }
        if !records.bookmarks.isEmpty {
            FileHandle.standardError.write(Data("\(file): bookmarks are left out: XFDF has no place for them\n".utf8))
        }
        let name = URL(fileURLWithPath: pdf).lastPathComponent
        try writeOutput(document.xfdf(records, fileName: name), to: output, endOfLine: false)
    }
}
