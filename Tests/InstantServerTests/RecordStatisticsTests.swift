import Foundation
import InstantTesting
import Logging
import Synchronization
import Testing

@testable import InstantServer

/// When a node analyzes the records table: after its first 1,000 rows, then once it has written
/// as many rows as the last analysis counted (the table doubled), one analysis at a time.
@Suite("Record statistics", .timeLimit(.minutes(10)))
struct RecordStatisticsTests {
    /// An `ANALYZE` that waits until the test lets it finish with a table size.
    final class Analyses: Sendable {
        private let state = Mutex<(started: Int, waiting: [CheckedContinuation<Double, any Error>])>((0, []))

        var started: Int { state.withLock { $0.started } }

        func analyze() async throws -> Double {
            try await withCheckedThrowingContinuation { continuation in
                state.withLock {
                    $0.started += 1
                    $0.waiting.append(continuation)
                }
            }
        }

        /// Ends the running analysis with the table's estimated size, or with an error.
        func finish(_ result: Result<Double, any Error>) {
            let continuation = state.withLock { $0.waiting.isEmpty ? nil : $0.waiting.removeFirst() }
            continuation?.resume(with: result)
        }
    }

    struct Failed: Error {}

    @Test func analysesFollowTheTablesGrowthOneAtATime() async throws {
        let analyses = Analyses()
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let statistics = RecordStatistics(logger: logger) { try await analyses.analyze() }

        statistics.noteWritten(RecordStatistics.minimumRows - 1)
        #expect(!statistics.isAnalyzing, "not before the first 1,000 rows")
        statistics.noteWritten(1)
        #expect(try await eventually { analyses.started == 1 })
        statistics.noteWritten(2_000)
        #expect(analyses.started == 1, "one analysis at a time")
        #expect(statistics.isAnalyzing)

        // The table has 50,000 rows: the next analysis comes after 50,000 more, counted from the
        // start of the one that just ended (the 2,000 written meanwhile count).
        analyses.finish(.success(50_000))
        #expect(try await eventually { !statistics.isAnalyzing })
        statistics.noteWritten(47_999)
        #expect(!statistics.isAnalyzing)
        statistics.noteWritten(1)
        #expect(try await eventually { analyses.started == 2 })

        // A failed analysis keeps the threshold; the next one is tried after as many rows again.
        analyses.finish(.failure(Failed()))
        #expect(try await eventually { !statistics.isAnalyzing })
        statistics.noteWritten(49_999)
        #expect(!statistics.isAnalyzing)
        statistics.noteWritten(1)
        #expect(try await eventually { analyses.started == 3 })

        // A small table's next analysis still waits for at least 1,000 rows.
        analyses.finish(.success(10))
        #expect(try await eventually { !statistics.isAnalyzing })
        statistics.noteWritten(RecordStatistics.minimumRows - 1)
        #expect(!statistics.isAnalyzing)
        statistics.noteWritten(1)
        #expect(try await eventually { analyses.started == 4 })
        analyses.finish(.success(10))
    }
}
