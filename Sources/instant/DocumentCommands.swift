import ArgumentParser
import Foundation
import InstantJSON

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

/// `instant export ID`: downloads a layer's records as Instant JSON.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export a document layer's records as an Instant JSONValue file."
    )

    @Argument(help: "The document id.")
    var document: String

    @Option(help: "The layer; the default layer when omitted.")
    var layer: String?

    @Option(name: .shortAndLong, help: "The output file; standard output when omitted.")
    var output: String?

    @OptionGroup var remote: RemoteServerOptions

    func run() async throws {
        let answer = try await remote.send("GET", "api/documents/\(document)\(layerPath(layer))/document.json")
        try writeOutput(answer, to: output)
    }
}

/// `instant import ID FILE`: applies an Instant JSON file to a layer.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Apply an Instant JSONValue file to a document layer (strict unless --lenient)."
    )

    @Argument(help: "The document id.")
    var document: String

    @Argument(help: "The Instant JSON file.")
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
