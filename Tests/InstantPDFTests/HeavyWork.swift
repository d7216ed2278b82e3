import Foundation
import InstantTesting
import Testing

/// Runs each test case of a test or suite on ``HeavyWorkExecutor``'s threads instead of Swift's
/// cooperative pool: for tests that read, write or check whole files synchronously for seconds
/// (the corpus, encryption, every kind of annotation), which would otherwise hold the pool that the
/// process's other tests, and the servers they start, need meanwhile.
struct HeavyWorkTrait: TestTrait, SuiteTrait, TestScoping {
    var isRecursive: Bool { true }

    func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(HeavyWorkExecutor.shared) { try await function() }
    }
}

extension Trait where Self == HeavyWorkTrait {
    /// Runs the test, or every test of the suite, on threads of its own (``HeavyWorkTrait``).
    static var heavyWork: Self { HeavyWorkTrait() }
}

@Suite("Heavy tests on threads of their own")
struct HeavyWorkTests {
    @Test(.heavyWork) func aHeavyTestRunsOnTheExecutorsThreads() {
        #expect(HeavyWorkExecutor.shared.runsTheCurrentThread)
    }

    @Test(.heavyWork) func aHeavyTestComesBackToThemAfterWaiting() async throws {
        try await Task.sleep(for: .milliseconds(1))
        #expect(HeavyWorkExecutor.shared.runsTheCurrentThread)
    }

    @Test func otherTestsStayOnTheCooperativePool() {
        #expect(!HeavyWorkExecutor.shared.runsTheCurrentThread)
    }
}
