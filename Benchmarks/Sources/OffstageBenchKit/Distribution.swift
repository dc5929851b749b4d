/// Percentiles of a set of samples (nearest-rank), in the samples' own unit.
public struct Distribution: Sendable, Codable, Hashable {
    /// How many samples.
    public var count: Int
    /// The smallest sample.
    public var minimum: Double
    /// The median.
    public var p50: Double
    /// The 90th percentile.
    public var p90: Double
    /// The 99th percentile.
    public var p99: Double
    /// The largest sample.
    public var maximum: Double
    /// The mean.
    public var mean: Double

    /// Summarises `samples`; an empty set gives zeros.
    public init(_ samples: [Double]) {
        let sorted = samples.sorted()
        count = sorted.count
        func rank(_ fraction: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            // Nearest rank: the smallest sample with at least `fraction` of the samples at or below it.
            let index = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
            return sorted[min(max(index, 0), sorted.count - 1)]
        }
        minimum = sorted.first ?? 0
        p50 = rank(0.50)
        p90 = rank(0.90)
        p99 = rank(0.99)
        maximum = sorted.last ?? 0
        mean = sorted.isEmpty ? 0 : sorted.reduce(0, +) / Double(sorted.count)
    }

    /// Summarises integer samples.
    public init(_ samples: [UInt64]) {
        // A closure, not `map(Double.init)`: that reference may resolve to `init(bitPattern:)`.
        self.init(samples.map { Double($0) })
    }
}
