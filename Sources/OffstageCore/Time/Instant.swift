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

    /// Creates an instant from seconds since the Unix epoch.
    public init(secondsSinceEpoch: Double) {
        self.nanosecondsSinceEpoch = Int64((secondsSinceEpoch * 1e9).rounded())
    }

    /// Seconds since the Unix epoch.
    public var secondsSinceEpoch: Double { Double(nanosecondsSinceEpoch) / 1e9 }

    /// The Unix epoch; a convenient origin for virtual clocks.
    public static let epoch = Instant(nanosecondsSinceEpoch: 0)

    public static func < (lhs: Instant, rhs: Instant) -> Bool {
        lhs.nanosecondsSinceEpoch < rhs.nanosecondsSinceEpoch
    }

    /// The instant `duration` after `instant`.
    public static func + (instant: Instant, duration: Duration) -> Instant {
        Instant(nanosecondsSinceEpoch: instant.nanosecondsSinceEpoch &+ duration.nanoseconds)
    }

    /// The instant `duration` before `instant`.
    public static func - (instant: Instant, duration: Duration) -> Instant {
        Instant(nanosecondsSinceEpoch: instant.nanosecondsSinceEpoch &- duration.nanoseconds)
    }

    /// The time from `rhs` to `lhs`.
    public static func - (lhs: Instant, rhs: Instant) -> Duration {
        .nanoseconds(lhs.nanosecondsSinceEpoch &- rhs.nanosecondsSinceEpoch)
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

    /// A duration from a floating-point number of seconds (settings are written in seconds).
    public static func seconds(double value: Double) -> Duration {
        .nanoseconds(Int64((value * 1e9).rounded()))
    }
}
