import ArgumentParser
import Foundation
import InstantJSON
import InstantPDF

/// `instant upload FILE`: uploads a PDF to a running server.
struct UploadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upload",
        abstract: "Upload a PDF to a running server and print the new document."
    )

    @Argument(help: "The PDF file.")
    var file: String

    @Option(help: "The document id; the server picks one when omitted.")
    var id: String?

    @Option(help: "The title; the PDF's own title or the file name when omitted.")
    var title: String?

    @OptionGroup var remote: RemoteServerOptions

    func run() async throws {
        let url = URL(fileURLWithPath: file)
        let pdf: Data
        do {
            pdf = try Data(contentsOf: url)
        } catch {
            throw ValidationError("Cannot read \(file): \(error.localizedDescription)")
        }
        let boundary = "instant-\(UUID().uuidString)"
        var body = Data()
        func field(_ name: String, _ value: Data, filename: String? = nil, type: String? = nil) {
            var header = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\""
            if let filename { header += "; filename=\"\(filename)\"" }
            header += "\r\n"
            if let type { header += "Content-Type: \(type)\r\n" }
            body.append(Data((header + "\r\n").utf8))
            body.append(value)
            body.append(Data("\r\n".utf8))
        }
        field("file", pdf, filename: url.lastPathComponent, type: "application/pdf")
        if let id { field("document_id", Data(id.utf8)) }
        field("title", Data((title ?? url.deletingPathExtension().lastPathComponent).utf8))
        body.append(Data("--\(boundary)--\r\n".utf8))
        let answer = try await remote.send(
            "POST",
            "api/documents",
            contentType: "multipart/form-data; boundary=\(boundary)",
            body: body,
            progress: ProgressBar(title: "Uploading \(url.lastPathComponent)")
        )
        try writeOutput(answer, to: nil)
    }
}

