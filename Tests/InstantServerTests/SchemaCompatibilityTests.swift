import Foundation
import InstantJSON
import InstantTesting
import Testing

@testable import InstantServer

/// The operations we serve, checked by schemathesis against the existing commercial server's
/// OpenAPI document (`../shared/reference/document-engine-api.yml`): status codes and response
/// bodies as it documents them. Every difference it finds must be listed, with its reason, in
/// docs/API-COMPATIBILITY.md.
@Suite(
    "Schema compatibility with the existing server", .serialized, .enabled(if: try SchemaCheck.isAvailable()),
    .timeLimit(.minutes(20)))
struct SchemaCompatibilityTests {
    @Test func servedOperationsAnswerAsTheReferenceSchemaSaysOrTheDifferenceIsDocumented() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let storage = try InstantStorage.sqlite(directory: directory.url)
        try await SchemaCheck.seed(storage)
        // Generated documents "from a URL" must not make the server reach out of this machine.
        let server = try await InstantTestServer.start(
            storage: storage, importer: InstantPDFImporter(),
            documentDownload: DocumentDownloadConfiguration(timeout: .seconds(2), allowedHosts: ["127.0.0.1"]))
        let (status, output) = try await ChildProcess.run(
            "python3",
            [
                SchemaCheck.package.appendingPathComponent("Tests/Compatibility/schemathesis_run.py").path,
                SchemaCheck.reference.path, SchemaCheck.package.appendingPathComponent("docs/openapi.yaml").path,
                server.baseURL.absoluteString, server.apiAuthToken, directory.url.path, "600",
            ])
        await server.stop()
        try #require(status == 0, "schemathesis did not run: \(output.suffix(2000))")
        let result = try JSONValue.parse(Data(output.utf8))
        #expect((result["selected"]?.integerValue ?? 0) >= 82, "operations tested: \(result["selected"] ?? .null)")
        let observed = Set(
            (result["failures"]?.arrayValue ?? []).compactMap { failure -> String? in
                guard let check = failure["check"]?.stringValue, let operation = failure["operation"]?.stringValue
                else { return nil }
                return "\(check) \(operation)"
            })
        let documented = try SchemaCheck.documentedDifferences()
        let undocumented = observed.subtracting(documented).sorted()
        #expect(
            undocumented.isEmpty,
            """
            schemathesis found differences that docs/API-COMPATIBILITY.md does not list: fix them or \
            add them with their reason.
            \(undocumented.joined(separator: "\n"))
            \(result["output"]?.stringValue?.suffix(20000) ?? "")
            """)
    }
}

/// Where the reference schema and schemathesis are, and the documented differences.
enum SchemaCheck {
    /// The repository's root.
    static let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// `OPENINSTANT_REFERENCE_API`, or `reference/document-engine-api.yml` in `shared` beside the
    /// repository.
    static let reference: URL = {
        if let configured = ProcessInfo.processInfo.environment["OPENINSTANT_REFERENCE_API"], !configured.isEmpty {
            return URL(fileURLWithPath: configured)
        }
        return package.deletingLastPathComponent().appendingPathComponent("shared/reference/document-engine-api.yml")
            .standardizedFileURL
    }()

    /// Whether `OPENINSTANT_REQUIRE_SCHEMATHESIS` asks for the check (`.ci/run` sets it).
    static let isRequired: Bool = {
        let value = ProcessInfo.processInfo.environment["OPENINSTANT_REQUIRE_SCHEMATHESIS"] ?? ""
        return !value.isEmpty && value != "0"
    }()

    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    /// Whether the check can run: the reference schema is there and schemathesis is installed.
    /// Without them the suite is skipped, or fails when the check is required.
    static func isAvailable() throws -> Bool {
        var missing: [String] = []
        if !FileManager.default.fileExists(atPath: reference.path) {
            missing.append("the reference schema \(reference.path) (put ../shared beside the clone)")
        }
        let probe = try? ChildProcess.runBlocking("python3", ["-c", "import schemathesis, yaml"])
        if probe?.status != 0 { missing.append("schemathesis (python3 -m pip install schemathesis)") }
        guard missing.isEmpty else {
            if isRequired {
                throw Missing(
                    description:
                        "OPENINSTANT_REQUIRE_SCHEMATHESIS is set but \(missing.joined(separator: " and ")) is missing.")
            }
            return false
        }
        return true
    }

    /// The records the checked operations' path parameters name: document `doc` (a PDF with
    /// annotations), annotation `a1`, bookmark `b1`, form field `f1` with its widget `w1`, layer `review`.
    static func seed(_ storage: InstantStorage) async throws {
        let pdf = TestPDF.annotated()
        let imported = try InstantPDFImporter().importDocument(pdf, password: nil, limits: .default)
        try await storage.createDocument(
            StoredDocument(
                id: "doc", title: "Reference check", sourcePDFSHA256: Attachment.key(for: pdf), byteSize: pdf.count,
                pages: imported.pages, pdfID: imported.pdfID, isPasswordProtected: false, createdAt: Date()),
            pdf: pdf, baseRecords: imported.baseRecords,
            initialChanges: [
                .put(
                    RecordWrite(
                        id: "a1", kind: .annotation,
                        content: Data(
                            #"{"v":2,"id":"a1","type":"pspdfkit/note","pageIndex":0,"bbox":[10,10,20,20],"text":{"format":"plain","value":"seed"},"icon":"comment","createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"}"#
                                .utf8))),
                .put(
                    RecordWrite(
                        id: "w1", kind: .annotation,
                        content: Data(
                            #"{"v":2,"id":"w1","type":"pspdfkit/widget","pageIndex":0,"bbox":[10,40,100,20],"formFieldName":"Name","opacity":1,"createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"}"#
                                .utf8))),
                .put(
                    RecordWrite(
                        id: "f1", kind: .formField,
                        content: Data(
                            #"{"v":1,"type":"pspdfkit/form-field/text","name":"Name","label":"Name","annotationIds":["w1"],"doNotSpellCheck":false,"doNotScroll":false,"multiLine":false,"comb":false,"defaultValue":""}"#
                                .utf8))),
                .put(
                    RecordWrite(
                        id: "b1", kind: .bookmark,
                        content: Data(
                            #"{"v":1,"id":"b1","type":"pspdfkit/bookmark","action":{"type":"goTo","pageIndex":0}}"#.utf8
                        ))),
            ])
        try await storage.createLayer(documentID: "doc", name: "review", source: .layer(""))
    }

    /// The `check operation` pairs of the table of docs/API-COMPATIBILITY.md: rows such as
    /// ``| ST103 | `POST /api/documents` | reason |``.
    static func documentedDifferences() throws -> Set<String> {
        let text = try String(
            contentsOf: package.appendingPathComponent("docs/API-COMPATIBILITY.md"), encoding: .utf8)
        var pairs = Set<String>()
        for line in text.split(separator: "\n") where line.hasPrefix("| ST") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 3 else { continue }
            pairs.insert("\(cells[0]) \(cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`")))")
        }
        return pairs
    }
}
