import AsyncHTTPClient
import Foundation
import InstantJSON
import NIOCore

/// A headless Chromium driven through chromedriver with the W3C WebDriver protocol, for the tests
/// and benchmarks of the web viewer: pages, windows, scripts, real mouse input and screenshots.
///
/// ```swift
/// let browser = try await BrowserSession.start()
/// defer { Task { await browser.quit() } }
/// try await browser.navigate(to: url)
/// let title = try await browser.execute("return document.title")
/// ```
///
public final class BrowserSession: Sendable {
    /// Where the browser and its driver are, and how to make their absence a failure.
    public enum Environment {
        /// The environment variable that, set to anything but empty or `0`, makes missing browser
        /// tools a failure of the browser tests instead of a reason to skip them (`.ci/run` sets it).
        public static let requirementVariable = "OPENINSTANT_REQUIRE_BROWSER"

        /// The Chromium executable: `CHROMIUM` if set, else the first of Debian's and other usual names on `PATH`.
        public static let chromium: String? = locate(
            ProcessInfo.processInfo.environment["CHROMIUM"], names: ["chromium", "chromium-browser", "google-chrome"])
        /// The chromedriver executable: `CHROMEDRIVER` if set, else `chromedriver` on `PATH`.
        public static let chromedriver: String? = locate(
            ProcessInfo.processInfo.environment["CHROMEDRIVER"], names: ["chromedriver"])

        /// Whether `OPENINSTANT_REQUIRE_BROWSER` asks for the browser tests to fail without the tools.
        public static var isRequired: Bool {
            let value = ProcessInfo.processInfo.environment[requirementVariable] ?? ""
            return !value.isEmpty && value != "0"
        }

        /// What is missing, or `nil` when both tools are there.
        public static var missing: String? {
            var names: [String] = []
            if chromium == nil { names.append("chromium (apt-get install chromium)") }
            if chromedriver == nil { names.append("chromedriver (apt-get install chromium-driver)") }
            return names.isEmpty ? nil : names.joined(separator: " and ")
        }

        /// Why the browser tests are skipped: what is missing, how to install it, how to require it.
        public static var absence: String {
            "the browser tests need \(missing ?? "nothing more"); without them they are skipped, "
                + "and \(requirementVariable)=1 (set by .ci/run) makes them fail instead"
        }

        static func locate(_ configured: String?, names: [String]) -> String? {
            if let configured, !configured.isEmpty {
                return FileManager.default.isExecutableFile(atPath: configured) ? configured : nil
            }
            let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
            for directory in path.split(separator: ":") {
                for name in names {
                    let candidate = "\(directory)/\(name)"
                    if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
                }
            }
            return nil
        }
    }

    /// A failure of the driver or the browser, with what the driver said.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    /// A step of pointer input, in CSS pixels of the window's viewport.
    public enum PointerStep: Sendable {
        case move(x: Double, y: Double, milliseconds: Int = 0)
        case down
        case up
        case pause(milliseconds: Int)
    }

    private let driver: ChildProcess
    private let baseURL: String
    private let sessionID: String

    private init(driver: ChildProcess, baseURL: String, sessionID: String) {
        self.driver = driver
        self.baseURL = baseURL
        self.sessionID = sessionID
    }

    /// Starts chromedriver on a free port and a headless Chromium with a fresh profile.
    /// - Parameters:
    ///   - width: The window's width in CSS pixels.
    ///   - height: The window's height in CSS pixels.
    ///   - niceness: The scheduling priority of the driver and the browser (`nice`, 0 to 19): tests
    ///     that run beside others give the CPU to them first; benchmarks keep 0.
    public static func start(width: Int = 1280, height: Int = 900, niceness: Int = 0) async throws -> BrowserSession {
        guard let chromium = Environment.chromium, let chromedriver = Environment.chromedriver else {
            throw Failure("Cannot start a browser: \(Environment.missing ?? "tools are missing").")
        }
        let (driver, port) = try await startDriver(chromedriver, niceness: niceness)
        let baseURL = "http://127.0.0.1:\(port)"
        let arguments: [JSONValue] = [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            .string("--window-size=\(width),\(height)"), "--force-device-scale-factor=1",
            "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
            "--disable-backgrounding-occluded-windows", "--no-first-run", "--no-default-browser-check",
            "--hide-scrollbars",
        ]
        let capabilities: JSONValue = [
            "capabilities": [
                "alwaysMatch": [
                    "browserName": "chrome",
                    "goog:chromeOptions": ["binary": .string(chromium), "args": .array(arguments)],
                    "goog:loggingPrefs": ["browser": "ALL"],
                ]
            ]
        ]
        do {
            let answer = try await request(baseURL, "POST", "session", capabilities)
            guard let id = answer["sessionId"]?.stringValue else {
                throw Failure("chromedriver did not start a session: \(answer.serializedString())")
            }
            return BrowserSession(driver: driver, baseURL: baseURL, sessionID: id)
        } catch {
            await driver.stop()
            throw error
        }
    }

