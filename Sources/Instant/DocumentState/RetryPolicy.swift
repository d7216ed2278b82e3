/// When to try a sync again after a network failure: exponential backoff with jitter and a
/// capped delay, and no end: an outage of any length is followed by a retry at most
/// ``maximumDelay`` after the server is back.
///
/// Attempt *n* (counting from 1) waits between half and all of
/// `min(maximumDelay, initialDelay × 2^(n−1))`, the exact point chosen by a random fraction so
/// that many clients cut off together do not come back in lockstep.
struct RetryPolicy: Sendable, Hashable {
    /// The upper bound of the first retry's delay.
    var initialDelay: Duration
    /// The largest delay ever waited.
    var maximumDelay: Duration

    init(initialDelay: Duration = .seconds(1), maximumDelay: Duration = .seconds(60)) {
        self.initialDelay = max(initialDelay, .zero)
        self.maximumDelay = max(maximumDelay, self.initialDelay)
    }

    /// The documented default: 1 s doubling up to 60 s.
    static let `default` = RetryPolicy()

    /// The delay before retry number `attempt` (1 for the first retry).
    /// - Parameter randomFraction: A value in `0..<1` from the injected random source; it is
    ///   clamped into that range.
    func delay(beforeAttempt attempt: Int, randomFraction: Double) -> Duration {
        let ceiling = ceilingDelay(beforeAttempt: attempt)
        let fraction = randomFraction.isFinite ? min(max(randomFraction, 0), 1) : 0
        return ceiling / 2 + (ceiling / 2) * fraction
    }

    /// The upper bound of the delay before retry number `attempt`, before jitter.
    func ceilingDelay(beforeAttempt attempt: Int) -> Duration {
        var ceiling = initialDelay
        var doublings = max(attempt, 1) - 1
        while doublings > 0, ceiling < maximumDelay {
            ceiling *= 2
            doublings -= 1
        }
        return min(ceiling, maximumDelay)
    }
}
