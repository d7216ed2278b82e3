import Foundation
import HummingbirdTesting
import InstantJSON
import InstantPDF
import InstantTesting
import Testing

@testable import InstantServer

/// Uploads and exports run on the PDF worker threads, not on the threads that answer every other
/// request, and a full queue answers 503 (issue 13, finding 6). Jobs that hold a worker until the
/// test releases them stand for long PDF work, so that nothing depends on timing.
@Suite("PDF work pool", .timeLimit(.minutes(10)))
struct PDFWorkPoolTests {
    /// While the only worker is busy and an export waits for it, `/healthcheck` and sync answer;
    /// one more export or upload gets 503 with `Retry-After` and a reason naming the options.
    @Test func busyWorkersLeaveOtherRequestsAnswered() async throws {
        let fixture = try await SyncFixture()
        defer { fixture.directory.remove() }
        let pool = PDFWorkPool(workers: 1, queueLimit: 1)
        var harness = fixture.harness
        harness.pdfWork = pool
        try await harness.run { client in
            let id = try await client.upload(TestPDF.make(pageCount: 1))
            let token = try await fixture.token(id)
            let gate = DispatchSemaphore(value: 0)
            let held = Task { try await pool.perform { gate.wait() } }
            #expect(try await eventually { pool.runningJobs == 1 })
            // On a connection of its own: the test client waits for one answer at a time.
            let port = try #require(client.client.port)
            // Its answer waits for the test to release the worker, which on a machine busy with
            // the browser tests can take longer than the client's default 15 s read timeout.
            let export = Task {
                try await TestClient.withClient(
                    host: "localhost", port: port, configuration: .init(timeout: .seconds(300))
                ) { other in
                    try await other.get(
                        "/api/documents/\(id)/pdf",
                        headers: [.authorization: "Token token=\"\(ServerHarness.apiToken)\""])
                }
            }
            #expect(try await eventually { pool.waitingJobs == 1 })

            #expect(try await client.request(.get, "/healthcheck").status == .ok)
            let sync = SyncClient(client, documentID: id, token: token, clientID: "client-1")
            #expect(try await sync.sync([put("note-1", noteContent(id: "note-1"))]).status == .ok)

            let refusedExport = try await client.request(.get, "/api/documents/\(id)/pdf")
            #expect(refusedExport.status == .serviceUnavailable)
            #expect(refusedExport.headers[.retryAfter] == "\(PDFWorkPool.retryAfterSeconds)")
            let reason = try #require(refusedExport.reason)
            #expect(reason.contains("--pdf-workers (PDF_WORKERS)"))
            #expect(reason.contains("--pdf-queue-limit (PDF_QUEUE_LIMIT)"))
            let refusedUpload = try await client.request(
                .post, "/api/documents", headers: [.contentType: "application/pdf"], body: TestPDF.make(pageCount: 1))
            #expect(refusedUpload.status == .serviceUnavailable)

            gate.signal()
            try await held.value
            let exported = try await export.value
            #expect(exported.status == .ok)
            let body = try #require(exported.body)
            #expect(try PDFDocument(data: Data(body.readableBytesView)).pageCount == 1)
            // The queue has room again.
            #expect(try await client.request(.get, "/api/documents/\(id)/pdf").status == .ok)
        }
    }

    /// A job whose request goes away while it waits is dropped, never run.
    @Test func cancelledWaitingJobsNeverRun() async throws {
        let pool = PDFWorkPool(workers: 1, queueLimit: 1)
        let gate = DispatchSemaphore(value: 0)
        let held = Task { try await pool.perform { gate.wait() } }
        // Long waits: the tasks start on Swift's cooperative threads, which a busy suite may hold.
        #expect(try await eventually(120) { pool.runningJobs == 1 })
        let ran = Flag()
        let waiting = Task { try await pool.perform { ran.set() } }
        #expect(try await eventually(120) { pool.waitingJobs == 1 })
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(pool.waitingJobs == 0)
        gate.signal()
        try await held.value
        #expect(try await pool.perform { 42 } == 42)
        #expect(!ran.isSet)
        pool.stop()
    }
}

/// A flag set from any thread.
private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    func set() {
        lock.lock()
        value = true
        lock.unlock()
    }

    var isSet: Bool {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}
