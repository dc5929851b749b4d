/// The baseline every measurement is compared with: each app on its own timer, started when it was installed,
/// firing every `interval` whatever the user does — what apps do when left to themselves.
public struct FixedIntervalPolicy: SchedulingPolicy, Hashable, Codable {
    /// Seconds between runs of one app. Default 900 (15 min).
    public var interval: Double

    /// Creates the policy.
    public init(interval: Double = 900) { self.interval = max(1, interval) }

    public var name: String { "fixed-interval" }

    public mutating func decide(_ context: SchedulingContext) -> SchedulingDecision {
        var decision = SchedulingDecision()
        let period = Duration.seconds(double: interval)
        for candidate in context.candidates {
            // The app's ticks are installedAt + k·interval; the next one after its last run is due.
            let origin = candidate.installedAt
            let last = candidate.results.lastRunAt ?? origin
            let elapsed = max(0, (last - origin).inSeconds)
            let next = origin + .seconds(double: (elapsed / interval).rounded(.down) * interval) + period
            if next <= context.now {
                decision.run.append(candidate.key)
            } else {
                decision.plan(candidate.key, at: next, "every \(format(interval / 60)) min since install")
            }
        }
        return decision
    }
}
