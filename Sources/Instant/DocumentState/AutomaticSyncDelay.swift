import Foundation

extension TimeInterval {
    /// The value of `delayForSyncingLocalChanges` that turns automatic syncing of local changes
    /// off: changes are then sent only when `sync()` is called or a server change is announced
    /// while listening.
    public static let instantSyncingLocalChangesDisabled: TimeInterval = .infinity

    /// The default `delayForSyncingLocalChanges`: one second.
    public static let instantDefaultDelayForSyncingLocalChanges: TimeInterval = 1
}

/// How long after the last local edit an automatic sync cycle starts, if at all.
enum AutomaticSyncDelay: Sendable, Hashable {
    /// A sync cycle starts this long after the last local change.
    case after(Duration)
    /// Local changes are synced only on request.
    case disabled

    /// One second, the documented default.
    static let `default` = AutomaticSyncDelay.after(.seconds(1))

    /// Validates a `delayForSyncingLocalChanges` value: a positive finite number of seconds, or
    /// ``TimeInterval/instantSyncingLocalChangesDisabled``. Zero, negative values and NaN are refused.
    init(timeInterval: TimeInterval) throws(InstantError) {
        if timeInterval == .instantSyncingLocalChangesDisabled {
            self = .disabled
        } else if timeInterval.isFinite, timeInterval > 0 {
            // Past a billion seconds (about 31 years) a delay means "never" in practice; capping it
            // keeps the conversion to nanoseconds in range.
            let seconds = min(timeInterval, 1e9)
            self = .after(.nanoseconds(Int64((seconds * 1e9).rounded())).clampedToAtLeastOneNanosecond)
        } else {
            throw .invalidSyncDelay(timeInterval)
        }
    }

    /// The value as `delayForSyncingLocalChanges` reports it.
    var timeInterval: TimeInterval {
        switch self {
        case .disabled: .instantSyncingLocalChangesDisabled
        case .after(let duration): duration.timeInterval
        }
    }
}

extension Duration {
    /// The duration in seconds as a floating-point number.
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    fileprivate var clampedToAtLeastOneNanosecond: Duration {
        self < .nanoseconds(1) ? .nanoseconds(1) : self
    }
}
