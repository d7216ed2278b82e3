extension InstantDocumentDescriptor {
    /// The descriptor's ``documentState``, first as it is now, then each state it enters, in order.
    ///
    /// The sequence ends after ``InstantDocumentState/invalid`` (the descriptor cannot be used any
    /// more); got from an invalid descriptor, it yields `invalid` and ends. Every state is kept
    /// until the consumer takes it (the buffer is unbounded), so a slow consumer sees each state a
    /// sync cycle went through; stop iterating (or cancel the iterating task) to end it sooner.
    ///
    /// ```swift
    /// for await state in descriptor.stateUpdates {
    ///     statusLabel = state.description
    /// }
    /// ```
    public var stateUpdates: AsyncStream<InstantDocumentState> {
        lock.withLock { stateBroadcast.stream(startingWith: machine.state) }
    }

    /// The descriptor's events from now on: the same, in the same order, as its notifications and
    /// its client's delegate calls.
    ///
    /// The sequence ends when the descriptor becomes invalid, after the events its invalidation
    /// caused (an interrupted download or sync cycle reports its failure first); got from an
    /// invalid descriptor, it ends at once. Events are kept until the consumer takes them (the
    /// buffer is unbounded).
    ///
    /// ```swift
    /// for await event in descriptor.events {
    ///     if case .didFailAuthentication = event { try descriptor.reauthenticate(withJWT: await newJWT()) }
    /// }
    /// ```
    public var events: AsyncStream<InstantDescriptorEvent> {
        if documentState == .invalid {
            return AsyncStream { $0.finish() }
        }
        return eventBroadcast.stream()
    }
}
