import OffstageCore

/// How close to the oracle's frontier a policy that does not know the future can come, read off a trace.
///
/// With the screen on every app the user leaves is refreshed at once, so while the device sleeps the only stale app
/// is the one left in front at the lock, and its next open needs a wake-up only when the user comes straight back to
/// it after unlocking (a *resume*: a screen-off window of ``OracleFrontier``). The frontier spends one wake-up per
/// resume it serves; a policy has to bet at each lock. A rule that bets on the app's identity — wake for the locks of
/// apps the user often comes straight back to — serves at best each app's resumes at that app's rate: the best such
/// rule, even knowing every app's rate in hindsight, wakes for the apps with the highest rates first.
/// ``wakeUps(forResumes:)`` is what it needs for a number of resumes; over the frontier's count for the same fresh
/// opens it is a ratio no identity-based policy can beat on that trace. Time of day and the length of the screen-off
/// stretch carry more information, so this is not a bound on every policy; it shows how much any bet must rely on.
///
/// Only stretches of screen-off time at least `d'` long count (a shorter one holds no window, and a rule that wakes
/// `d'` after the lock never pays for it); the lock's app is the one whose session ended last in the screen-on span
/// before it.
public struct ResumeCeiling: Sendable {
    /// One app's locks and resumes.
    public struct AppRate: Hashable, Sendable {
        /// The app's label.
        public var app: String
        /// Screen-off stretches (at least `d'` long) that began with the app in front.
        public var locks: Int
        /// How many of them ended with the user opening it straight away (a screen-off window of the frontier).
        public var resumes: Int
        /// `resumes ÷ locks`.
        public var rate: Double { locks == 0 ? 0 : Double(resumes) / Double(locks) }
    }

    /// Every app left in front at a lock, the highest rate first (ties: more resumes first).
    public let rates: [AppRate]

    /// Reads `trace` against its `frontier` (whose screen-off windows are the resumes).
    public init(_ trace: UsageTrace, frontier: OracleFrontier) {
        let minimum = frontier.refreshDuration + frontier.slack
        let spans = trace.screenOn
        let sessions = trace.sessions.sorted { $0.end < $1.end }
        var locks: [(at: Instant, app: String)] = []
        var next = 0
        for (index, span) in spans.enumerated() {
            let unlock = index + 1 < spans.count ? spans[index + 1].start : trace.end
            var front: AppSession?
            while next < sessions.count, sessions[next].end <= span.end {
                if sessions[next].end > span.start { front = sessions[next] }
                next += 1
            }
            guard let front, unlock - span.end >= minimum else { continue }
            locks.append((span.end, front.app))
        }
        var counts: [String: AppRate] = [:]
        for lock in locks { counts[lock.app, default: AppRate(app: lock.app, locks: 0, resumes: 0)].locks += 1 }
        let lockTimes = locks.map(\.at)
        for window in frontier.screenOffWindows {
            // The stretch the window lies in: the last lock at or before its start (no screen-on time in a window).
            var low = 0
            var high = lockTimes.count
            while low < high {
                let mid = (low + high) / 2
                if lockTimes[mid] <= window.earliest { low = mid + 1 } else { high = mid }
            }
            guard low > 0, locks[low - 1].app == window.app else { continue }
            counts[window.app]?.resumes += 1
        }
        rates = counts.values.sorted { ($0.rate, $0.resumes, $1.app) > ($1.rate, $1.resumes, $0.app) }
    }

    /// Resumes in all.
    public var resumes: Int { rates.reduce(0) { $0 + $1.resumes } }
    /// Locks in all (stretches at least `d'` long with an app in front).
    public var locks: Int { rates.reduce(0) { $0 + $1.locks } }

    /// The fewest wake-ups a rule that wakes for whole apps' locks needs to serve `resumes` of them, the apps with
    /// the highest rates first (the last app's locks taken in proportion); nil beyond every resume.
    public func wakeUps(forResumes resumes: Int) -> Double? {
        guard resumes > 0 else { return 0 }
        var served = 0
        var wakeUps = 0.0
        for rate in rates where rate.resumes > 0 {
            if served + rate.resumes >= resumes {
                return wakeUps + Double(resumes - served) / rate.rate
            }
            served += rate.resumes
            wakeUps += Double(rate.locks)
        }
        return nil
    }
}
