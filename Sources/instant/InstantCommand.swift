import ArgumentParser
import InstantServer
import Logging
import NIOCore
import NIOPosix

/// The `instant` command line: runs the server and works with documents and Instant JSON files.
@main
struct InstantCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "instant",
        abstract: "OpenInstant: self-hosted real-time collaboration on PDF annotations.",
        subcommands: [
            ServeCommand.self, TokenCommand.self, UploadCommand.self, ExportCommand.self, ImportCommand.self,
            ConvertCommand.self, ValidateCommand.self, InspectCommand.self, SyncCommand.self,
        ]
    )

    /// Runs the command with Swift concurrency on the event loops that serve the connections
    /// (SwiftNIO's singleton group, which Hummingbird and the PostgreSQL client use): a request's
    /// work and its database queries then go on on the thread that received their answers,
    /// instead of hopping to Swift's own pool and back for every query. Heavy synchronous work has
    /// threads of its own (the PDF work pool, SQLite's queues), so it never holds an event loop.
    static func main() async {
        // On the main thread, before anything has started a task.
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        SQLiteBackend.configureProcess()
        LoggingSystem.bootstrap { LineLogHandler(label: $0) }
        await runAsRoot(Self.self)
    }
}

/// Parses the command line and runs the chosen command: `AsyncParsableCommand`'s `main(_:)`, which
/// a generic context picks over `ParsableCommand`'s synchronous one.
private func runAsRoot<Command: AsyncParsableCommand>(_: Command.Type) async {
    await Command.main(nil)
}
