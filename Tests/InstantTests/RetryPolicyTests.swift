import Testing

@testable import Instant

@Suite("Retry backoff", .timeLimit(.minutes(10)))
struct RetryPolicyTests {
    @Test("The ceiling doubles from the initial delay up to the maximum")
    func ceilingGrowsAndCaps() {
        let policy = RetryPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(60))
        let ceilings = (1...9).map { policy.ceilingDelay(beforeAttempt: $0) }
        #expect(ceilings == [1, 2, 4, 8, 16, 32, 60, 60, 60].map { Duration.seconds($0) })
        #expect(policy.ceilingDelay(beforeAttempt: Int.max) == .seconds(60))
        #expect(policy.ceilingDelay(beforeAttempt: 0) == .seconds(1))
    }

    @Test("Jittered delays stay between half the ceiling and the ceiling")
    func jitterStaysInRange() {
        let policy = RetryPolicy.default
        var generator = SplitMix64(seed: 2024)
        var seen = Set<Duration>()
        for attempt in 1...12 {
            let ceiling = policy.ceilingDelay(beforeAttempt: attempt)
            for _ in 0..<200 {
                let delay = policy.delay(
                    beforeAttempt: attempt, randomFraction: Double.random(in: 0..<1, using: &generator))
                #expect(delay >= ceiling / 2 && delay <= ceiling)
                seen.insert(delay)
            }
        }
        #expect(seen.count > 1000, "the jitter spreads delays out")
    }

    @Test("Out-of-range random fractions are clamped", arguments: [-3.0, 7.0, Double.nan, Double.infinity])
    func fractionsAreClamped(fraction: Double) {
        let delay = RetryPolicy.default.delay(beforeAttempt: 1, randomFraction: fraction)
        #expect(delay >= .milliseconds(500) && delay <= .seconds(1))
    }

    @Test("Nonsensical policies are normalised")
    func normalisation() {
        let policy = RetryPolicy(initialDelay: .seconds(-5), maximumDelay: .seconds(-1))
        #expect(policy.initialDelay == .zero)
        #expect(policy.maximumDelay == .zero)
        #expect(policy.delay(beforeAttempt: 3, randomFraction: 0.5) == .zero)
    }
}
