import Foundation
import InstantJSON
import InstantServer
import InstantTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the browser tests need besides the build: Chromium, chromedriver, pdf.js and pdftotext.
/// Without them the tests are skipped with ``absence``; with `OPENINSTANT_REQUIRE_BROWSER=1` they
/// run and fail, naming what is missing.
enum BrowserTools {
    /// The pdf.js directory the server is started with: `PDFJS_DIR`, else Debian's.
    static let pdfjsDirectory =
        ProcessInfo.processInfo.environment["PDFJS_DIR"] ?? ViewerConfiguration.debianPDFJSDirectory

    /// `pdftotext` of Poppler, which places the words of a PDF independently of the browser.
    static let pdftotext = ["/usr/bin/pdftotext", "/usr/local/bin/pdftotext"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// What is missing, or `nil`.
    static var missing: String? {
        var names: [String] = []
        if let browser = BrowserSession.Environment.missing { names.append(browser) }
        if !FileManager.default.fileExists(atPath: pdfjsDirectory + "/build/pdf.js") {
            names.append("pdf.js in \(pdfjsDirectory) (apt-get install libjs-pdf, or set PDFJS_DIR)")
        }
        if pdftotext == nil { names.append("pdftotext (apt-get install poppler-utils)") }
        return names.isEmpty ? nil : names.joined(separator: ", ")
    }

    /// Whether the browser tests run: when everything is there, or when it is required.
    static var shouldRun: Bool { missing == nil || BrowserSession.Environment.isRequired }

    /// Why they are skipped.
    static var absence: Testing.Comment {
        Testing.Comment(
            rawValue: "the browser tests need \(missing ?? "nothing more"); without it they are skipped, and "
                + "\(BrowserSession.Environment.requirementVariable)=1 (set by .ci/run) makes them fail instead")
    }

    /// Fails the test, naming what is missing, when a required tool is not there.
    static func requireAll() throws {
        if let missing {
            throw BrowserSession.Failure(
                "The browser tests are required (\(BrowserSession.Environment.requirementVariable) is set) but need \(missing)."
            )
        }
    }
}

/// A running `instant serve` with its development credentials, documents uploaded to it, a
/// headless Chromium, and the steps the scenarios share.
final class ViewerFixture: @unchecked Sendable {
    let directory: URL
    private(set) var server: ServeProcess
    let browser: BrowserSession
    let credentials: DevelopmentCredentials
    let issuer: ClientTokenIssuer

    var baseURL: URL { server.baseURL }

    /// The scheduling priority of the browser and the server: below the other tests', whose
    /// timeouts are tighter than these tests'.
    static let niceness = 10

    private init(
        directory: URL, server: ServeProcess, browser: BrowserSession, credentials: DevelopmentCredentials,
        issuer: ClientTokenIssuer
    ) {
        self.directory = directory
        self.server = server
        self.browser = browser
        self.credentials = credentials
        self.issuer = issuer
    }

    /// Starts the server (on a fresh data directory) and the browser.
    /// - Parameter pdfjsDirectory: The server's `--pdfjs-dir`.
    static func start(pdfjsDirectory: String = BrowserTools.pdfjsDirectory) async throws -> ViewerFixture {
        try BrowserTools.requireAll()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "instant-viewer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let server = try await ServeProcess.start(
            dataDirectory: directory, arguments: ["--pdfjs-dir", pdfjsDirectory], niceness: Self.niceness)
        let credentials = try #require(DevelopmentCredentials.load(from: directory))
        let issuer = try await ClientTokenIssuer(
            privateKeyPEM: credentials.keyPair.privateKeyPEM, algorithm: credentials.keyPair.algorithm)
        let browser: BrowserSession
        do {
            browser = try await BrowserSession.start(niceness: Self.niceness)
        } catch {
            await server.stop()
            throw error
        }
        return ViewerFixture(
            directory: directory, server: server, browser: browser, credentials: credentials, issuer: issuer)
    }

