import ArgumentParser

/// How `instant serve` reads a limit: its flag, else its environment variable, else the default.
/// Refusals name the flag or variable the bad value came from.
enum LimitOption {
    /// A whole number of at least `minimum` (a size or a count).
    static func count(
        _ flag: Int?, _ flagName: String, _ variable: String, _ environment: [String: String], minimum: Int = 1
    ) throws -> Int? {
        let given =
            try flag.map { ($0, flagName) }
            ?? environment[variable].map { text in
                guard let value = Int(text) else {
                    throw ValidationError("\(variable) '\(text)' is not a whole number.")
                }
                return (value, variable)
            }
        guard let (count, name) = given else { return nil }
        guard count >= minimum else {
            throw ValidationError("\(name) \(count) is too small: it must be at least \(minimum).")
        }
        return count
    }

    /// A number of seconds in `range`, as a duration.
    static func seconds(
        _ flag: Double?, _ flagName: String, _ variable: String, _ environment: [String: String],
        in range: ClosedRange<Double>
    ) throws -> Duration? {
        let given =
            try flag.map { ($0, flagName) }
            ?? environment[variable].map { text in
                guard let value = Double(text) else {
                    throw ValidationError("\(variable) '\(text)' is not a number of seconds.")
                }
                return (value, variable)
            }
        guard let (seconds, name) = given else { return nil }
        guard seconds.isFinite, range.contains(seconds) else {
            throw ValidationError(
                "\(name) \(seconds) is not a number of seconds from \(range.lowerBound) to \(range.upperBound).")
        }
        return .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }
}
