import Foundation

/// Performs a state machine's actions one at a time, in the order they were enqueued, whichever
/// threads deliver the machine's events.
///
/// The owner enqueues the actions an event returned in the same critical section in which it fed
/// the machine, so the queue's order is the machine's order, then calls ``run(through:_:)``:
/// - The first thread to run becomes the runner and performs queued actions until none is left.
/// - An action that feeds the machine again from the runner's thread (an outcome known at once)
///   enqueues behind what is already queued; the same runner performs it after them.
/// - Any other thread waits until the runner has performed its actions, so an API call returns
///   with its effects done, as when it runs alone.
///
/// Actions must not wait for another thread that delivers events to the same machine.
final class SerialActionExecutor<Action: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var pending: [Action] = []
    /// Index in `pending` of the next action to perform.
    private var next = 0
    /// How many actions were ever enqueued; the ticket of an action is its position in that count.
    private var enqueued: UInt64 = 0
    /// How many actions were performed.
    private var performed: UInt64 = 0
    /// The thread performing actions, if any.
    private var runner: pthread_t?

    /// Appends actions to the queue.
    /// - Returns: The ticket to pass to ``run(through:_:)``: the count of actions enqueued so far.
    func enqueue(_ actions: [Action]) -> UInt64 {
        condition.withLock {
            pending += actions
            enqueued += UInt64(actions.count)
            return enqueued
        }
    }

    /// Returns once every action up to `ticket` was performed, performing queued actions with
    /// `perform` on this thread when no other thread does; on the runner's own thread it returns at
    /// once (the runner gets to them).
    func run(through ticket: UInt64, _ perform: (Action) -> Void) {
        condition.lock()
        defer { condition.unlock() }
        let thisThread = pthread_self()
        if let runner, pthread_equal(runner, thisThread) != 0 { return }
        while runner != nil, performed < ticket { condition.wait() }
        guard performed < ticket else { return }
        runner = thisThread
        while next < pending.count {
            let action = pending[next]
            next += 1
            condition.unlock()
            perform(action)
            condition.lock()
            performed += 1
            condition.broadcast()
        }
        pending.removeAll(keepingCapacity: true)
        next = 0
        runner = nil
        condition.broadcast()
    }
}