/// `instant export`: a layer's records as Instant JSON, or the PDF with them written in, from a
/// running server or offline from a PDF and an Instant JSON file.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract:
            "Export a document layer as Instant JSON, as XFDF (--xfdf), or as a PDF with its annotations (--pdf).",
        discussion: """
            From a running server: `instant export ID [--layer NAME] [--pdf | --xfdf] -o FILE`.
            Offline, without a server: `instant export --pdf --from-pdf IN.pdf [--instant-json IN.json] -o OUT.pdf`
            writes the Instant JSON's records into the PDF as an incremental update. To turn Instant JSON
            into XFDF (or back) without a server, use `instant convert`.
            """
    )

    @Argument(help: "The document id on the server (not with --from-pdf).")
    var document: String?

    @Option(help: "The layer; the default layer when omitted.")
    var layer: String?

    @Option(name: .shortAndLong, help: "The output file; standard output when omitted.")
    var output: String?

    @Flag(help: "Export the PDF with the records written in, instead of Instant JSON.")
    var pdf = false

    @Flag(help: "Export XFDF (annotations, comments and form field values) instead of Instant JSON.")
    var xfdf = false

    @Option(name: .customLong("from-pdf"), help: "Offline: the PDF to write into (needs --pdf).")
    var sourcePDF: String?

    @Option(name: .customLong("instant-json"), help: "Offline: the Instant JSON to apply to the PDF's own records.")
    var instantJSON: String?

    @Option(help: "Offline: the password of an encrypted PDF.")
    var password: String?

    @Flag(help: "Draw the annotations into the pages and remove them.")
    var flatten = false

    @Flag(inversion: .prefixedNo, help: "Write the annotations.")
    var annotations = true

    @Flag(inversion: .prefixedNo, help: "Write comments as replies to their annotation.")
    var comments = true

    @OptionGroup var remote: RemoteServerOptions

    @OptionGroup var limits: PDFLimitOptions

    func validate() throws {
        if pdf, xfdf { throw ValidationError("Choose one of --pdf and --xfdf.") }
        if xfdf, sourcePDF != nil {
            throw ValidationError("--xfdf exports from a server; offline, use `instant convert FILE --pdf PDF`.")
        }
        if sourcePDF == nil, document == nil {
            throw ValidationError("Give a document id, or --from-pdf FILE to export offline.")
        }
        if sourcePDF != nil {
            guard document == nil else { throw ValidationError("Give either a document id or --from-pdf, not both.") }
            guard pdf else { throw ValidationError("--from-pdf writes a PDF: add --pdf.") }
        } else if instantJSON != nil || password != nil || limits.maxDecodedBytes != nil
            || limits.maxImagePixels != nil
        {
            throw ValidationError(
                "--instant-json, --password and the PDF limits are for offline exports with --from-pdf.")
        }
        if !pdf, flatten || !annotations || !comments {
            throw ValidationError("--flatten, --no-annotations and --no-comments apply to PDF exports: add --pdf.")
        }
    }

    func run() async throws {
        if let sourcePDF {
            try writeOutput(try offlinePDF(sourcePDF), to: output, endOfLine: false)
            return
        }
        let base = "api/documents/\(document ?? "")\(layerPath(layer))"
        if xfdf {
            try writeOutput(try await remote.send("GET", "\(base)/document.xfdf"), to: output, endOfLine: false)
            return
        }
        guard pdf else {
            try writeOutput(try await remote.send("GET", "\(base)/document.json"), to: output)
            return
        }
        let query = "flatten=\(flatten)&annotations=\(annotations)&comments=\(comments)"
        try writeOutput(try await remote.send("GET", "\(base)/pdf?\(query)"), to: output, endOfLine: false)
    }

    private func offlinePDF(_ path: String) throws -> Data {
        let source: PDFDocument
        let limits = try limits.limits()
        do {
            source = try PDFDocument(contentsOf: URL(fileURLWithPath: path), password: password, limits: limits)
        } catch let error as PDFError {
            throw ValidationError("Cannot open \(path): \(PDFLimitOptions.describe(error))")
        } catch {
            throw ValidationError("Cannot read \(path): \(error.localizedDescription)")
        }
        var changes = InstantDocumentJSON()
        if let instantJSON {
            do {
                let data = try Data(contentsOf: URL(fileURLWithPath: instantJSON))
                changes = try InstantDocumentJSON.decode(data).document
            } catch let error as InstantJSONError {
                throw ValidationError("\(instantJSON) is not valid Instant JSON: \(error)")
            } catch {
                throw ValidationError("Cannot read \(instantJSON): \(error.localizedDescription)")
            }
        }
        do {
            return try source.applying(
                changes,
                options: PDFExportOptions(flatten: flatten, includeAnnotations: annotations, includeComments: comments))
        } catch {
            throw ValidationError("Cannot write the PDF: \(PDFLimitOptions.describe(error))")
        }
    }
}

/// `instant import ID FILE`: applies an Instant JSON or XFDF file to a layer.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Apply an Instant JSON or XFDF file to a document layer (strict unless --lenient).",
        discussion: """
            A file whose first character is '<' is XFDF: its annotations replace the layer's records \
            they name (by id or name) and are added otherwise. --lenient applies to Instant JSON only.
            """
    )

    @Argument(help: "The document id.")
    var document: String

    @Argument(help: "The Instant JSON or XFDF file.")
    var file: String

    @Option(help: "The layer; the default layer when omitted.")
    var layer: String?

    @Flag(help: "Skip invalid records instead of refusing the whole file.")
    var lenient = false

    @OptionGroup var remote: RemoteServerOptions

    func run() async throws {
        let json: Data
        do {
            json = try Data(contentsOf: URL(fileURLWithPath: file))
        } catch {
            throw ValidationError("Cannot read \(file): \(error.localizedDescription)")
        }
        if XFDFImport.isXML(json) {
            guard !lenient else { throw ValidationError("--lenient applies to Instant JSON, not to XFDF.") }
            let answer = try await remote.send(
                "POST", "api/documents/\(document)\(layerPath(layer))/apply_xfdf",
                contentType: "application/vnd.adobe.xfdf", body: json)
            try writeOutput(answer, to: nil)
            return
        }
        let answer = try await remote.send(
            "POST",
            "api/documents/\(document)\(layerPath(layer))/apply_instant_json\(lenient ? "?lenient=true" : "")",
            contentType: "application/json",
            body: json
        )
        try writeOutput(answer, to: nil)
    }
}

/// The path segment of a named layer.
func layerPath(_ layer: String?) -> String {
    guard let layer, !layer.isEmpty else { return "" }
    return "/layers/\(layer)"
}
