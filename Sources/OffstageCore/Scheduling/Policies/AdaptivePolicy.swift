import Foundation

/// Offstage's own policy: refresh an app when its content is about to be looked at, never on a fixed beat, and
/// share every device wake-up among all the work that can use it (SPEC SCH-5, SCH-7).
///
/// An app's content needs refreshing only if the user has opened the app since its last refresh ("dirty"): a second
/// refresh of content nobody has looked at makes no open fresher, only younger. So:
///
/// 1. **While the device is awake anyway** (screen on, or other background work running), a dirty app is refreshed
///    once it has been out of the foreground for `refreshAfterUse`: it costs CPU and radio, but no wake-up.
/// 2. **While it sleeps**, a dirty app is planned before its next expected open, learned as the hours of the day in
///    which the user usually opens it, and from how soon the user has been coming back to it: an app in use (its recent
///    opens a median gap of at most `busyGap` apart) is planned `lead` before its last open plus that gap; otherwise
///    `lead` before the next usual hour begins. An app with no usual hours yet is
///    planned `fallbackDelay` after the user left it, and no app later than that while its history covers fewer than
///    `learningDays` (the hours ahead have not been seen yet). Plans are anchored at fixed instants (when the user left, when a
///    usual hour begins), so they do not recede as time passes.
/// 3. **A clean app** is refreshed again `lead` before the first usual hour at which its content would be older than
///    `staleAfter`.
/// 4. **Every wake-up is shared**: when one plan comes due, everything planned within `coalescingWindow` runs with it;
///    and while awake, everything planned within that window runs now instead of costing a wake-up later.
/// 5. **Results feed back**: each run in a row that found no new data or failed doubles a back-off from
///    `backoffBase` up to `backoffMax`; new data resets it. An app not opened for `dormantAfter` is refreshed at most
///    once per `dormantInterval`.
///
/// Processing requests are not about freshness: they run as soon as their conditions (idle, power) hold.
public struct AdaptivePolicy: SchedulingPolicy, Hashable, Codable {
    /// Refresh this long before the predicted open, in seconds. Default 900 (15 min).
    public var lead: Double = 900
    /// An hour is a usual one when its rate of opens is at least this share of the busiest hour's. Default 0.25.
    public var usualFraction: Double = 0.25
    /// … and at least this many opens per hour (one open at that hour every week is 1/7). Default 1/7.
    public var minimumUsualRate: Double = 1.0 / 7
    /// An app whose recent opens are at most this far apart (median) is in use: it is expected back after that gap.
    /// Default 3,600 (1 h).
    public var busyGap: Double = 3_600
    /// While awake, refresh a dirty app once it has been out of the foreground this long. Default 120 s.
    public var refreshAfterUse: Double = 120
    /// A dirty app with no usual hours is refreshed this long after the user left it — and, while the usage history
    /// covers less than `learningDays`, no later than that. Default 10,800 (3 h).
    public var fallbackDelay: Double = 10_800
    /// Days of usage history below which the usual hours ahead are not yet trusted alone. Default 2.
    public var learningDays: Double = 2
    /// A clean app whose content would be older than this at its predicted open is refreshed again. Default 6 h.
    public var staleAfter: Double = 21_600
    /// Work planned within this window joins a wake-up, or runs now while awake. Default 3,600 (1 h).
    public var coalescingWindow: Double = 3_600
    /// Back-off after the first unproductive run, doubling per run in a row. Default 1,800 (30 min).
    public var backoffBase: Double = 1_800
    /// Longest back-off. Default 28,800 (8 h).
    public var backoffMax: Double = 28_800
    /// An app not opened for this long is dormant. Default 604,800 (7 days).
    public var dormantAfter: Double = 604_800
    /// A dormant app is refreshed at most this often. Default 86,400 (a day).
    public var dormantInterval: Double = 86_400

    /// The defaults.
    public init() {}

    public var name: String { "adaptive" }

    public mutating func decide(_ context: SchedulingContext) -> SchedulingDecision {
        var decision = SchedulingDecision()
        let now = context.now
        let window = Duration.seconds(double: coalescingWindow)
        var targets: [(key: TaskKey, target: Target)] = []
        for candidate in context.candidates {
            if candidate.request.kind == .processing {
                decision.run.append(candidate.key)
                continue
            }
            guard let target = target(for: candidate, context) else {
                decision.planned[candidate.key] = PlannedRun(
                    at: nil, reason: "content is up to date: not opened since its last refresh")
                continue
            }
            targets.append((candidate.key, target))
        }
        // A wake-up is paid for by the earliest due plan; everything planned within the window shares it. While the
        // device is awake, nothing is paid for at all.
        let due = context.awake || targets.contains { $0.target.at <= now }
        for (key, target) in targets {
            if target.at <= now || (due && target.at <= now + window && target.notBefore <= now) {
                decision.run.append(key)
            } else {
                decision.plan(key, at: target.at, target.reason)
            }
        }
        return decision
    }

