import Foundation

/// Offstage's own policy: refresh an app when its content is about to be looked at, never on a fixed beat, and
/// share every device wake-up among all the work that can use it (SPEC SCH-5, SCH-7).
///
/// An app's content needs refreshing only if the user has opened the app since its last refresh ("dirty"): a second
/// refresh of content nobody has looked at makes no open fresher, only younger. So:
///
/// 1. **While the device is awake anyway** (screen on, or other background work running), a dirty app is refreshed
///    once it has been out of the foreground for `refreshAfterUse` (by default at once): it costs CPU and radio, but
///    no wake-up.
/// 2. **While it sleeps**, a dirty app is planned before its next expected open, learned as the hours of the day in
///    which the user usually opens it, and from how soon the user has been coming back to it: an app in use (its recent
///    opens a median gap of at most `busyGap` apart) is planned `lead` before its last open plus that gap; otherwise
///    `lead` before the next usual hour begins. The app the screen was locked on is stale only for one open — the next unlock
///    opening it first (a refresh at the unlock would finish too late for it) — so it is refreshed from the earliest
///    instant (`resumeDelay` after the lock, or the start of a later hour) from which the chance of that, learned from
///    the device's unlocks and the app's first opens per hour of the day, is at least `resumeThreshold`; a wake-up
///    planned later than the next unlock costs nothing. An app with no usual hours yet is
///    planned `fallbackDelay` after the user left it, and no app later than that while its history covers fewer than
///    `learningDays` (the hours ahead have not been seen yet). Plans are anchored at fixed instants (when the user left, when a
///    usual hour begins), so they do not recede as time passes.
/// 3. **A clean app** is refreshed again `lead` before the first usual hour at which its content would be older than
///    `staleAfter`, but only when the device is awake anyway or wakes for other work — its next open is fresh either
///    way — unless the content would be older than `staleWakeAfter` before an hour the user keeps to (`habitRate`):
///    the morning paper is refreshed before breakfast.
/// 4. **Every wake-up is shared**: when one plan comes due, everything planned within `coalescingWindow` runs with it;
///    and while awake, everything planned within that window runs now instead of costing a wake-up later.
/// 5. **Results feed back**: each run in a row that found no new data or failed doubles a back-off from
///    `backoffBase` up to `backoffMax`; new data resets it. An app not opened for `dormantAfter` is refreshed at most
///    once per `dormantInterval`. Both limit how often an app *wakes* the device; while it is awake anyway, a dirty
///    app is refreshed regardless, since that wakes nothing.
///
/// Processing requests are not about freshness: they run as soon as their conditions (idle, power) hold, with the same
/// back-off after runs that failed.
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
    /// The app left in front at the lock is refreshed while the device sleeps only from an instant at which the chance
    /// that the next unlock opens it first is at least this: the share of the wake-ups spent on it that serve an
    /// open. Default 0.4: on the tuning traces the lowest (freshest) value that keeps the policy within SPEC §11's
    /// bound (decision 0047).
    public var resumeThreshold: Double = 0.4
    /// The earliest that refresh runs after the lock, in seconds. Default 10.
    public var resumeDelay: Double = 10
    /// Unlocks that opened another app, added to every hour when the chance is estimated, so that little evidence
    /// gives a small chance. Default 1.
    public var firstOpenPrior: Double = 1
    /// While awake, refresh a dirty app once it has been out of the foreground this long. Default 0 (at once).
    public var refreshAfterUse: Double = 0
    /// A dirty app with no usual hours is refreshed this long after the user left it — and, while the usage history
    /// covers less than `learningDays`, no later than that. Default 10,800 (3 h).
    public var fallbackDelay: Double = 10_800
    /// Days of usage history below which the usual hours ahead are not yet trusted alone. Default 2.
    public var learningDays: Double = 2
    /// A clean app whose content would be older than this at its usual hour is refreshed again before it — when the
    /// device is awake anyway or wakes for other work. Default 6 h.
    public var staleAfter: Double = 21_600
    /// … and may wake the device for that alone only if its content would be older than this, … Default 43,200 (12 h).
    public var staleWakeAfter: Double = 43_200
    /// … and the user opens it at that hour at least this often (opens per hour-of-day per day: 0.5 is every other
    /// day). Default 0.5.
    public var habitRate: Double = 0.5
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

    /// The knobs, by the names a configuration gives them.
    public enum CodingKeys: String, CodingKey, CaseIterable {
        case lead, usualFraction, minimumUsualRate, busyGap, resumeThreshold, resumeDelay, firstOpenPrior
        case refreshAfterUse, fallbackDelay, learningDays, staleAfter, staleWakeAfter, habitRate, coalescingWindow
        case backoffBase, backoffMax, dormantAfter, dormantInterval
    }

    /// Decodes any subset of the knobs (the others keep their defaults). A knob that is not a finite number of at
    /// least 0, a share above 1 (`usualFraction`, `habitRate`), `backoffMax` below `backoffBase`, and a key that is no
    /// knob are refused, naming the knob.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let unknown = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue)
            .filter { CodingKeys(rawValue: $0) == nil }.sorted()
        if let first = unknown.first {
            throw DecodingError.dataCorrupted(.init(
                codingPath: decoder.codingPath + [AnyKey(stringValue: first)],
                debugDescription: "is not a knob of the adaptive policy (knobs: "
                    + CodingKeys.allCases.map(\.rawValue).joined(separator: ", ") + ")"))
        }
        // Knobs in seconds may be at most a century (a policy that waits longer never runs anything, and a longer
        // delay would overflow an instant); the others, counts and rates, as much.
        func knob(_ key: CodingKeys, _ value: inout Double, atMost limit: Double = CheckedNumber.longestDuration) throws {
            value = try container.decodeIfPresent(Double.self, forKey: key) ?? value
            do throws(NumberOutOfRange) {
                try CheckedNumber.finite(value, field: key.rawValue, in: 0 ... limit, unit: "units")
            } catch {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "must be from 0 to \(CheckedNumber.text(limit))")
            }
        }
        try knob(.lead, &lead)
        try knob(.usualFraction, &usualFraction, atMost: 1)
        try knob(.minimumUsualRate, &minimumUsualRate)
        try knob(.busyGap, &busyGap)
        try knob(.resumeThreshold, &resumeThreshold)
        try knob(.resumeDelay, &resumeDelay)
        try knob(.firstOpenPrior, &firstOpenPrior)
        try knob(.refreshAfterUse, &refreshAfterUse)
        try knob(.fallbackDelay, &fallbackDelay)
        try knob(.learningDays, &learningDays)
        try knob(.staleAfter, &staleAfter)
        try knob(.staleWakeAfter, &staleWakeAfter)
        try knob(.habitRate, &habitRate, atMost: 1)
        try knob(.coalescingWindow, &coalescingWindow)
        try knob(.backoffBase, &backoffBase)
        try knob(.backoffMax, &backoffMax)
        try knob(.dormantAfter, &dormantAfter)
        try knob(.dormantInterval, &dormantInterval)
        guard backoffMax >= backoffBase else {
            throw DecodingError.dataCorruptedError(
                forKey: .backoffMax, in: container, debugDescription: "must be at least backoffBase (\(backoffBase))")
        }
    }

    /// Any key of a JSON object, to find those that are no knob.
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public var name: String { "adaptive" }

    public mutating func decide(_ context: SchedulingContext) -> SchedulingDecision {
        var decision = SchedulingDecision()
        let now = context.now
        let window = Duration.seconds(double: coalescingWindow)
        var targets: [(key: TaskKey, target: Target)] = []
        for candidate in context.candidates {
            let plan =
                candidate.request.kind == .processing
                ? limited(Target(at: now, reason: "processing runs as soon as its conditions hold", notBefore: now), candidate, context)
                : plan(for: candidate, context)
            switch plan {
            case .at(let target): targets.append((candidate.key, target))
            case .wait(let why): decision.planned[candidate.key] = PlannedRun(at: nil, reason: why)
            }
        }
        // A wake-up is paid for by the earliest due plan that may wake the device; everything planned within the window
        // shares it. While the device is awake, nothing is paid for at all.
        let due = context.awake || targets.contains { $0.target.at <= now && $0.target.wakes }
        for (key, target) in targets {
            if target.at <= now && (due || target.wakes) {
                decision.runNow(key, target.reason)
            } else if due && target.at <= now + window && target.notBefore <= now {
                let how = context.awake ? "the device is awake" : "sharing a wake-up"
                decision.runNow(key, "\(how); planned for \(target.at.clockTime): \(target.reason)")
            } else if target.wakes || target.at > now {
                decision.plan(key, at: target.at, target.reason)
            } else {
                decision.planned[key] = PlannedRun(at: nil, reason: "waits for the device to be awake anyway: " + target.reason)
            }
        }
        return decision
    }
}