    /// Starts chromedriver on a free port and returns it with the port.
    ///
    /// With `--port=0` chromedriver takes a free IPv4 port, then the same port on IPv6, and exits
    /// when another program holds that one: a start that ends so is tried again, up to 3 times.
    private static func startDriver(_ chromedriver: String, niceness: Int) async throws -> (ChildProcess, Int) {
        var attempt = 1
        while true {
            do {
                // `nice` applies to chromedriver, and the browser it starts inherits the priority.
                let (driver, output) = try await ChildProcess.start(
                    chromedriver, ["--port=0"], niceness: niceness, includingErrors: true,
                    readyWhen: #"started successfully on port [0-9]+"#)
                guard let port = output.split(separator: " ").last.flatMap({ Int($0) }) else {
                    await driver.kill()
                    throw Failure("chromedriver did not say which port it listens on: \(output)")
                }
                return (driver, port)
            } catch let failure as ChildProcess.Failure
                where attempt < 3 && failure.description.contains("Address already in use")
            {
                attempt += 1
            }
        }
    }

    /// Ends the session, closing every window, and stops the driver.
    public func quit() async {
        _ = try? await command("DELETE", "")
        // chromedriver stops on its `shutdown` command; a signal may wait for its open connections.
        _ = try? await Self.request(baseURL, "GET", "shutdown", nil)
        await driver.stop()
    }

    /// Opens a URL in the current window and waits for its `load` event.
    public func navigate(to url: URL) async throws {
        _ = try await command("POST", "url", ["url": .string(url.absoluteString)])
    }

    /// Reloads the current window's page.
    public func refresh() async throws {
        _ = try await command("POST", "refresh", [:])
    }

    /// Runs a script's body in the current page and returns its `return` value.
    @discardableResult
    public func execute(_ script: String, _ arguments: [JSONValue] = []) async throws -> JSONValue {
        try await command("POST", "execute/sync", ["script": .string(script), "args": .array(arguments)])
    }

    /// Runs a script's body that calls its last argument (a callback) with its result, and returns
    /// that result; fails after `timeout` seconds.
    public func executeAsync(_ script: String, _ arguments: [JSONValue] = [], timeout: Double = 60) async throws
        -> JSONValue
    {
        _ = try await command("POST", "timeouts", ["script": .integer(Int64(timeout * 1000))])
        return try await command("POST", "execute/async", ["script": .string(script), "args": .array(arguments)])
    }

    /// Opens a new window and returns its handle (the current window stays current).
    public func newWindow() async throws -> String {
        let answer = try await command("POST", "window/new", ["type": "window"])
        guard let handle = answer["handle"]?.stringValue else { throw Failure("No handle for the new window.") }
        return handle
    }

    /// The handle of the current window.
    public func currentWindow() async throws -> String {
        guard let handle = try await command("GET", "window").stringValue else { throw Failure("No current window.") }
        return handle
    }

    /// Makes a window the current one.
    public func switchTo(window handle: String) async throws {
        _ = try await command("POST", "window", ["handle": .string(handle)])
    }

    /// Makes the `index`th frame of the current page the current browsing context (scripts run in it).
    public func switchToFrame(_ index: Int) async throws {
        _ = try await command("POST", "frame", ["id": .integer(Int64(index))])
    }

    /// Makes the page that holds the current frame the current browsing context again.
    public func switchToParentFrame() async throws {
        _ = try await command("POST", "frame/parent", [:])
    }

    /// Chooses a file for a file input (the first element that matches a CSS selector), as a user would.
    public func chooseFile(_ path: String, in selector: String) async throws {
        let found = try await command("POST", "element", ["using": "css selector", "value": .string(selector)])
        guard let element = found.objectValue?.values.first?.stringValue else {
            throw Failure("No element matches \(selector).")
        }
        _ = try await command("POST", "element/\(element)/value", ["text": .string(path)])
    }

    /// Performs mouse input in the current window.
    public func mouse(_ steps: [PointerStep]) async throws {
        let actions: [JSONValue] = steps.map { step in
            switch step {
            case .move(let x, let y, let milliseconds):
                return [
                    "type": "pointerMove", "x": .integer(Int64(x.rounded())), "y": .integer(Int64(y.rounded())),
                    "origin": "viewport", "duration": .integer(Int64(milliseconds)),
                ]
            case .down: return ["type": "pointerDown", "button": 0]
            case .up: return ["type": "pointerUp", "button": 0]
            case .pause(let milliseconds): return ["type": "pause", "duration": .integer(Int64(milliseconds))]
            }
        }
        _ = try await command(
            "POST", "actions",
            [
                "actions": [
                    [
                        "type": "pointer", "id": "mouse", "parameters": ["pointerType": "mouse"],
                        "actions": .array(actions),
                    ]
                ]
            ])
        _ = try await command("DELETE", "actions")
    }

    /// A PNG screenshot of the current window's viewport.
    public func screenshot() async throws -> Data {
        guard let text = try await command("GET", "screenshot").stringValue, let data = Data(base64Encoded: text)
        else { throw Failure("The screenshot is not base64 PNG data.") }
        return data
    }

    /// The browser's console messages since the last call (level and text), for failure messages.
    public func consoleMessages() async throws -> [String] {
        let entries = try await command("POST", "se/log", ["type": "browser"]).arrayValue ?? []
        return entries.map { "\($0["level"]?.stringValue ?? "?") \($0["message"]?.stringValue ?? "")" }
    }

    /// Polls a script until it returns `true`, for up to `seconds`; returns whether it did.
    public func waitUntil(_ seconds: Double = 30, script: String, _ arguments: [JSONValue] = []) async throws -> Bool {
        try await Self.poll(seconds) { try await self.execute(script, arguments) == .bool(true) }
    }

    /// Polls a condition whose every check costs the machine work (a script in a page, a request to
    /// a server) every 50 ms, for up to `seconds`; returns whether it held.
    public static func poll(_ seconds: Double = 30, _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return try await condition()
    }

    private func command(_ method: String, _ path: String, _ body: JSONValue? = nil) async throws -> JSONValue {
        let route = path.isEmpty ? "session/\(sessionID)" : "session/\(sessionID)/\(path)"
        return try await Self.request(baseURL, method, route, body)
    }

    /// One WebDriver command. (chromedriver writes header fields without a space after the colon,
    /// which is valid HTTP that Foundation's URLSession on Linux refuses; AsyncHTTPClient reads it.)
    private static func request(_ baseURL: String, _ method: String, _ path: String, _ body: JSONValue?)
        async throws -> JSONValue
    {
        var request = HTTPClientRequest(url: "\(baseURL)/\(path)")
        request.method = .RAW(value: method)
        if let body {
            request.body = .bytes(ByteBuffer(bytes: body.serialized()))
            request.headers.add(name: "Content-Type", value: "application/json")
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(300))
        let data = Data(buffer: try await response.body.collect(upTo: 256 << 20))
        let answer = (try? JSONValue(parsing: data)) ?? .null
        let status = Int(response.status.code)
        guard status == 200 else {
            let error = answer["value"]?["error"]?.stringValue ?? "error"
            let message = answer["value"]?["message"]?.stringValue ?? String(decoding: data, as: UTF8.self)
            throw Failure("WebDriver \(method) /\(path): \(status) \(error): \(message)")
        }
        return answer["value"] ?? .null
    }
}
