import Foundation
import Testing

/// The real-world corpus: 400 PDFs from the test suites of PDFium, pypdf and others, with qpdf's
/// independent reading of each in `MANIFEST.jsonl`. It is not part of the repository: it is looked
/// for in `../shared/pdf-corpus` beside the clone, or where `OPENINSTANT_PDF_CORPUS` says.
///
/// Tests whose point is the corpus carry the `.corpus` trait. Without the corpus they are skipped
/// with ``absence``, which names the directory looked at; they fail with ``Missing``, which names it
/// too, when `OPENINSTANT_REQUIRE_CORPUS=1` (as `.ci/run` sets) or when `OPENINSTANT_PDF_CORPUS`
/// names a directory without the corpus.
enum Corpus {
    /// One line of `MANIFEST.jsonl`: a file and what qpdf made of it.
    struct Entry: Decodable, Sendable, CustomTestStringConvertible {
        var path: String
        var open: String
        var encrypted: Bool?
        var pages: Int?
        var annots: Int?
        var subtypes: [String: Int]?
        var reconstructed: Bool?
        var testDescription: String { path }
    }

    /// The environment variable that names the corpus directory (absolute, or relative to the
    /// directory the tests run in).
    static let locationVariable = "OPENINSTANT_PDF_CORPUS"
    /// The environment variable that, set to anything but empty or `0`, makes a missing corpus a
    /// failure of the corpus tests instead of a reason to skip them.
    static let requirementVariable = "OPENINSTANT_REQUIRE_CORPUS"

    /// The value of `OPENINSTANT_PDF_CORPUS`, if it is set and not empty.
    private static let configuredLocation = ProcessInfo.processInfo.environment[locationVariable].flatMap {
        $0.isEmpty ? nil : $0
    }

    /// The directory looked at: `OPENINSTANT_PDF_CORPUS`, or `pdf-corpus` in the `shared`
    /// directory beside the package's own.
    static let directory: URL = {
        if let configuredLocation { return URL(fileURLWithPath: configuredLocation).standardizedFileURL }
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return package.deletingLastPathComponent().appendingPathComponent("shared/pdf-corpus").standardizedFileURL
    }()

    /// The manifest, whose presence says that the corpus is there.
    static var manifest: URL { directory.appendingPathComponent("MANIFEST.jsonl") }

    /// Whether `OPENINSTANT_REQUIRE_CORPUS` is set to something other than empty or `0`.
    private static let isRequested: Bool = {
        let requirement = ProcessInfo.processInfo.environment[requirementVariable] ?? ""
        return !requirement.isEmpty && requirement != "0"
    }()

    /// Whether a missing corpus fails the corpus tests: asked for by `OPENINSTANT_REQUIRE_CORPUS`,
    /// or implied by an `OPENINSTANT_PDF_CORPUS` that names a directory (a mistyped path must not
    /// turn into skipped tests).
    static var isRequired: Bool { isRequested || configuredLocation != nil }

    /// Where the corpus was looked for and how to provide it.
    static let whereToPutIt =
        "the real-world PDF corpus is not at \(directory.path) (no MANIFEST.jsonl there); "
        + "put it there (../shared/pdf-corpus beside the clone) or set \(locationVariable) to its directory"

    /// Why a corpus test is skipped: the directory looked at, how to provide the corpus and how to
    /// make its absence a failure.
    static let absence =
        "\(whereToPutIt). Without it the corpus tests are skipped; "
        + "\(requirementVariable)=1 (set by .ci/run) makes them fail instead."

    /// A required corpus that is missing, reported as the failure of each corpus test.
    struct Missing: Error, CustomStringConvertible {
        var description: String {
            let cause = isRequested ? "\(requirementVariable) is set" : "\(locationVariable) names the directory"
            return "the corpus is required (\(cause)), but \(Corpus.whereToPutIt)"
        }
    }

    /// Whether the corpus tests run: `true` when the corpus is there, `false` (skip them) when it
    /// is not.
    /// - Throws: ``Missing`` when it is not there and ``isRequired``.
    static func isAvailable() throws -> Bool {
        if FileManager.default.fileExists(atPath: manifest.path) { return true }
        if isRequired { throw Missing() }
        return false
    }

    /// The files of the manifest; empty without the corpus.
    static let entries: [Entry] = {
        guard let text = try? String(contentsOf: manifest, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONDecoder().decode(Entry.self, from: Data($0.utf8)) }
    }()

    /// The bytes of a corpus file.
    static func data(_ entry: Entry) throws -> Data {
        try data(path: entry.path)
    }

    /// The bytes of the corpus file at `path`, relative to the corpus directory.
    static func data(path: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(path))
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs a test (or every test of a suite) whose point is the real-world corpus only where the
    /// corpus is: skipped with ``Corpus/absence`` without it, failed with ``Corpus/Missing`` when it
    /// is required.
    static var corpus: Self {
        .enabled(if: try Corpus.isAvailable(), Comment(rawValue: Corpus.absence))
    }
}
