import Foundation

/// Generates ULIDs for new records: 48 bits of milliseconds and 80 random bits in Crockford base32,
/// increasing within one millisecond.
final class RecordIdentifierGenerator: @unchecked Sendable {
    private let lock = NSLock()
    private var lastMilliseconds: UInt64 = 0
    private var lastRandom: (UInt16, UInt64) = (0, 0)

    private static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)

    /// A new ULID string.
    func next(now: Date = Date()) -> String {
        let milliseconds = UInt64(max(0, now.timeIntervalSince1970 * 1000))
        let (time, high, low): (UInt64, UInt16, UInt64) = lock.withLock {
            if milliseconds <= lastMilliseconds {
                // Same (or earlier) millisecond: increment the random part to stay monotonic.
                var (high, low) = lastRandom
                low &+= 1
                if low == 0 { high &+= 1 }
                lastRandom = (high, low)
            } else {
                lastMilliseconds = milliseconds
                var generator = SystemRandomNumberGenerator()
                lastRandom = (UInt16.random(in: 0...UInt16.max, using: &generator), generator.next())
            }
            return (lastMilliseconds, lastRandom.0, lastRandom.1)
        }
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<6 { bytes[index] = UInt8(truncatingIfNeeded: time >> (8 * (5 - index))) }
        bytes[6] = UInt8(truncatingIfNeeded: high >> 8)
        bytes[7] = UInt8(truncatingIfNeeded: high)
        for index in 0..<8 { bytes[8 + index] = UInt8(truncatingIfNeeded: low >> (8 * (7 - index))) }
        // 128 bits → 26 base32 digits (the first digit carries 3 bits).
        var output = [UInt8](repeating: 0, count: 26)
        var value = bytes
        for position in stride(from: 25, through: 0, by: -1) {
            var remainder: UInt16 = 0
            for index in 0..<16 {
                let accumulator = (remainder << 8) | UInt16(value[index])
                value[index] = UInt8(accumulator / 32)
                remainder = accumulator % 32
            }
            output[position] = Self.alphabet[Int(remainder)]
        }
        return String(decoding: output, as: UTF8.self)
    }
}