    /// Quits the browser, stops the server and removes the data directory.
    /// Runs `body` with a new fixture, then finishes it, also when `body` throws.
    static func run(
        pdfjsDirectory: String = BrowserTools.pdfjsDirectory, _ body: (ViewerFixture) async throws -> Void
    ) async throws {
        let fixture = try await start(pdfjsDirectory: pdfjsDirectory)
        do {
            try await body(fixture)
        } catch {
            await fixture.finish()
            throw error
        }
        await fixture.finish()
    }

    /// Opens the document's viewer in the current window as alice (the writer) and in a new window
    /// as bob (the reader, listening as `readerListens` says, by default by WebSocket); the reader's
    /// window is current when it returns.
    func openWriterAndReader(document: String, readerListens: String? = nil) async throws
        -> (writer: String, reader: String)
    {
        let writer = try await browser.currentWindow()
        try await openViewer(jwt: try await token(document: document, user: "alice"), zoom: 1)
        let reader = try await browser.newWindow()
        try await browser.switchTo(window: reader)
        try await openViewer(jwt: try await token(document: document, user: "bob"), zoom: 1, listen: readerListens)
        return (writer, reader)
    }

    func finish() async {
        await browser.quit()
        await server.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Stops the server; its data stays.
    func stopServer() async {
        await server.stop()
    }

    /// Starts the server again on the port it had, so that its pages' origin stays the same.
    func restartServer() async throws {
        server = try await ServeProcess.start(
            dataDirectory: directory, port: server.port, arguments: ["--pdfjs-dir", BrowserTools.pdfjsDirectory],
            niceness: Self.niceness)
    }

    /// A request of the backend API with the development API token.
    func api(_ method: String, _ path: String, body: Data? = nil, contentType: String = "application/json")
        async throws -> JSONValue
    {
        var request = URLRequest(url: baseURL.appendingPathComponent(path))
        request.httpMethod = method
        request.httpBody = body
        request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        request.setValue("Token token=\"\(credentials.apiAuthToken)\"", forHTTPHeaderField: "Authorization")
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let answer = try JSONValue(parsing: data)
        guard status == 200 else {
            throw BrowserSession.Failure("\(method) \(path): \(status) \(answer.serializedString())")
        }
        return answer
    }

    /// Uploads a PDF and returns its document id.
    func upload(_ pdf: Data) async throws -> String {
        let answer = try await api("POST", "api/documents", body: pdf, contentType: "application/pdf")
        return try #require(answer["data"]?["document_id"]?.stringValue)
    }

    /// A client token for a document, signed with the development key.
    func token(document: String, user: String?, layer: String? = nil, tokenID: String? = nil) async throws -> String {
        try await issuer.sign(
            ClientClaims(
                documentID: document, layer: layer, permissions: ["read-document", "write", "download"],
                userID: user, creatorName: user, expiration: Date().addingTimeInterval(3600), tokenID: tokenID))
    }

    /// The revision of a document's default layer, from its snapshot.
    func revision(document: String, jwt: String) async throws -> Int64 {
        var request = URLRequest(url: baseURL.appendingPathComponent("i/d/\(document)/snapshot"))
        request.setValue("Token token=\"\(jwt)\"", forHTTPHeaderField: "Authorization")
        let (data, _) = try await URLSession.shared.data(for: request)
        return try #require(try JSONValue(parsing: data)["revision"]?.intValue.map(Int64.init))
    }

    /// The annotations the server has on a document's default layer, by id.
    func serverAnnotations(_ document: String) async throws -> [String: JSONValue] {
        let answer = try await api("GET", "api/documents/\(document)/annotations")
        let list = answer["data"]?["annotations"]?.arrayValue ?? []
        return Dictionary(
            uniqueKeysWithValues: list.compactMap { item in item["id"]?.stringValue.map { ($0, item) } })
    }

    /// Opens the viewer with a token in the current window and waits until the first page is drawn.
    /// - Parameter listen: How the viewer listens (`websocket`, `long-poll`); `auto` when `nil`.
    func openViewer(jwt: String, zoom: Double? = nil, listen: String? = nil) async throws {
        var fragment = "jwt=\(jwt)"
        if let zoom { fragment += "&zoom=\(zoom)" }
        if let listen { fragment += "&listen=\(listen)" }
        try await browser.navigate(to: URL(string: "\(baseURL.absoluteString)/viewer#\(fragment)")!)
        try await waitForViewer()
    }

    /// Waits until the viewer in the current window has drawn its first page and is in sync.
    func waitForViewer() async throws {
        let ready = try await browser.waitUntil(
            60,
            script: """
                return document.body.dataset.ready === 'true'
                  && document.body.dataset.syncState === 'clean'
                  && !!document.querySelector('.page[data-rendered]');
                """)
        if !ready {
            let state = try await browser.execute(
                "return [document.body.dataset.syncState, document.getElementById('message').textContent].join(' | ')")
            let console = try await browser.consoleMessages()
            throw BrowserSession.Failure("The viewer did not open: \(state). Console: \(console)")
        }
    }

    /// Chooses a tool of the viewer's toolbar.
    func chooseTool(_ tool: String) async throws {
        try await browser.execute(
            "document.querySelector('button[data-tool=\"' + arguments[0] + '\"]').click()",
            [
                .string(tool)
            ])
    }

    /// Sets the width of the current tool, as the toolbar's slider does.
    func setToolWidth(_ width: Int) async throws {
        try await browser.execute(
            """
            const input = document.getElementById('tool-width');
            input.value = String(arguments[0]);
            input.dispatchEvent(new Event('input'));
            """, [.integer(Int64(width))])
    }

    /// Where a page's box is in the window, and its CSS pixels per point.
    func pageGeometry(_ index: Int = 0) async throws -> (left: Double, top: Double, scale: Double) {
        let answer = try await browser.execute(
            """
            const page = document.querySelector('.page[data-page-index="' + arguments[0] + '"]');
            const box = page.getBoundingClientRect();
            return [box.left, box.top, Number(page.dataset.scale)];
            """, [.integer(Int64(index))])
        let numbers = answer.arrayValue?.compactMap(\.doubleValue) ?? []
        guard numbers.count == 3 else { throw BrowserSession.Failure("No geometry for page \(index): \(answer)") }
        return (numbers[0], numbers[1], numbers[2])
    }

    /// Draws a stroke through points of a page (in points) with the mouse; the pen must be chosen.
    func drawStroke(page: Int = 0, through points: [(Double, Double)]) async throws {
        try await browser.mouse(Self.stroke(through: points, on: try await pageGeometry(page)))
    }

    /// The mouse steps of a stroke through points of a page whose geometry is known, shifted by
    /// `offset` (where the page's frame is in the browser's viewport).
    static func stroke(
        through points: [(Double, Double)], on geometry: (left: Double, top: Double, scale: Double),
        offset: (Double, Double) = (0, 0)
    ) -> [BrowserSession.PointerStep] {
        let screen = points.map {
            (offset.0 + geometry.left + $0.0 * geometry.scale, offset.1 + geometry.top + $0.1 * geometry.scale)
        }
        var steps: [BrowserSession.PointerStep] = [.move(x: screen[0].0, y: screen[0].1), .down]
        for point in screen.dropFirst() { steps.append(.move(x: point.0, y: point.1, milliseconds: 40)) }
        steps.append(.up)
        return steps
    }

    /// The ids of the annotations the viewer in the current window draws, of one type or all.
    func drawnRecordIDs(type: String? = nil) async throws -> [String] {
        let answer = try await browser.execute(
            """
            const selector = arguments[0] ? '.record[data-type="' + arguments[0] + '"]' : '.record';
            return [...document.querySelectorAll(selector)].map((element) => element.dataset.recordId);
            """, [type.map(JSONValue.string) ?? .null])
        return answer.arrayValue?.compactMap(\.stringValue) ?? []
    }

    /// Waits until the viewer in the current window draws a record of a type that is not in `known`.
    func newRecordID(type: String, besides known: [String] = [], seconds: Double = 30) async throws -> String {
        var found: String?
        _ = try await BrowserSession.poll(seconds) {
            found = try await self.drawnRecordIDs(type: type).first { !known.contains($0) }
            return found != nil
        }
        return try #require(found, "No new \(type) was drawn")
    }

    /// The messages of the browser's console that report a refusal by the content security policy.
    func securityPolicyViolations() async throws -> [String] {
        try await browser.consoleMessages().filter { $0.contains("Content Security Policy") }
    }
}
