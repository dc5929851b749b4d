/// How many background pushes an app may still be woken for (SPEC NT-4): a bucket that holds at most `burst` wakes
/// and refills at `perHour`. A wake takes one; without one, the push waits until the bucket has one again.
public struct PushBudget: Hashable, Sendable, Codable {
    /// Wakes available at `at` (fractions count towards the next).
    public private(set) var available: Double
    /// When `available` was last brought up to date.
    public private(set) var at: Instant

    /// A full bucket at `now`.
    public init(full limits: Limits, at now: Instant) {
        available = Double(limits.burst)
        at = now
    }

    /// The budget's numbers (settings of the device).
    public struct Limits: Hashable, Sendable {
        /// Wakes regained per hour.
        public var perHour: Double
        /// Wakes the bucket holds at most.
        public var burst: Int

        /// Creates limits.
        public init(perHour: Double, burst: Int) {
            self.perHour = perHour
            self.burst = burst
        }
    }

    /// The bucket at `now`: refilled for the time since it was last read, never past `burst`.
    public mutating func refill(at now: Instant, _ limits: Limits) {
        guard now > at else { return }
        let gained = (now - at).inSeconds * limits.perHour / 3_600
        available = min(Double(limits.burst), available + gained)
        at = now
    }

    /// Takes one wake if there is one at `now`.
    public mutating func take(at now: Instant, _ limits: Limits) -> Bool {
        refill(at: now, limits)
        guard available >= 1 else { return false }
        available -= 1
        return true
    }

    /// When the bucket next holds one whole wake (`now` if it does already); nil if it never refills.
    public func nextWake(after now: Instant, _ limits: Limits) -> Instant? {
        var current = self
        current.refill(at: now, limits)
        if current.available >= 1 { return now }
        // A bucket that holds no whole wake, or never refills, never has one.
        guard limits.perHour > 0, limits.burst >= 1 else { return nil }
        let seconds = (1 - current.available) * 3_600 / limits.perHour
        // A rate so slow that the wake is a century away is as good as none (and would overflow an instant).
        guard seconds < CheckedNumber.longestDuration else { return nil }
        // Rounded up to the millisecond, so that at that instant the bucket really holds one; and, as the refill
        // there may still fall short of one by a rounding error (0.9999999999999999), a millisecond more until it
        // does: a timer armed for an instant at which no wake is found would fire again and again at it.
        var wake = now + .milliseconds(Int64((seconds * 1_000).rounded(.up)))
        while current.wakes(at: wake, limits) < 1 { wake = wake + .milliseconds(1) }
        return wake
    }

    /// Whole wakes available at `now`.
    public func wakes(at now: Instant, _ limits: Limits) -> Int {
        var current = self
        current.refill(at: now, limits)
        return Int(current.available)
    }
}
