import Foundation
import InstantJSON
import InstantPDF
import InstantTesting
import NIOWebSocket
import Testing

@testable import InstantServer

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs the real `instant serve` executable, built next to the test bundle.
@Suite("instant serve process", .serialized, .timeLimit(.minutes(10)))
struct ServeProcessTests {
    /// Runs `instant` with arguments and returns its exit status and output (standard output and error).
    static func run(_ arguments: [String]) async throws -> (Int32, String) {
        try await ChildProcess.run(try ServeProcess.executable().path, arguments, includingErrors: true)
    }

    static func post(_ url: URL, token: String, json: String) async throws -> Int {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("Token token=\"\(token)\"", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(json.utf8)
        let (_, response) = try await URLSession.shared.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    /// Stores a one-page document with the id `doc` in a data directory, as an upload would.
    static func storeDocument(in directory: URL) async throws {
        let storage = try InstantStorage.sqlite(directory: directory)
        let pdf = TestPDF.make(pageCount: 1)
        try await storage.createDocument(
            StoredDocument(
                id: "doc",
                title: nil,
                sourcePDFSHA256: Attachment.key(for: pdf),
                byteSize: pdf.count,
                pages: [PageInfo(width: 612, height: 792)],
                pdfID: nil,
                isPasswordProtected: false,
                createdAt: Date()
            ),
            pdf: pdf,
            baseRecords: []
        )
    }

    @Test func acknowledgedWritesSurviveKill9AndSIGTERMStopsGracefully() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // A document stored beforehand, as an upload would.
        try await Self.storeDocument(in: directory.url)

        let server = try await ServeProcess.start(dataDirectory: directory.url)
        let credentials = try #require(DevelopmentCredentials.load(from: directory.url))
        let annotations = server.baseURL.appendingPathComponent("api/documents/doc/annotations")
        for index in 0..<5 {
            let status = try await Self.post(
                annotations,
                token: credentials.apiAuthToken,
                json:
                    #"{"id":"a\#(index)","content":{"v":2,"type":"pspdfkit/note","pageIndex":0,"bbox":[0,0,1,1],"text":{"format":"plain","value":"x"},"icon":"comment"}}"#
            )
            #expect(status == 200)
        }
        await server.process.kill()

        let reopened = try InstantStorage.sqlite(directory: directory.url)
        let ids = try await reopened.records(documentID: "doc", layer: "", kind: .annotation).map(\.id)
        #expect(ids == ["a0", "a1", "a2", "a3", "a4"])

        // A second start reuses the credentials, and SIGTERM ends it cleanly.
        let second = try await ServeProcess.start(dataDirectory: directory.url)
        #expect(DevelopmentCredentials.load(from: directory.url)?.apiAuthToken == credentials.apiAuthToken)
        #expect(await second.stop(within: 30), "the server ended within 30 s of SIGTERM")
        #expect(second.process.exited)
        #expect(second.process.terminationStatus == 0)
    }

    /// The PostgreSQL connection options are refused, with what to do, where they cannot apply
    /// (SQLite) or cannot work (an empty pool, no time to connect): the server does not start.
    @Test func databaseConnectionOptionsAreChecked() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let common = ["serve", "--port", "0", "--data-dir", directory.url.path]
        let sqlite = ["--database", "sqlite://\(directory.url.appendingPathComponent("instant.sqlite").path)"]
        let (sqliteStatus, sqliteOutput) = try await Self.run(common + sqlite + ["--database-pool-size", "4"])
        #expect(sqliteStatus != 0)
        #expect(sqliteOutput.contains("apply to PostgreSQL"), "\(sqliteOutput)")
        let postgres = ["--database", "postgres://instant@127.0.0.1:1/instant"]
        for (option, value, says) in [
            ("--database-pool-size", "0", "at least 1"), ("--database-connect-timeout", "0", "0.1"),
        ] {
            let (status, output) = try await Self.run(common + postgres + [option, value])
            #expect(status != 0, "\(option) \(value)")
            #expect(output.contains(option) && output.contains(says), "\(output)")
        }
    }

