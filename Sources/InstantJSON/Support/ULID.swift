import Foundation

/// A ULID: the id of new records. 26 characters of Crockford base32, sortable by time: 48 bits of
/// milliseconds since 1970, then 80 random bits.
public struct ULID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The 26-character string.
    public let string: String

    /// Reads a ULID string (either case); `nil` if it is not 26 Crockford base32 characters.
    public init?(_ string: String) {
        let upper = string.uppercased()
        guard upper.utf8.count == 26, upper.utf8.allSatisfy({ ULID.decoding[Int($0)] != 0xFF }),
            let first = upper.utf8.first, ULID.decoding[Int(first)] <= 7
        else { return nil }
        self.string = upper
    }

    init(timestamp: UInt64, randomness: (high: UInt16, low: UInt64)) {
        var characters = [UInt8](repeating: 0, count: 26)
        var time = timestamp
        for index in stride(from: 9, through: 0, by: -1) {
            characters[index] = ULID.alphabet[Int(time & 31)]
            time >>= 5
        }
        // 80 bits of randomness as 16 characters: 16 high bits then 64 low bits.
        var low = randomness.low
        var high = UInt64(randomness.high)
        for index in stride(from: 25, through: 10, by: -1) {
            characters[index] = ULID.alphabet[Int(low & 31)]
            low = (low >> 5) | ((high & 31) << 59)
            high >>= 5
        }
        string = String(decoding: characters, as: UTF8.self)
    }

    /// The millisecond the ULID was made.
    public var date: Date {
        var time: UInt64 = 0
        for byte in string.utf8.prefix(10) { time = time << 5 | UInt64(ULID.decoding[Int(byte)]) }
        return Date(timeIntervalSince1970: Double(time) / 1000)
    }

    public var description: String { string }

    public static func < (lhs: ULID, rhs: ULID) -> Bool { lhs.string < rhs.string }

    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)
    static let decoding: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()
}

/// Makes ULIDs that increase strictly, also within one millisecond (the random part is
/// incremented), so ids made by one generator sort in the order they were made.
public final class ULIDGenerator: @unchecked Sendable {
    private let lock = NSLock()
    private let now: @Sendable () -> Date
    private let random: @Sendable () -> UInt64
    private var lastTimestamp: UInt64 = 0
    private var lastRandomness: (high: UInt16, low: UInt64) = (0, 0)

    /// A generator reading the given clock and source of random 64-bit words (the system's by default).
    public init(
        now: @escaping @Sendable () -> Date = { Date() },
        random: @escaping @Sendable () -> UInt64 = { UInt64.random(in: .min ... .max) }
    ) {
        self.now = now
        self.random = random
    }

    /// A process-wide generator on the system clock.
    public static let shared = ULIDGenerator()

    /// The next ULID.
    public func next() -> ULID {
        lock.lock()
        defer { lock.unlock() }
        let timestamp = UInt64(max(0, now().timeIntervalSince1970 * 1000))
        if timestamp <= lastTimestamp {
            // Same (or an earlier) millisecond: keep the last time and count up.
            let (low, overflow) = lastRandomness.low.addingReportingOverflow(1)
            lastRandomness = (overflow ? lastRandomness.high &+ 1 : lastRandomness.high, low)
        } else {
            lastTimestamp = timestamp
            lastRandomness = (UInt16(truncatingIfNeeded: random()), random())
        }
        return ULID(timestamp: lastTimestamp, randomness: lastRandomness)
    }
}
