import ArgumentParser

/// `instant-bench`: the project's benchmarks. Run them in release mode:
/// `swift run -c release instant-bench <benchmark>`.
@main
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "instant-bench",
        abstract: "OpenInstant benchmarks (run with -c release).",
        subcommands: [
            JSONBenchmark.self, PDFBenchmark.self, PDFWriteBenchmark.self, SyncBenchmark.self, SDKBenchmark.self,
            HostileBenchmark.self, ViewerBenchmark.self, TextBenchmark.self,
        ]
    )
}
