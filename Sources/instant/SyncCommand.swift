import ArgumentParser
import Foundation
import Instant

/// `instant sync`: a command-line client of the SDK. It downloads a layer, prints what happens and
/// keeps the layer in sync while it runs.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Download a layer with the client SDK and keep it synced, printing its state.",
        discussion: """
            The local copy lives in --dir (PDF, records, pending changes); running the command again \
            resumes from it. Edits applied while the server is unreachable are committed locally; the \
            command then waits for the server (with --once it exits, and the next run pushes them). \
            Stop with Ctrl-C.
            """
    )

    @Option(help: "The client JWT (document and layer are read from it).")
    var jwt: String

    @Option(help: "The client's data directory.")
    var dir: String = "instant-client"

    @Option(help: "The server's base URL. Env: INSTANT_URL.")
    var server: String?

    @Flag(help: "Download (or catch up) once, print the records, and exit.")
    var once = false

    @Option(help: "An Instant JSON file to apply to the layer as local edits (they sync like any edit).")
    var apply: String?

    func run() async throws {
        let text = server ?? ProcessInfo.processInfo.environment["INSTANT_URL"] ?? "http://127.0.0.1:5000"
        guard let serverURL = URL(string: text) else { throw ValidationError("'\(text)' is not a URL.") }
        let client = try InstantClient(serverURL: serverURL, dataDirectory: URL(fileURLWithPath: dir))
        let printer = SyncPrinter()
        client.delegate = printer
        let descriptor = try client.documentDescriptor(forJWT: jwt)
        printer.say("document \(descriptor.identifier), layer '\(descriptor.layerName)': \(descriptor.documentState)")
        var outcomes = printer.outcomes.makeAsyncIterator()
        if descriptor.isDownloaded {
            // Local edits need no network: they are committed now and pushed when possible.
            try applyFile(to: descriptor, printer: printer)
            // Hand the (maybe newer) token over, waiting for the server if it cannot be reached.
            var wait = Duration.seconds(1)
            try descriptor.reauthenticate(withJWT: jwt)
            while case let outcome = await outcomes.next(), outcome != .succeeded {
                guard outcome == .unreachable, !once else { throw ExitCode.failure }
                printer.say("waiting for the server (next try in \(wait)); local edits stay committed")
                try await Task.sleep(for: wait)
                wait = min(wait * 2, .seconds(30))
                try descriptor.reauthenticate(withJWT: jwt)
            }
            descriptor.sync()
            guard await outcomes.next() == .succeeded else { throw ExitCode.failure }
        } else {
            try descriptor.download(usingJWT: jwt)
            guard await outcomes.next() == .succeeded else { throw ExitCode.failure }
            if apply != nil {
                try applyFile(to: descriptor, printer: printer)
                descriptor.sync()
                guard await outcomes.next() == .succeeded else { throw ExitCode.failure }
            }
        }
        printer.say("\(try descriptor.editableDocument.annotations().count) annotations")
        if once { return }
        descriptor.startListeningForServerChanges()
        printer.say("listening for changes (Ctrl-C to stop)")
        while true {
            try await Task.sleep(for: .seconds(3600))
        }
    }
}

extension SyncCommand {
    /// Applies the `--apply` file, if any, to the layer's editable document.
    func applyFile(to descriptor: InstantDocumentDescriptor, printer: SyncPrinter) throws {
        guard let apply else { return }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: apply))
        } catch {
            throw ValidationError("Cannot read \(apply): \(error.localizedDescription)")
        }
        try descriptor.setDelayForSyncingLocalChanges(.instantSyncingLocalChangesDisabled)
        try descriptor.editableDocument.applyInstantJSON(data)
        printer.say("applied \(apply): \(descriptor.documentState), committed locally")
    }
}

/// Prints the SDK's events, one line each.
final class SyncPrinter: InstantClientDelegate, @unchecked Sendable {
    /// How a download, sync or reauthentication ended.
    enum Outcome: Equatable {
        case succeeded
        /// The server could not be reached; trying again later may succeed.
        case unreachable
        /// The server refused the token or the download.
        case failed
    }

    /// How each download, sync or reauthentication ended, in order.
    let outcomes: AsyncStream<Outcome>
    private let continuation: AsyncStream<Outcome>.Continuation

    init() {
        (outcomes, continuation) = AsyncStream.makeStream()
    }

    private func settle(_ outcome: Outcome) {
        continuation.yield(outcome)
    }

    func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    func instantClient(_ client: InstantClient, didFinishDownloadFor descriptor: InstantDocumentDescriptor) {
        say("downloaded: \(descriptor.documentState)")
        settle(.succeeded)
    }

    func instantClient(
        _ client: InstantClient, documentDescriptor descriptor: InstantDocumentDescriptor,
        didFailDownloadWithError error: InstantError
    ) {
        say("download failed: \(error.message)")
        settle(.failed)
    }

    func instantClient(_ client: InstantClient, didBeginSyncFor descriptor: InstantDocumentDescriptor) {
        say("sync started")
    }

    func instantClient(
        _ client: InstantClient, documentDescriptor descriptor: InstantDocumentDescriptor,
        didChangeSyncStateTo state: InstantDocumentState
    ) {
        say("  \(state)")
    }

    func instantClient(_ client: InstantClient, didFinishSyncFor descriptor: InstantDocumentDescriptor) {
        let count = (try? descriptor.editableDocument.annotations().count).map { ", \($0) annotations" } ?? ""
        say("sync finished: \(descriptor.documentState)\(count)")
        settle(.succeeded)
    }

    func instantClient(
        _ client: InstantClient, documentDescriptor descriptor: InstantDocumentDescriptor,
        didFailSyncWithError error: InstantError
    ) {
        say("sync failed: \(error.message)")
    }

    func instantClient(_ client: InstantClient, didFailAuthenticationFor descriptor: InstantDocumentDescriptor) {
        say("the server refused the JWT; run again with a new one")
        settle(.failed)
    }

    func instantClient(
        _ client: InstantClient, documentDescriptor descriptor: InstantDocumentDescriptor,
        didFinishReauthenticationWithJWT jwt: String
    ) {
        say("the server accepted the JWT")
        settle(.succeeded)
    }

    func instantClient(
        _ client: InstantClient, documentDescriptor descriptor: InstantDocumentDescriptor,
        didFailReauthenticationWithError error: InstantError
    ) {
        if error.isRetryable {
            say("the server is unreachable: \(error.message)")
            settle(.unreachable)
        } else {
            say("the server refused the JWT: \(error.message)")
            settle(.failed)
        }
    }
}
