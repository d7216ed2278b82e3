import ArgumentParser
import Foundation
import InstantJSON
import InstantServer
import InstantTesting

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The web viewer's targets (issue 16), measured in a headless Chromium against `instant serve`:
/// the first page of a 10 MB PDF, a change reaching 10 other windows, and frames while scrolling
/// over a page with 1,000 annotations.
struct ViewerBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "viewer",
        abstract: "First page of a 10 MB PDF; propagation to 10 windows; scrolling over 1,000 annotations.",
        discussion: """
            Starts `instant serve` (the build beside instant-bench, with its development credentials, in a \
            temporary directory) and drives Debian's chromium through chromedriver (both must be installed, \
            and libjs-pdf).
            """
    )

    @Option(help: "Fresh browsers that open the 10 MB PDF.")
    var opens = 5
    @Option(help: "Strokes drawn by the writer while 10 windows watch.")
    var strokes = 30
    @Option(help: "Other windows on the layer.")
    var readers = 10
    @Option(help: "Annotations on the scrolled page.")
    var annotations = 1000
    @Option(help: "Seconds of scrolling.")
    var scrollSeconds = 5.0
    @Flag(
        help: """
            Open every window on the same origin, so that they share one browser's 6 connections per \
            host (by default each reader has an address of its own, 127.0.0.2, 127.0.0.3, …, as if each \
            reader were another person's browser).
            """)
    var sharedOrigin = false

    func run() async throws {
        if let missing = BrowserSession.Environment.missing { throw ValidationError("Missing: \(missing).") }
        // On every loopback address, for the readers' origins of their own.
        let server = try await ServerUnderTest.start(arguments: ["--hostname", "0.0.0.0"])
        defer { server.stop() }
        let context = Context(server: server)
        print("\(ProcessInfo.processInfo.activeProcessorCount) cores")
        try await firstPage(context)
        try await propagation(context)
        try await scrolling(context)
    }

    /// The server and requests to it.
    struct Context {
        let server: ServerUnderTest
        var issuer: ClientTokenIssuer { server.issuer }

        /// The server at one of the loopback addresses (`127.0.0.<host>`).
        func baseURL(host: Int = 1) -> String { "http://127.0.0.\(host):\(server.baseURL.port ?? 0)" }

        func api(_ method: String, _ path: String, body: Data, contentType: String) async throws -> JSONValue {
            var request = URLRequest(url: URL(string: "\(baseURL())/\(path)")!)
            request.httpMethod = method
            request.httpBody = body
            request.setValue(contentType, forHTTPHeaderField: "Content-Type")
            request.setValue("Token token=\"\(server.apiToken)\"", forHTTPHeaderField: "Authorization")
            let (data, response) = try await URLSession.shared.data(for: request)
            guard (response as? HTTPURLResponse)?.statusCode == 200 else {
                throw ValidationError("\(method) \(path): \(String(decoding: data, as: UTF8.self))")
            }
            return try JSONValue(parsing: data)
        }

        func upload(_ pdf: Data) async throws -> String {
            let answer = try await api("POST", "api/documents", body: pdf, contentType: "application/pdf")
            guard let id = answer["data"]?["document_id"]?.stringValue else { throw ValidationError("No document id.") }
            return id
        }

        func viewerURL(document: String, user: String, zoom: Double, host: Int = 1) async throws -> URL {
            let jwt = try await issuer.sign(
                ClientClaims(
                    documentID: document, permissions: ["read-document", "write", "download"], userID: user,
                    expiration: Date().addingTimeInterval(3600)))
            return URL(string: "\(baseURL(host: host))/viewer#jwt=\(jwt)&zoom=\(zoom)")!
        }
    }

    /// Waits until the viewer in the current window is ready and in sync.
    static func waitForViewer(_ browser: BrowserSession, seconds: Double = 120) async throws {
        guard
            try await browser.waitUntil(
                seconds,
                script: "return document.body.dataset.ready === 'true' && document.body.dataset.syncState === 'clean'")
        else { throw ValidationError("The viewer did not open: \(try await browser.consoleMessages())") }
    }

    /// A PDF of about 10 MB: 100 lines of text on each of 500 pages.
    static let pageCount = 500

    static func tenMegabytePDF() -> Data {
        let words = "Instant keeps annotations in sync between everyone who has the document open"
        let pages = (0..<Self.pageCount).map { page in
            (0..<100).map { line in
                TestPDF.TextLine(
                    "\(page + 1).\(line + 1) \(words) \(words)", x: 36, y: 770 - Double(line) * 7.5, size: 6)
            }
        }
        return TestPDF.text(pages: pages)
    }

    func firstPage(_ context: Context) async throws {
        let pdf = Self.tenMegabytePDF()
        let document = try await context.upload(pdf)
        print(
            String(
                format: "first page of a %.1f MB PDF (%d pages), each open in a fresh browser:",
                Double(pdf.count) / 1e6, Self.pageCount))
        var cold: [Double] = []
        var warm: [Double] = []
        for _ in 0..<opens {
            let browser = try await BrowserSession.start()
            do {
                for round in 0..<2 {
                    try await browser.navigate(
                        to: try await context.viewerURL(document: document, user: "reader", zoom: 1))
                    try await Self.waitForViewer(browser)
                    let time =
                        try await browser.execute(
                            "return performance.getEntriesByName('openinstant-first-page')[0].startTime"
                        ).doubleValue ?? .nan
                    if round == 0 { cold.append(time) } else { warm.append(time) }
                    try await browser.navigate(to: URL(string: "about:blank")!)
                }
            } catch {
                await browser.quit()
                throw error
            }
            await browser.quit()
        }
        print("  cold (new profile: no cache, no service worker): \(Self.summary(cold))")
        print("  again in the same browser:                       \(Self.summary(warm))")
    }

    func propagation(_ context: Context) async throws {
        let document = try await context.upload(TestPDF.make(pageCount: 2, seed: 1016))
        let browser = try await BrowserSession.start()
        do {
            try await browser.navigate(to: try await context.viewerURL(document: document, user: "writer", zoom: 1))
            try await Self.waitForViewer(browser)
            let writer = try await browser.currentWindow()
            try await browser.execute(Self.appearanceRecorder)
            var windows: [String] = []
            for index in 0..<readers {
                let window = try await browser.newWindow()
                try await browser.switchTo(window: window)
                try await browser.navigate(
                    to: try await context.viewerURL(
                        document: document, user: "reader\(index)", zoom: 1, host: sharedOrigin ? 1 : 2 + index))
                try await Self.waitForViewer(browser)
                try await browser.execute(Self.appearanceRecorder)
                windows.append(window)
            }
            try await browser.switchTo(window: writer)
            try await browser.execute(
                """
                window.__pushes = [];
                new PerformanceObserver((list) => {
                  for (const entry of list.getEntries()) {
                    if (entry.name.endsWith('/sync')) window.__pushes.push(performance.timeOrigin + entry.startTime);
                  }
                }).observe({ type: 'resource', buffered: true });
                // Pushes sent on the listening WebSocket (docs/PROTOCOL.md), timed when sent.
                const send = WebSocket.prototype.send;
                WebSocket.prototype.send = function (text) {
                  if (JSON.parse(text).sync?.changes?.length > 0) window.__pushes.push(performance.timeOrigin + performance.now());
                  return send.call(this, text);
                };
                document.querySelector('button[data-tool="ink"]').click();
                """)
            let page =
                try await browser.execute(
                    "const box = document.querySelector('.page').getBoundingClientRect(); return [box.left, box.top, Number(document.querySelector('.page').dataset.scale)]"
                ).arrayValue?.compactMap(\.doubleValue) ?? []
            guard page.count == 3 else { throw ValidationError("No page geometry.") }
            var fromLocal: [Double] = []
            var fromPush: [Double] = []
            var untilPoked: [Double] = []
            var syncTimes: [Double] = []
            var untilShown: [Double] = []
            for stroke in 0..<strokes {
                let y = 60 + Double(stroke % 20) * 15
                let points = [(60.0, y), (120.0, y + 10), (180.0, y)]
                try await browser.mouse(
                    [.move(x: page[0] + points[0].0 * page[2], y: page[1] + points[0].1 * page[2]), .down]
                        + points.dropFirst().map {
                            .move(x: page[0] + $0.0 * page[2], y: page[1] + $0.1 * page[2], milliseconds: 20)
                        }
                        + [.up])
                var id: String?
                for _ in 0..<500 where id == nil {
                    id = try await browser.execute(
                        "return Object.keys(window.__appeared).find((key) => !window.__counted?.[key]) ?? null"
                    ).stringValue
                    if id == nil { try await Task.sleep(for: .milliseconds(10)) }
                }
                guard let id else { throw ValidationError("The stroke was not drawn.") }
                try await browser.execute("(window.__counted ??= {})[arguments[0]] = true", [.string(id)])
                let local =
                    try await browser.execute("return window.__appeared[arguments[0]]", [.string(id)]).doubleValue
                    ?? .nan
                var pushStart: Double?
                for _ in 0..<500 where pushStart == nil {
                    pushStart = try await browser.execute(
                        "return window.__pushes.find((time) => time >= arguments[0] - 1) ?? null", [.number(local)]
                    ).doubleValue
                    if pushStart == nil { try await Task.sleep(for: .milliseconds(10)) }
                }
                for window in windows {
                    try await browser.switchTo(window: window)
                    var seen: Double?
                    for _ in 0..<1000 where seen == nil {
                        seen = try await browser.execute(
                            "return window.__appeared[arguments[0]] ?? null", [.string(id)]
                        )
                        .doubleValue
                        if seen == nil { try await Task.sleep(for: .milliseconds(10)) }
                    }
                    guard let seen else { throw ValidationError("A window never showed the stroke.") }
                    fromLocal.append(seen - local)
                    if let pushStart {
                        fromPush.append(seen - pushStart)
                        // The reader's sync that brought the stroke, if one did: the last one that started
                        // before it showed (none when the stroke came on the reader's WebSocket).
                        let sync = try await browser.execute(
                            "return window.__syncs.filter((entry) => entry[0] >= arguments[0] && entry[0] <= arguments[1]).pop() ?? null",
                            [.number(pushStart), .number(seen)]
                        ).arrayValue?.compactMap(\.doubleValue)
                        if let sync, sync.count == 2 {
                            untilPoked.append(sync[0] - pushStart)
                            syncTimes.append(sync[1] - sync[0])
                            untilShown.append(seen - sync[1])
                        }
                    }
                }
                try await browser.switchTo(window: writer)
            }
            print(
                "a stroke in one window, shown in \(readers) other windows (\(strokes) strokes, "
                    + "\(sharedOrigin ? "all on one origin" : "each on an origin of its own")):")
            print("  from the writer's push (sent on its WebSocket, or HTTP request start): \(Self.summary(fromPush))")
            print("  from the stroke on the writer's screen: \(Self.summary(fromLocal))")
            print(
                "  shown without a request (the records on the reader's WebSocket): "
                    + "\(fromPush.count - syncTimes.count) of \(fromPush.count)")
            print(
                "  pulled ones: push start to the reader's sync start (push, commit, WebSocket poke): \(Self.summary(untilPoked))"
            )
            print("            the reader's sync request: \(Self.summary(syncTimes))")
            print("            its answer to the stroke on the reader's screen: \(Self.summary(untilShown))")
        } catch {
            await browser.quit()
            throw error
        }
        await browser.quit()
    }

    /// Records when each annotation element first appears in a window (`Date.now()`, shared by
    /// windows), and when each sync request of the window started and got its answer.
    static let appearanceRecorder = """
        window.__syncs = [];
        new PerformanceObserver((list) => {
          for (const entry of list.getEntries()) {
            if (entry.name.endsWith('/sync')) {
              window.__syncs.push([performance.timeOrigin + entry.startTime, performance.timeOrigin + entry.responseEnd]);
            }
          }
        }).observe({ type: 'resource' });
        window.__appeared = {};
        const known = new Set([...document.querySelectorAll('[data-record-id]')].map((e) => e.dataset.recordId));
        new MutationObserver((mutations) => {
          const now = Date.now();
          for (const mutation of mutations) for (const node of mutation.addedNodes) {
            const id = node.dataset?.recordId;
            if (id && !known.has(id) && !(id in window.__appeared)) window.__appeared[id] = now;
          }
        }).observe(document.body, { childList: true, subtree: true });
        """

    func scrolling(_ context: Context) async throws {
        let document = try await context.upload(TestPDF.make(pageCount: 3, seed: 1000))
        var records: [JSONValue] = []
        for index in 0..<annotations {
            let x = Double(index % 25) * 22 + 20
            let y = Double(index / 25) * 18 + 20
            let content: JSONValue
            switch index % 5 {
            case 0:
                content = [
                    "v": 2, "type": "pspdfkit/ink", "pageIndex": 0, "bbox": [.number(x), .number(y), 20, 14],
                    "lines": [
                        "points": [
                            .array(
                                (0..<16).map { step in [.number(x + Double(step)), .number(y + Double(step % 4) * 4)] })
                        ]
                    ],
                    "lineWidth": 1.5, "strokeColor": "#dc2626",
                ]
            case 1:
                content = [
                    "v": 2, "type": "pspdfkit/shape/rectangle", "pageIndex": 0,
                    "bbox": [.number(x), .number(y), 18, 12],
                    "strokeColor": "#2563eb", "strokeWidth": 1,
                ]
            case 2:
                content = [
                    "v": 2, "type": "pspdfkit/markup/highlight", "pageIndex": 0,
                    "bbox": [.number(x), .number(y), 20, 10],
                    "rects": [[.number(x), .number(y), 20, 10]], "color": "#fde047",
                ]
            case 3:
                content = [
                    "v": 2, "type": "pspdfkit/note", "pageIndex": 0, "bbox": [.number(x), .number(y), 12, 12],
                    "text": ["format": "plain", "value": "note"], "icon": "comment",
                ]
            default:
                content = [
                    "v": 2, "type": "pspdfkit/text", "pageIndex": 0, "bbox": [.number(x), .number(y), 20, 12],
                    "text": ["format": "plain", "value": "text"], "fontSize": 6, "fontColor": "#111827",
                ]
            }
            records.append(["content": content])
        }
        _ = try await context.api(
            "POST", "api/documents/\(document)/annotations",
            body: JSONValue.object(["annotations": .array(records)]).serialized(),
            contentType: "application/json")
        let browser = try await BrowserSession.start()
        do {
            try await browser.navigate(to: try await context.viewerURL(document: document, user: "reader", zoom: 1))
            try await Self.waitForViewer(browser)
            let drawn =
                try await browser.execute(
                    "return document.querySelectorAll('.page[data-page-index=\"0\"] .record').length"
                ).intValue ?? 0
            let result = try await browser.executeAsync(
                """
                const done = arguments[arguments.length - 1];
                const scroller = document.getElementById('scroller');
                const seconds = arguments[0];
                const range = 500;
                const frames = [];
                let step = 6;
                const start = performance.now();
                const tick = (now) => {
                  frames.push(now);
                  if (scroller.scrollTop >= range) step = -6;
                  if (scroller.scrollTop <= 0) step = 6;
                  scroller.scrollTop += step;
                  if (now - start < seconds * 1000) requestAnimationFrame(tick);
                  else done(frames);
                };
                requestAnimationFrame(tick);
                """, [.number(scrollSeconds)], timeout: scrollSeconds + 60)
            let frames = result.arrayValue?.compactMap(\.doubleValue) ?? []
            let intervals = zip(frames, frames.dropFirst()).map { $1 - $0 }
            let duration = (frames.last ?? 0) - (frames.first ?? 0)
            let fps = Double(intervals.count) / (duration / 1000)
            let slow = intervals.filter { $0 > 1000.0 / 30 }.count
            print("scrolling over a page with \(drawn) annotations drawn, \(scrollSeconds) s of animation frames:")
            print(
                String(
                    format:
                        "  %.1f frames/s, frame interval p50 %.1f ms, p99 %.1f ms, max %.1f ms, %d of %d frames over 33.3 ms",
                    fps, Self.percentile(intervals, 0.5), Self.percentile(intervals, 0.99), intervals.max() ?? 0, slow,
                    intervals.count))
        } catch {
            await browser.quit()
            throw error
        }
        await browser.quit()
    }

    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))]
    }

    static func summary(_ values: [Double]) -> String {
        String(
            format: "p50 %.0f ms, p99 %.0f ms, max %.0f ms (n = %d)", percentile(values, 0.5), percentile(values, 0.99),
            values.max() ?? .nan, values.count)
    }
}
