import ArgumentParser
import Foundation
import InstantJSON
import InstantPDF

/// `instant validate FILE`: checks an Instant JSON document against the format.
struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check an Instant JSON document file against the format.",
        discussion: """
            Prints every problem with its JSONValue path (for example `annotations[3].bbox: expected 4 numbers`) \
            and exits with status 1 when there is one. With --lenient, bad records are reported and \
            skipped, and only problems of the document itself fail the check.
            """
    )

    @Argument(help: "The Instant JSON file.")
    var file: String

    @Flag(help: "Skip bad records instead of failing on the first one.")
    var lenient = false

    func run() throws {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: file))
        } catch {
            throw ValidationError("cannot read \(file): \(error.localizedDescription)")
        }
        do {
            let result = try InstantDocumentJSON.decode(data, mode: lenient ? .lenient : .strict)
            let document = result.document
            for problem in result.skipped { print("skipped \(problem)") }
            print(
                "\(file): valid Instant JSON — \(document.annotations.count) annotations, "
                    + "\(document.bookmarks.count) bookmarks, \(document.formFields.count) form fields, "
                    + "\(document.formFieldValues.count) form field values, \(document.comments.count) comments, "
                    + "\(document.attachments.count) attachments")
            if !result.skipped.isEmpty { throw ExitCode(1) }
        } catch let error as InstantJSONError {
            print("\(file): \(error)")
            throw ExitCode(1)
        }
    }
}

/// `instant inspect FILE.pdf`: what the server would import from a PDF.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Read a PDF and print its pages, identity and its own annotations as Instant JSON."
    )

    @Argument(help: "The PDF file.")
    var file: String

    @OptionGroup var limits: PDFLimitOptions

    func run() throws {
        let document: PDFDocument
        let limits = try limits.limits()
        do {
            document = try PDFDocument(contentsOf: URL(fileURLWithPath: file), limits: limits)
        } catch let error as PDFError {
            print("\(file): \(PDFLimitOptions.describe(error))")
            throw ExitCode(1)
        }
        let records = document.originalRecords()
        if let exceeded = document.exceededLimit {
            print("\(file): \(PDFLimitOptions.describe(exceeded))")
            throw ExitCode(1)
        }
        for warning in document.warnings { FileHandle.standardError.write(Data("warning: \(warning)\n".utf8)) }
        FileHandle.standardError.write(
            Data(
                ("\(file): \(document.pageCount) pages, title \(document.title ?? "(none)"), "
                    + "\(document.decodedByteCount) bytes decoded (limit \(limits.maxDecodedBytes))\n").utf8))
        FileHandle.standardOutput.write(records.serialized())
        print()
    }
}
