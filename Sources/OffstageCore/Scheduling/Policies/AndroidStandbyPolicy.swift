/// A model of Android's job scheduling, for comparison: app standby buckets by recency of use, and Doze.
///
/// After the Android documentation ("App Standby Buckets", developer.android.com/topic/performance/appstandby, and
/// "Power management resource limits", developer.android.com/topic/performance/power/power-details) and AOSP's
/// AppStandbyController and DeviceIdleController defaults, simplified:
/// - **Buckets** from the time since the user last opened the app: active (< `activeFor`), working set (< 24 h),
///   frequent (< 48 h), rare. A periodic job runs at most once per its bucket's period: 15 min (the minimum
///   periodic interval) for active, then 2 h, 8 h and 24 h — the deferrals Android 9's documentation gives.
/// - **Doze**: `dozeAfter` after the screen turns off (on battery), jobs run only in maintenance windows of
///   `maintenanceWindow`, the first one hour into Doze and then 2, 4 and at most 6 hours apart.
/// While charging, neither applies.
public struct AndroidStandbyPolicy: SchedulingPolicy, Hashable, Codable {
    /// The periodic job's period for an active app, in seconds. Default 900 (15 min).
    public var period: Double = 900
    /// How long after use an app stays in the active bucket. Default 3,600 (1 h).
    public var activeFor: Double = 3_600
    /// Screen off this long on battery enters Doze. Default 1,800 (30 min).
    public var dozeAfter: Double = 1_800
    /// How long a maintenance window stays open. Default 300 (5 min).
    public var maintenanceWindow: Double = 300

    /// The defaults.
    public init(period: Double = 900) { self.period = max(1, period) }

    public var name: String { "android-buckets" }

    /// The standby bucket of an app and its job period.
    func bucket(_ candidate: SchedulingContext.Candidate, now: Instant) -> (name: String, period: Double) {
        let used = candidate.usage.lastOpen ?? candidate.installedAt
        let idle = (now - used).inSeconds
        if idle < activeFor { return ("active", period) }
        if idle < 86_400 { return ("working set", max(period, 7_200)) }
        if idle < 172_800 { return ("frequent", max(period, 28_800)) }
        return ("rare", max(period, 86_400))
    }

    public mutating func decide(_ context: SchedulingContext) -> SchedulingDecision {
        var decision = SchedulingDecision()
        let now = context.now
        for candidate in context.candidates {
            let (bucket, gap) = bucket(candidate, now: now)
            let last = candidate.results.lastRunAt ?? candidate.installedAt
            let due = last + .seconds(double: gap)
            let start = max(due, now)
            let allowed = nextAllowed(from: start, context)
            if due <= now, allowed <= now {
                decision.run.append(candidate.key)
            } else {
                let inDoze = allowed > start ? ", deferred to a Doze maintenance window" : ""
                decision.plan(candidate.key, at: allowed, "\(bucket) bucket: once per \(format(gap / 60)) min\(inDoze)")
            }
        }
        return decision
    }

    /// The first instant at or after `instant` when Doze lets jobs run.
    func nextAllowed(from instant: Instant, _ context: SchedulingContext) -> Instant {
        guard context.locked, !context.charging, let since = context.lockedSince else { return instant }
        let dozeStart = since + .seconds(double: dozeAfter)
        guard instant >= dozeStart else { return instant }
        // Maintenance windows: 1 h into Doze, then 2, 4, 6, 6 … hours apart.
        var windowStart = dozeStart + .seconds(3_600)
        var gap = 7_200.0
        while true {
            let windowEnd = windowStart + .seconds(double: maintenanceWindow)
            if instant < windowStart { return windowStart }
            if instant < windowEnd { return instant }
            windowStart = windowStart + .seconds(double: gap)
            gap = min(gap * 2, 21_600)
        }
    }
}
