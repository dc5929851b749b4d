import OffstageCore

/// Quantiles of a sample by linear interpolation between the two nearest ranks (Hyndman and Fan's type 7, the
/// default of R and NumPy): for `n` sorted values the quantile `q` sits at position `q × (n − 1)`.
///
/// So the median of `[1, 2, 3, 4]` is 2.5, and its 90th percentile is 3.7.
public enum Quantile {
    /// The `q` quantile (0…1) of `sorted` values, which must be sorted ascending and not empty.
    public static func of(sorted values: [Double], _ q: Double) -> Double {
        precondition(!values.isEmpty, "no quantile of an empty sample")
        precondition((0...1).contains(q), "a quantile is between 0 and 1")
        let position = q * Double(values.count - 1)
        let lower = Int(position.rounded(.down))
        let upper = min(lower + 1, values.count - 1)
        let fraction = position - Double(lower)
        return values[lower] + (values[upper] - values[lower]) * fraction
    }

    /// The `q` quantile (0…1) of `sorted` durations, which must be sorted ascending and not empty; exact to the
    /// nanosecond when the position falls on a rank.
    public static func of(sorted values: [Duration], _ q: Double) -> Duration {
        precondition(!values.isEmpty, "no quantile of an empty sample")
        precondition((0...1).contains(q), "a quantile is between 0 and 1")
        let position = q * Double(values.count - 1)
        let lower = Int(position.rounded(.down))
        let upper = min(lower + 1, values.count - 1)
        let fraction = position - Double(lower)
        let low = values[lower].nanoseconds
        let high = values[upper].nanoseconds
        return .nanoseconds(low + Int64((Double(high - low) * fraction).rounded()))
    }
}