    /// SIGTERM closes listening WebSockets, so that clients reconnect (to another node), and the
    /// process ends without waiting for them to leave.
    @Test func sigtermClosesListenersAndEnds() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await Self.storeDocument(in: directory.url)
        let server = try await ServeProcess.start(dataDirectory: directory.url)
        let credentials = try #require(DevelopmentCredentials.load(from: directory.url))
        let issuer = try await ClientTokenIssuer(privateKeyPEM: credentials.keyPair.privateKeyPEM, algorithm: .es256)
        let token = try await issuer.sign(
            ClientClaims(documentID: "doc", permissions: ["read-document"], expiration: Date().addingTimeInterval(600)))
        let socket = ListeningSocket(
            port: server.port, path: "/i/d/doc/listen?since=0&clientId=phone&jwt=\(token)")
        #expect(try await socket.message { $0["presence"] != nil } != nil)
        #expect(await server.stop(within: 30), "the server ended within 30 s of SIGTERM")
        #expect(server.process.terminationStatus == 0)
        let close = try await socket.closedByServer()
        #expect(close?.closeCode == .goingAway, "the server closed the listening socket, telling the client to go")
    }

    @Test func syncCommandDownloadsALayerAndCatchesUpLater() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await Self.storeDocument(in: directory.url)
        let server = try await ServeProcess.start(dataDirectory: directory.url)
        defer { server.process.terminate() }
        let baseURL = server.baseURL
        let (tokenStatus, tokenOutput) = try await Self.run([
            "token", "--document", "doc", "--user", "cli", "--data-dir", directory.url.path,
        ])
        #expect(tokenStatus == 0)
        let jwt = try #require(tokenOutput.split(separator: "\n").last.map(String.init))
        let clientDirectory = directory.url.appendingPathComponent("client").path
        let arguments = ["sync", "--jwt", jwt, "--dir", clientDirectory, "--server", baseURL.absoluteString, "--once"]

        let (firstStatus, firstOutput) = try await Self.run(arguments)
        #expect(firstStatus == 0, "\(firstOutput)")
        #expect(firstOutput.contains("downloaded: clean"))
        #expect(firstOutput.contains("0 annotations"))

        let credentials = try #require(DevelopmentCredentials.load(from: directory.url))
        let status = try await Self.post(
            baseURL.appendingPathComponent("api/documents/doc/annotations"), token: credentials.apiAuthToken,
            json:
                #"{"id":"n1","content":{"v":2,"type":"pspdfkit/note","pageIndex":0,"bbox":[0,0,1,1],"text":{"format":"plain","value":"x"},"icon":"comment"}}"#
        )
        #expect(status == 200)
        let (secondStatus, secondOutput) = try await Self.run(arguments)
        #expect(secondStatus == 0, "\(secondOutput)")
        #expect(secondOutput.contains("sync finished: clean, 1 annotations"), "\(secondOutput)")

        let (badStatus, badOutput) = try await Self.run([
            "sync", "--jwt", "garbage", "--dir", clientDirectory, "--once",
        ])
        #expect(badStatus != 0)
        #expect(badOutput.contains("invalidJWT") || badOutput.contains("JWT"), "\(badOutput)")
    }

    @Test func editsOfAClientKilledWithSIGKILLSyncAfterItRestarts() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await Self.storeDocument(in: directory.url)
        let server = try await ServeProcess.start(dataDirectory: directory.url)
        let (_, tokenOutput) = try await Self.run([
            "token", "--document", "doc", "--user", "u", "--data-dir", directory.url.path,
        ])
        let jwt = try #require(tokenOutput.split(separator: "\n").last.map(String.init))
        let clientDirectory = directory.url.appendingPathComponent("client").path
        let (downloadStatus, downloadOutput) = try await Self.run([
            "sync", "--jwt", jwt, "--dir", clientDirectory, "--server", server.baseURL.absoluteString, "--once",
        ])
        #expect(downloadStatus == 0, "\(downloadOutput)")
        await server.stop()

        // Offline: the client commits an edit, then dies without a chance to clean up. It is pointed
        // at port 1, where nothing listens: the stopped server's port is free again, and another
        // test's server may take it while the client retries.
        let offlineURL = "http://127.0.0.1:1"
        let edits = directory.url.appendingPathComponent("edits.json")
        try Data(
            #"{"format":"https://pspdfkit.com/instant-json/v1","annotations":[{"v":2,"id":"offline-1","type":"pspdfkit/note","pageIndex":0,"bbox":[1,1,2,2],"text":{"format":"plain","value":"x"},"icon":"comment"}]}"#
                .utf8
        ).write(to: edits)
        let (client, text) = try await ChildProcess.start(
            try ServeProcess.executable().path,
            [
                "sync", "--jwt", jwt, "--dir", clientDirectory, "--server", offlineURL, "--apply", edits.path,
            ],
            readyWhen: "waiting for the server", timeout: 30)
        #expect(text.contains("committed locally"), "\(text)")
        #expect(text.contains("the server is unreachable"), "\(text)")
        #expect(client.isRunning, "an offline client waits for the server")
        await client.kill()
        #expect(!client.exited, "the client was killed by a signal")

        // Everything comes back: the client's restart pushes the edit.
        let restarted = try await ServeProcess.start(dataDirectory: directory.url)
        let (status, syncOutput) = try await Self.run([
            "sync", "--jwt", jwt, "--dir", clientDirectory, "--server", restarted.baseURL.absoluteString, "--once",
        ])
        #expect(status == 0, "\(syncOutput)")
        await restarted.stop()
        let ids = try await InstantStorage.sqlite(directory: directory.url).records(
            documentID: "doc", layer: "", kind: .annotation
        )
        .map(\.id)
        #expect(ids == ["offline-1"])
    }

    /// The example app of the README (Examples/instant-notes, `import Instant` alone) against a live
    /// server: downloads, adds a note, syncs; a second launch opens the local copy and
    /// reauthenticates (tokens are not stored).
    @Test func theExampleAppAddsANoteAndSyncsIt() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await Self.storeDocument(in: directory.url)
        let server = try await ServeProcess.start(dataDirectory: directory.url)
        defer { server.process.terminate() }
        let (_, tokenOutput) = try await Self.run([
            "token", "--document", "doc", "--user", "ann", "--data-dir", directory.url.path,
        ])
        let jwt = try #require(tokenOutput.split(separator: "\n").last.map(String.init))
        let example = try ServeProcess.executable(named: "instant-notes").path
        let appData = directory.url.appendingPathComponent("app").path
        let arguments = [server.baseURL.absoluteString, jwt, appData]

        let (status, output) = try await ChildProcess.run(
            example, arguments + ["Hello from the example"], includingErrors: true)
        #expect(status == 0, "\(output)")
        #expect(output.contains("downloaded document doc"), "\(output)")
        #expect(output.contains("1 notes, state clean"), "\(output)")
        #expect(output.contains("- Hello from the example"), "\(output)")

        let (again, secondOutput) = try await ChildProcess.run(example, arguments, includingErrors: true)
        #expect(again == 0, "\(secondOutput)")
        #expect(!secondOutput.contains("downloaded"), "the second launch opens the local copy")
        #expect(secondOutput.contains("1 notes, state clean"), "\(secondOutput)")

        let credentials = try #require(DevelopmentCredentials.load(from: directory.url))
        var request = URLRequest(url: server.baseURL.appendingPathComponent("api/documents/doc/annotations"))
        request.setValue("Token token=\"\(credentials.apiAuthToken)\"", forHTTPHeaderField: "Authorization")
        let (data, _) = try await URLSession.shared.data(for: request)
        let annotations = try JSONValue(parsing: data)["data"]?["annotations"]?.arrayValue ?? []
        #expect(annotations.count == 1)
        #expect(annotations.first?["content"]?["text"]?["value"]?.stringValue == "Hello from the example")
        #expect(annotations.first?["createdBy"]?.stringValue == "ann")

        let (usage, usageOutput) = try await ChildProcess.run(example, [], includingErrors: true)
        #expect(usage == 64)
        #expect(usageOutput.contains("usage: instant-notes"))
    }

    @Test func importExportAndTokenCommands() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await Self.storeDocument(in: directory.url)
        let server = try await ServeProcess.start(dataDirectory: directory.url)
        defer { server.process.terminate() }
        let common = ["--server", server.baseURL.absoluteString, "--data-dir", directory.url.path]
        let file = directory.url.appendingPathComponent("in.json")
        try Data(
            #"{"format":"https://pspdfkit.com/instant-json/v1","annotations":[{"v":2,"id":"cli-1","type":"pspdfkit/note","pageIndex":0,"bbox":[1,1,2,2],"text":{"format":"plain","value":"x"},"icon":"comment"}]}"#
                .utf8
        ).write(to: file)
        let (importStatus, importOutput) = try await Self.run(["import", "doc", file.path] + common)
        #expect(importStatus == 0, "\(importOutput)")

        let exported = directory.url.appendingPathComponent("out.json")
        let (exportStatus, exportOutput) = try await Self.run(["export", "doc", "-o", exported.path] + common)
        #expect(exportStatus == 0, "\(exportOutput)")
        let json = try JSONValue.parse(Data(contentsOf: exported))
        #expect(json["annotations"]?.arrayValue?.first?["id"]?.stringValue == "cli-1")

        // The same layer as XFDF, applied back as XFDF: the note keeps its id.
        let xfdf = directory.url.appendingPathComponent("out.xfdf")
        let (xfdfStatus, xfdfOutput) = try await Self.run(["export", "doc", "--xfdf", "-o", xfdf.path] + common)
        #expect(xfdfStatus == 0, "\(xfdfOutput)")
        let xfdfText = try String(contentsOf: xfdf, encoding: .utf8)
        #expect(xfdfText.contains("<text page=\"0\"") && xfdfText.contains("name=\"cli-1\""))
        let (reimportStatus, reimportOutput) = try await Self.run(
            ["import", "doc", xfdf.path, "--layer", "x"] + common)
        #expect(reimportStatus == 0, "\(reimportOutput)")
        #expect(reimportOutput.contains("\"revision\""))
        let (lenientStatus, lenientOutput) = try await Self.run(["import", "doc", xfdf.path, "--lenient"] + common)
        #expect(lenientStatus != 0 && lenientOutput.contains("--lenient applies to Instant JSON"))

        let (missingStatus, missingOutput) = try await Self.run(["export", "nope"] + common)
        #expect(missingStatus != 0)
        #expect(missingOutput.contains("404"))

        let (tokenStatus, tokenOutput) = try await Self.run([
            "token", "--document", "doc", "--layer", "notes", "--user", "dana", "--expires", "10m",
            "--data-dir", directory.url.path,
        ])
        #expect(tokenStatus == 0)
        let credentials = try #require(DevelopmentCredentials.load(from: directory.url))
        let verifier = try await ClientTokenVerifier(
            configuration: JWTConfiguration(publicKeyPEM: credentials.keyPair.publicKeyPEM, algorithm: .es256),
            storage: try InstantStorage.sqlite(directory: directory.url)
        )
        let token = try await verifier.verify(tokenOutput.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(token.documentID == "doc")
        #expect(token.layer == "notes")
        #expect(token.userID == "dana")
        #expect(token.expiresAt.timeIntervalSinceNow < 601)
    }

    /// `instant export --pdf --from-pdf IN --instant-json CHANGES -o OUT` writes the changes into
    /// the PDF offline, as an incremental update.
    @Test func offlineExportWritesInstantJSONIntoAPDF() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let source = directory.url.appendingPathComponent("annotated.pdf")
        try TestPDF.annotated().write(to: source)
        let originals = try PDFDocument(contentsOf: source).originalRecords().annotations
        let deleted = try #require(originals.first?.pdfObjectId)
        let changes = directory.url.appendingPathComponent("changes.json")
        try Data(
            """
            {"format":"https://pspdfkit.com/instant-json/v1","skippedPdfObjectIds":[\(deleted)],
             "annotations":[{"v":2,"id":"offline-1","type":"pspdfkit/note","pageIndex":0,"bbox":[10,10,20,20],
             "text":{"format":"plain","value":"written offline"},"icon":"comment"}]}
            """.utf8
        ).write(to: changes)
        let output = directory.url.appendingPathComponent("out.pdf")
        let (status, message) = try await Self.run([
            "export", "--pdf", "--from-pdf", source.path, "--instant-json", changes.path, "-o", output.path,
        ])
        #expect(status == 0, "\(message)")
        let written = try Data(contentsOf: output)
        #expect(written.starts(with: try Data(contentsOf: source)))
        let annotations = try PDFDocument(data: written).annotations()
        #expect(annotations.count == originals.count)
        #expect(annotations.contains { $0.text?.value == "written offline" })
        #expect(!annotations.contains { $0.pdfObjectId == deleted })

        let (missingStatus, missingMessage) = try await Self.run([
            "export", "--pdf", "--from-pdf", directory.url.appendingPathComponent("nope.pdf").path, "-o", output.path,
        ])
        #expect(missingStatus != 0)
        #expect(missingMessage.contains("nope.pdf"))
    }
}

