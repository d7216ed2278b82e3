/// An actor of a benchmark that lets one task wait until its state meets a condition.
protocol ConditionWaiting: Actor {
    associatedtype Condition
    /// The task waiting, with its condition.
    var waiter: Waiter<Condition> { get set }
    /// Whether the actor's state meets `condition`.
    func isMet(_ condition: Condition) -> Bool
}

extension ConditionWaiting {
    /// Waits until the state meets `condition` (at once if it does).
    func wait(until condition: Condition) async {
        await withCheckedContinuation { continuation in
            waiter.wait(for: condition, continuation)
            resumeWaiter()
        }
    }

    /// Resumes the waiting task if its condition is met now; call it after every change of state.
    func resumeWaiter() {
        waiter.resume(if: isMet)
    }
}

/// The task waiting in a ``ConditionWaiting`` actor.
struct Waiter<Condition> {
    private var waiting: (condition: Condition, continuation: CheckedContinuation<Void, Never>)?

    /// Keeps `continuation` until ``resume(if:)`` finds `condition` met.
    mutating func wait(for condition: Condition, _ continuation: CheckedContinuation<Void, Never>) {
        waiting = (condition, continuation)
    }

    /// Resumes the waiting task when `isMet` says its condition holds.
    mutating func resume(if isMet: (Condition) -> Bool) {
        guard let waiting, isMet(waiting.condition) else { return }
        self.waiting = nil
        waiting.continuation.resume()
    }
}
