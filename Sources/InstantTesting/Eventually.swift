import Foundation

/// Polls `condition` until it holds or `seconds` have passed (long: a whole test suite may be
/// busy), for tests that wait for something another thread does; returns whether it held.
public func eventually(_ seconds: Double = 30, _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(10))
    }
    return try await condition()
}