    /// When a request should run: the plan, the reason, and the earliest it may be pulled forward to (back-off).
    struct Target {
        var at: Instant
        var reason: String
        var notBefore: Instant
    }

    /// When the request should run, and why; nil when it need not run at all.
    func target(for candidate: SchedulingContext.Candidate, _ context: SchedulingContext) -> Target? {
        let now = context.now
        let usage = candidate.usage
        let results = candidate.results
        let lastRefresh = results.lastRefreshAt
        let dirty = lastRefresh == nil || usage.openedSince(lastRefresh)
        var notBefore = now
        var why: String?
        if let lastRun = results.lastRunAt {
            if results.unproductiveStreak > 0 {
                let delay = min(backoffBase * Double(1 << min(results.unproductiveStreak - 1, 20)), backoffMax)
                let until = lastRun + .seconds(double: delay)
                if until > notBefore {
                    notBefore = until
                    why = "backing off after \(results.unproductiveStreak) run(s) without new data"
                }
            }
            let lastSeen = usage.lastOpen ?? candidate.installedAt
            if (now - lastSeen).inSeconds > dormantAfter {
                let until = lastRun + .seconds(double: dormantInterval)
                if until > notBefore {
                    notBefore = until
                    why = "not opened for \(format((now - lastSeen).inSeconds / 86_400)) days: refreshed once a day"
                }
            }
        }
        let clock = context.clock
        let hours = usage.usualHours(
            at: now, halfLifeDays: context.usageHalfLifeDays, fraction: usualFraction, minimumRate: minimumUsualRate)
        let leadTime = Duration.seconds(double: lead)
        var at: Instant
        var reason: String
        if dirty {
            if context.awake, notBefore <= now {
                // Awake anyway: refresh once the user has been away from the app a little while.
                let ready = max(now, usage.lastLeft.map { $0 + .seconds(double: refreshAfterUse) } ?? now)
                return Target(
                    at: ready, reason: "the device is awake and the app was opened since its last refresh",
                    notBefore: ready)
            }
            let left = usage.lastLeft ?? now
            if let gap = usage.typicalGap, gap.inSeconds <= busyGap, let opened = usage.lastOpen {
                // In use: the user has been coming back every `gap`; be ready a little before the next time.
                at = max(left, opened + gap - leadTime)
                reason = "opened every \(format(gap.inSeconds / 60)) min lately: next open expected around \((opened + gap).clockTime)"
            } else if hours.isEmpty {
                at = left + .seconds(double: fallbackDelay)
                reason = "opened since its last refresh; no usual time to open it yet"
            } else if let start = hours.starts(after: left, clock, limit: 1).first {
                at = max(left, start - leadTime)
                reason = "\(format(lead / 60)) min before the user usually opens it (from \(start.clockTime))"
            } else {
                at = left + .seconds(double: fallbackDelay)
                reason = "opened since its last refresh"
            }
            let cap = left + .seconds(double: fallbackDelay)
            if at > cap, usage.daysObserved(at: now, halfLifeDays: context.usageHalfLifeDays) < learningDays {
                at = cap
                reason = "opened since its last refresh; still learning when the user opens it"
            }
        } else {
            // Clean: refresh again only before a usual hour at which its content would be too old.
            guard let lastRefresh, !hours.isEmpty else { return nil }
            let stale = Duration.seconds(double: staleAfter)
            if hours.contains(now, clock), now - lastRefresh > stale {
                at = now
                reason = "content is \(format((now - lastRefresh).inSeconds / 3600)) h old in an hour the user usually opens it"
            } else if let start = hours.starts(after: now, clock).first(where: { $0 - lastRefresh > stale }) {
                at = start - leadTime
                reason = "content would be \(format((start - lastRefresh).inSeconds / 3600)) h old when the user usually opens it (from \(start.clockTime))"
            } else {
                return nil
            }
        }
        if at < notBefore, let why {
            return Target(at: notBefore, reason: why, notBefore: notBefore)
        }
        reason = at < now ? "due: " + reason : reason
        return Target(at: max(at, notBefore), reason: reason, notBefore: notBefore)
    }
}