extension ServeProcessTests {
    /// `instant convert` turns Instant JSON into XFDF and back, offline, with the PDF's coordinates.
    @Test func convertTurnsInstantJSONIntoXFDFAndBack() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let pdf = directory.url.appendingPathComponent("page.pdf")
        try TestPDF.make(pageCount: 1).write(to: pdf)
        let json = directory.url.appendingPathComponent("in.json")
        try Data(
            """
            {"format":"https://pspdfkit.com/instant-json/v1",
             "annotations":[{"v":2,"id":"sq","type":"pspdfkit/shape/rectangle","pageIndex":0,"bbox":[10,20,30,40],
               "strokeColor":"#FF0000","strokeWidth":2,"note":"convert me"}],
             "bookmarks":[{"v":1,"type":"pspdfkit/bookmark","action":{"type":"goTo","pageIndex":0}}]}
            """.utf8
        ).write(to: json)
        let xfdf = directory.url.appendingPathComponent("out.xfdf")
        let (toXFDF, toXFDFOutput) = try await Self.run(["convert", json.path, "--pdf", pdf.path, "-o", xfdf.path])
        #expect(toXFDF == 0, "\(toXFDFOutput)")
        #expect(toXFDFOutput.contains("bookmarks are left out"))
        let text = try String(contentsOf: xfdf, encoding: .utf8)
        // 792 pt high: the box from y 20 to 60 from the top is 732…772 in PDF space.
        #expect(text.contains("rect=\"10,732,40,772\""))
        #expect(text.contains("<f href=\"page.pdf\"/>"))

        let back = directory.url.appendingPathComponent("back.json")
        let (toJSON, toJSONOutput) = try await Self.run(["convert", xfdf.path, "--pdf", pdf.path, "-o", back.path])
        #expect(toJSON == 0, "\(toJSONOutput)")
        let records = try InstantDocumentJSON.decode(Data(contentsOf: back)).document
        #expect(records.annotations.map(\.id) == ["sq"])
        #expect(records.annotations.first?.bbox == Rect(left: 10, top: 20, width: 30, height: 40))
        #expect(records.annotations.first?.note == "convert me")

        let broken = directory.url.appendingPathComponent("broken.xfdf")
        try Data("<xfdf>\n<annots>\n<line page=\"0\"/>\n</annots></xfdf>".utf8).write(to: broken)
        let (brokenStatus, brokenOutput) = try await Self.run(["convert", broken.path, "--pdf", pdf.path])
        #expect(brokenStatus != 0)
        #expect(brokenOutput.contains("XFDF line 3: <line>: it has no 'rect' attribute"))
    }
}

/// Carries a value that is not `Sendable` (a `Process`) out of the thread that made it; the
/// test is its only user afterwards.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
