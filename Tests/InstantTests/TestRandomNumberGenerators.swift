/// A random source that always yields the same word: `0` makes every jitter fraction 0,
/// `.max` makes it as close to 1 as a `Double` allows.
struct ConstantRandomNumberGenerator: RandomNumberGenerator, Sendable {
    var value: UInt64

    mutating func next() -> UInt64 { value }
}

/// SplitMix64 (Steele, Lea and Flood 2014): a small, seedable, well-distributed generator, so
/// tests can draw many jitter values reproducibly.
struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
