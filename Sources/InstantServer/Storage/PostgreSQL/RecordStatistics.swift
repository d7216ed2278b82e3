import Logging
import Synchronization

/// Keeps PostgreSQL's statistics of the `records` table in step with its growth, by running
/// `ANALYZE records` once a node has written enough rows since the last one.
///
/// The group transaction's statements are prepared, so PostgreSQL plans each once per connection,
/// from the statistics it has then, and plans again only when they change. A table that grew
/// from nothing before the autovacuum daemon analyzed it (it looks once a minute by default) is
/// planned as if it were nearly empty, and such plans read every record of a layer where one index
/// lookup would do (docs/BENCHMARKS.md measures what that cost). Analyzing as the table grows makes
/// PostgreSQL plan again with the statistics of a table of its real size.
///
/// A node analyzes after its first ``minimumRows`` rows, then each time it has written a
/// ``growthShare`` of the rows the table had at the last analysis (and at least ``minimumRows``),
/// one analysis at a time, in the background: a push never waits for one. `ANALYZE` reads a sample
/// of bounded size (30,000 rows at PostgreSQL's default statistics target), so its cost does not
/// grow with the table, and analyses grow rarer as it does.
///
/// Between analyses, the planner scales the row count it has by the table's pages as they are
/// now, so what an analysis brings is the shape of the data (how the records spread over layers),
/// which a growing table keeps. Analyzing each time the table doubles is enough for that; after
/// each tenth, as first written, the analyses took a seventh of PostgreSQL's processor time in
/// the benchmark's 1-change phases (24 of them in 40,000 pushes, 52 ms each; docs/BENCHMARKS.md).
final class RecordStatistics: Sendable {
    /// The fewest rows written between two analyses of a node.
    static let minimumRows = 1_000
    /// The share of the table's rows a node writes before it analyzes again: once the table has
    /// doubled.
    static let growthShare = 1.0

    private struct State {
        var written = 0
        var threshold = RecordStatistics.minimumRows
        var isAnalyzing = false
    }

    private let state = Mutex(State())
    private let logger: Logger
    /// Runs `ANALYZE records` and returns the number of rows PostgreSQL now estimates it has.
    private let analyze: @Sendable () async throws -> Double

    init(logger: Logger, analyze: @escaping @Sendable () async throws -> Double) {
        self.logger = logger
        self.analyze = analyze
    }

    /// Notes rows written to `records`; starts an analysis when they reach the threshold and
    /// none is running.
    func noteWritten(_ rows: Int) {
        let starts = state.withLock { state in
            state.written += rows
            guard state.written >= state.threshold, !state.isAnalyzing else { return false }
            state.isAnalyzing = true
            state.written = 0
            return true
        }
        guard starts else { return }
        Task { await runAnalysis() }
    }

    /// Whether an analysis is running (for tests).
    var isAnalyzing: Bool { state.withLock { $0.isAnalyzing } }

    private func runAnalysis() async {
        var tableRows: Double?
        do {
            tableRows = try await analyze()
        } catch {
            // The next threshold tries again; the plans stay as they are meanwhile.
            logger.notice(
                "Could not analyze the records table; PostgreSQL keeps its older statistics until its autovacuum does",
                metadata: ["error": "\(error)"])
        }
        state.withLock { state in
            state.isAnalyzing = false
            if let tableRows {
                state.threshold = max(Self.minimumRows, Int(tableRows * Self.growthShare))
            }
        }
    }
}
