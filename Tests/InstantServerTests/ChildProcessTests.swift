import Foundation
import InstantTesting
import Testing

/// The child processes the tests run (qpdf, pdftotext, PostgreSQL, `instant serve`, chromedriver)
/// start with `posix_spawn` (``SpawnedProcess``), not Foundation's `Process`, whose start can
/// crash on Linux.
@Suite("Child processes of the tests", .timeLimit(.minutes(10)))
struct ChildProcessTests {
    @Test func aProgramsStatusOutputAndEnvironmentComeBack() async throws {
        let (status, output) = try await ChildProcess.run(
            "sh", ["-c", "echo \"out $GREETING\"; echo err >&2; exit 3"], includingErrors: true,
            environment: ["GREETING": "hello"])
        #expect(status == 3)
        #expect(output.split(separator: "\n").sorted() == ["err", "out hello"])
        let (_, quiet) = try await ChildProcess.run("sh", ["-c", "echo err >&2"])
        #expect(quiet.isEmpty, "standard error goes nowhere unless asked for")
    }

    /// A descriptor of the test process (without close-on-exec) does not leak into a child: a
    /// child holding another child's output pipe would keep it from ever ending.
    @Test func aChildHasOnlyItsStandardDescriptors() async throws {
        let leaked = open("/dev/null", O_RDONLY)
        try #require(leaked > 2)
        defer { close(leaked) }
        let (status, output) = try await ChildProcess.run("sh", ["-c", "ls /proc/$$/fd"])
        #expect(status == 0)
        #expect(output.split(separator: "\n") == ["0", "1", "2"])
    }

    @Test func aStartedProgramStopsOnSIGTERM() async throws {
        let (child, output) = try await ChildProcess.start(
            "sh", ["-c", "echo ready; exec sleep 30"], readyWhen: "ready")
        #expect(output == "ready")
        #expect(child.isRunning)
        #expect(await child.stop(within: 10), "ended by SIGTERM rather than killed")
        #expect(!child.isRunning)
        #expect(!child.exited)
        #expect(child.terminationStatus == SIGTERM)
    }
}
