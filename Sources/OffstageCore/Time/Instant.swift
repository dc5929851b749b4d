/// A point in wall-clock time, in nanoseconds since the Unix epoch.
///
/// The core never reads a clock: every input carries the `now` the shell observed, and every deadline the
/// core hands back is an `Instant`. Wall time (rather than a monotonic clock) is used because requests such
/// as "earliest begin date" and notification dates are wall dates that must survive daemon restarts.
public struct Instant: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// Nanoseconds since 1970-01-01T00:00:00Z.
    public var nanosecondsSinceEpoch: Int64

    /// Creates an instant from nanoseconds since the Unix epoch.
    public init(nanosecondsSinceEpoch: Int64) {
        self.nanosecondsSinceEpoch = nanosecondsSinceEpoch
    }

    /// Creates an instant from seconds since the Unix epoch, saturating: a value beyond what an instant holds
    /// (about 1678 to 2262) becomes the nearest instant it holds, and NaN the epoch. It never traps; a number a caller
    /// chose goes through ``CheckedNumber/instant(secondsSinceEpoch:field:in:)`` instead, which refuses it by name.
    public init(secondsSinceEpoch: Double) {
        self.nanosecondsSinceEpoch = Int64(saturating: secondsSinceEpoch * 1e9)
    }

    /// Seconds since the Unix epoch.
    public var secondsSinceEpoch: Double { Double(nanosecondsSinceEpoch) / 1e9 }

    /// The Unix epoch; a convenient origin for virtual clocks.
    public static let epoch = Instant(nanosecondsSinceEpoch: 0)

    public static func < (lhs: Instant, rhs: Instant) -> Bool {
        lhs.nanosecondsSinceEpoch < rhs.nanosecondsSinceEpoch
    }

    /// The instant `duration` after `instant`, saturating at the first and last instants (a deadline a year-long
    /// timeout puts past 2262 is the last instant, not one in 1678).
    public static func + (instant: Instant, duration: Duration) -> Instant {
        Instant(nanosecondsSinceEpoch: instant.nanosecondsSinceEpoch.saturatingAdd(duration.nanoseconds))
    }

    /// The instant `duration` before `instant`, saturating at the first and last instants.
    public static func - (instant: Instant, duration: Duration) -> Instant {
        Instant(nanosecondsSinceEpoch: instant.nanosecondsSinceEpoch.saturatingSubtract(duration.nanoseconds))
    }

    /// The time from `rhs` to `lhs`, saturating at the longest durations that fit in nanoseconds.
    public static func - (lhs: Instant, rhs: Instant) -> Duration {
        .nanoseconds(lhs.nanosecondsSinceEpoch.saturatingSubtract(rhs.nanosecondsSinceEpoch))
    }

    public var description: String { String(secondsSinceEpoch) }

    // Encoded as seconds since the epoch so JSON and SQL readers see a plain number.
    public init(from decoder: any Decoder) throws {
        self.init(secondsSinceEpoch: try decoder.singleValueContainer().decode(Double.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(secondsSinceEpoch)
    }
}

extension Duration {
    /// The whole duration in nanoseconds, saturating at the bounds of `Int64`.
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return scaled &+ attoseconds / 1_000_000_000
    }

    /// The duration in seconds, as a floating-point number.
    public var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// A duration from a floating-point number of seconds (settings are written in seconds), saturating at the
    /// longest durations that fit in nanoseconds (about 292 years), NaN as zero. It never traps; a number a caller chose
    /// goes through ``CheckedNumber/duration(seconds:field:in:)`` instead, which refuses it by name.
    public static func seconds(double value: Double) -> Duration {
        .nanoseconds(Int64(saturating: value * 1e9))
    }
}

extension Int64 {
    /// `value` rounded to the nearest integer, saturating at `Int64.min` and `Int64.max`; NaN is zero.
    /// The conversion for numbers that may be out of range, where `Int64(_:)` would trap.
    public init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= 9_223_372_036_854_775_807.0 {  // 2^63 as a Double: the first value past Int64.max
            self = .max
        } else if value <= -9_223_372_036_854_775_808.0 {
            self = .min
        } else {
            self = Int64(value.rounded())
        }
    }

    /// `self + other`, or the bound it passed.
    func saturatingAdd(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }

    /// `self - other`, or the bound it passed.
    func saturatingSubtract(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other < 0 ? .max : .min) : difference
    }
}
