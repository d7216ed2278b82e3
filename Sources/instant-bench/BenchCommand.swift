import ArgumentParser
import InstantServer

/// `instant-bench`: the project's benchmarks. Run them in release mode:
/// `swift run -c release instant-bench <benchmark>`.
@main
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "instant-bench",
        abstract: "OpenInstant benchmarks (run with -c release).",
        subcommands: [
            JSONBenchmark.self, PDFBenchmark.self, PDFWriteBenchmark.self, SyncBenchmark.self, SDKBenchmark.self,
            HostileBenchmark.self, ViewerBenchmark.self, TextBenchmark.self, HTTPRequestBenchmark.self,
        ]
    )

    /// Sets SQLite up as `instant` does before anything opens a database, so that the raw commit
    /// rates the sync benchmark measures its server against have the server's settings.
    static func main() async {
        SQLiteBackend.configureProcess()
        await runBenchmark(Self.self)
    }
}

/// `AsyncParsableCommand`'s `main(_:)`, which a generic context picks over `ParsableCommand`'s
/// synchronous one.
private func runBenchmark<Command: AsyncParsableCommand>(_: Command.Type) async {
    await Command.main(nil)
}
