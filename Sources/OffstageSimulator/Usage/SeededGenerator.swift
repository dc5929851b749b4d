import Foundation

/// A small, fast pseudo-random generator that is the same on every platform and Swift version: xoshiro256**
/// (Blackman and Vigna, "Scrambled linear pseudorandom number generators", ACM TOMS 2021), seeded through
/// SplitMix64 (Steele, Lea and Flood, OOPSLA 2014) as its authors recommend.
///
/// Everything random in the simulator draws from one of these, so a seed fixes a run completely. The draws below
/// use only integer arithmetic and `Double` operations with exact IEEE results, never the standard library's
/// `random(in:)` (whose algorithm may change between releases).
public struct SeededGenerator: RandomNumberGenerator, Hashable, Sendable {
    private var s0: UInt64
    private var s1: UInt64
    private var s2: UInt64
    private var s3: UInt64

    /// A generator whose whole sequence is fixed by `seed`.
    public init(seed: UInt64) {
        var splitMix = seed
        func next() -> UInt64 {
            splitMix &+= 0x9E37_79B9_7F4A_7C15
            var z = splitMix
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s0 = next()
        s1 = next()
        s2 = next()
        s3 = next()
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        let result = rotate(s1 &* 5, 7) &* 9
        let shifted = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= shifted
        s3 = rotate(s3, 45)
        return result
    }

    private func rotate(_ value: UInt64, _ count: UInt64) -> UInt64 { (value << count) | (value >> (64 - count)) }

    /// A uniform draw from `[0, 1)` with 53 random bits.
    public mutating func unit() -> Double { Double(next() >> 11) * 0x1p-53 }

    /// A uniform draw from `[lower, upper)`.
    public mutating func uniform(_ lower: Double, _ upper: Double) -> Double { lower + (upper - lower) * unit() }

    /// A uniform integer from `0..<count` (`count` must be positive), without modulo bias.
    public mutating func index(below count: Int) -> Int {
        precondition(count > 0, "no index below \(count)")
        let bound = UInt64(count)
        let threshold = (0 &- bound) % bound
        while true {
            let value = next()
            let (high, low) = bound.multipliedFullWidth(by: value)
            if low >= threshold { return Int(high) }
        }
    }

    /// True with probability `probability`.
    public mutating func chance(_ probability: Double) -> Bool { unit() < probability }

    /// A standard normal draw (Box–Muller).
    public mutating func standardNormal() -> Double {
        let u1 = 1 - unit()  // in (0, 1]: the logarithm stays finite
        let u2 = unit()
        return (-2 * Self.naturalLog(u1)).squareRoot() * Self.cosine(2 * Double.pi * u2)
    }

    /// A normal draw with the given mean and standard deviation.
    public mutating func normal(mean: Double, standardDeviation: Double) -> Double {
        mean + standardDeviation * standardNormal()
    }

    /// A log-normal draw: `exp(N(mu, sigma))`.
    public mutating func logNormal(mu: Double, sigma: Double) -> Double {
        Self.exponential(mu + sigma * standardNormal())
    }

    /// A Poisson draw with the given mean (Knuth's method, in chunks of at most 30 so `exp(-mean)` stays exact).
    public mutating func poisson(mean: Double) -> Int {
        precondition(mean >= 0, "a Poisson mean is not negative")
        var remaining = mean
        var total = 0
        while remaining > 0 {
            let chunk = min(remaining, 30)
            remaining -= chunk
            let limit = Self.exponential(-chunk)
            var product = unit()
            while product > limit {
                total += 1
                product *= unit()
            }
        }
        return total
    }

    /// An index drawn with probability proportional to `weights` (which must not all be zero).
    public mutating func pick(weights: [Double]) -> Int {
        let total = weights.reduce(0, +)
        precondition(total > 0, "weights must not all be zero")
        var target = unit() * total
        for (index, weight) in weights.enumerated() {
            target -= weight
            if target < 0 { return index }
        }
        return weights.lastIndex { $0 > 0 }!
    }

    // Elementary functions from the C library (Foundation re-exports it on Linux and Darwin).
    static func naturalLog(_ value: Double) -> Double { Foundation.log(value) }
    static func exponential(_ value: Double) -> Double { Foundation.exp(value) }
    static func cosine(_ value: Double) -> Double { Foundation.cos(value) }
}
