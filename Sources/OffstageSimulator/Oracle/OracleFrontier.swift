import OffstageCore

/// The oracle's frontier for a trace (SPEC §11, SCH-7): for every number `k` of device wake-ups, the most opens a
/// plan that knows every future open can make fresh — so a policy can be compared with the oracle *at equal
/// freshness* rather than with one oracle point.
///
/// **Definitions** (those of ``FreshnessMeter``, ``EnergyMeter`` and ``PolicyEvaluation/evaluateOracle``):
/// - The **window** of an open at `t` is the set of instants where a refresh of its app may start:
///   `[e, t − d']`, where `e` is the end of the app's previous session (the trace's start for its first open),
///   `d' = d + slack` (the refresh's run time `d` plus the one second of slack the oracle plans with) and the
///   horizon is unbounded. A refresh starting there completes after the previous open and by `t`: the open is
///   fresh. A refresh never starts while its app is in front.
/// - An open whose window is empty is a **missed window**: no policy that refreshes with a slack of one second can
///   make it fresh. Either the app was opened again less than `d'` after it left the front (a *re-open too soon*),
///   or it is a first open less than `d'` after the trace starts.
/// - An open whose window holds screen-on time is **free**: its refresh starts with the screen on and costs no
///   wake-up. The plan starts it at the latest screen-on instant `x` of the window with `x + d'` still before the
///   screen goes off, so the run ends with the screen on; only when the window has no such instant does it start
///   a second before the window's latest screen-on instant (or at its first, if that is later): the core may start
///   a run a few milliseconds late, and a refresh planned at the screen's last nanosecond would start asleep.
/// - The others lie wholly in screen-off time. Choosing `k` wake-up instants makes fresh those whose window holds
///   one: maximum coverage of intervals by `k` points, solved exactly for every `k` by ``IntervalStabbing``.
///
/// **What counts as a wake-up.** One chosen screen-off instant is one wake-up: every refresh whose window holds it
/// starts then. ``EnergyMeter`` counts a cluster of overlapping runs as one wake-up, so two instants less than `d`
/// apart would be one; on these windows that never happens in the frontier's plans (each chosen instant is a
/// window's end `t − d'`, and two such ends of opens in different screen-on spans are more than `d'` apart; within
/// one stretch of screen-off time every window starts at its first instant, so an optimal plan chooses one instant
/// there); the tests and the policy benchmark check it by metering the frontier's plans, directly and replayed
/// through the core as a ``PlannedPolicy``. Work started with the screen on does not carry refreshes past the lock:
/// a refresh started after the lock while such a run still goes on is a wake-up, for the frontier as for the meter
/// (decisions 0011, 0045).
public struct OracleFrontier: Sendable {
    /// One open's window.
    public struct Window: Hashable, Sendable {
        /// What the frontier can do for the open.
        public enum Kind: Hashable, Sendable {
            /// Fresh at no wake-up: the refresh starts at `at`, with the screen on.
            case free(at: Instant)
            /// Fresh only with a wake-up in `[earliest, latest]`, all screen-off time.
            case screenOff
            /// Re-opened less than `d'` after it left the front: no refresh fits.
            case reopenedTooSoon
            /// A first open less than `d'` after the trace starts.
            case tooEarly
        }

        /// The app's label.
        public var app: String
        /// The open.
        public var open: Instant
        /// The earliest start of a refresh (the end of the app's previous session, or the trace's start).
        public var earliest: Instant
        /// The latest start (`open − d'`); before `earliest` when the window is empty.
        public var latest: Instant
        /// What the frontier can do.
        public var kind: Kind
    }

    /// The trace's name.
    public let traceName: String
    /// Days of trace.
    public let days: Double
    /// How long one refresh runs (`d`).
    public let refreshDuration: Duration
    /// The slack added to it for windows (one second, as the oracle).
    public let slack: Duration
    /// Every open's window, in the trace's order of opens.
    public let windows: [Window]
    /// The maximum coverage of the screen-off windows.
    public let stabbing: IntervalStabbing
    /// The screen-off windows, in the order given to ``stabbing``.
    public let screenOffWindows: [Window]

    /// Computes the frontier of `trace` for refreshes of `refreshDuration` planned with `slack`.
    public init(_ trace: UsageTrace, refreshDuration: Duration = .seconds(10), slack: Duration = .seconds(1)) {
        traceName = trace.name
        days = trace.days
        self.refreshDuration = refreshDuration
        self.slack = slack
        let planned = refreshDuration + slack
        var windows: [Window] = []
        var lastSession: [String: AppSession] = [:]
        for session in trace.sessions {
            let earliest = lastSession[session.app]?.end ?? trace.start
            let latest = session.start - planned
            let kind: Window.Kind
            if latest < earliest {
                kind = lastSession[session.app] == nil ? .tooEarly : .reopenedTooSoon
            } else if let at = Self.freeStart(trace.screenOn, earliest, latest, planned) {
                kind = .free(at: at)
            } else {
                kind = .screenOff
            }
            windows.append(Window(app: session.app, open: session.start, earliest: earliest, latest: latest, kind: kind))
            lastSession[session.app] = session
        }
        self.windows = windows
        screenOffWindows = windows.filter { $0.kind == .screenOff }
        stabbing = IntervalStabbing(
            screenOffWindows.map {
                .init(start: $0.earliest.nanosecondsSinceEpoch, end: $0.latest.nanosecondsSinceEpoch)
            })
    }

    /// Where a free refresh starts: the latest screen-on instant `x` of `[earliest, latest]` whose run of `planned`
    /// ends with the screen still on; failing that, a second before the latest screen-on instant (not before the
    /// first); nil if the window holds none.
    static func freeStart(_ spans: [Span], _ earliest: Instant, _ latest: Instant, _ planned: Duration) -> Instant? {
        var low = 0
        var high = spans.count
        while low < high {
            let mid = (low + high) / 2
            if spans[mid].start <= latest { low = mid + 1 } else { high = mid }
        }
        var fallback: Instant?
        var index = low - 1
        while index >= 0, spans[index].end > earliest {
            let span = spans[index]
            let lower = max(earliest, span.start)
            let finishing = min(latest, span.end - planned)
            if finishing >= lower { return finishing }
            let lastOn = min(latest, span.end - .nanoseconds(1))
            if fallback == nil, lastOn >= lower {
                // A second before the last screen-on instant if the window allows (the core may start a run a few
                // milliseconds late, to launch the app), else its first screen-on instant.
                fallback = max(lower, lastOn - .seconds(1))
            }
            index -= 1
        }
        return fallback
    }

    /// All opens.
    public var opens: Int { windows.count }
    /// Opens fresh at no wake-up.
    public var freeOpens: Int { windows.count { if case .free = $0.kind { true } else { false } } }
    /// Opens re-opened less than `d'` after their app left the front.
    public var reopenedTooSoon: Int { windows.count { $0.kind == .reopenedTooSoon } }
    /// First opens less than `d'` after the trace's start.
    public var tooEarly: Int { windows.count { $0.kind == .tooEarly } }
    /// Opens no plan can make fresh (``reopenedTooSoon`` and ``tooEarly``).
    public var missedWindows: Int { reopenedTooSoon + tooEarly }
    /// Opens some plan can make fresh.
    public var reachableOpens: Int { opens - missedWindows }
    /// The fresh share every reachable open gives: the frontier's maximum.
    public var reachableShare: Double { opens == 0 ? 0 : Double(reachableOpens) / Double(opens) }
    /// The fewest wake-ups that make every reachable open fresh.
    public var wakeUpsForAllReachable: Int { stabbing.minimumPoints }

    /// The most fresh opens with at most `k` wake-ups.
    public func freshOpens(wakeUps k: Int) -> Int { freeOpens + stabbing.covered(points: k) }

    /// The frontier's fresh share with at most `k` wake-ups (of all opens).
    public func freshShare(wakeUps k: Int) -> Double { opens == 0 ? 0 : Double(freshOpens(wakeUps: k)) / Double(opens) }

    /// The fewest wake-ups that make at least `fresh` opens fresh; nil if more than ``reachableOpens``.
    public func wakeUps(forFreshOpens fresh: Int) -> Int? {
        guard fresh <= reachableOpens else { return nil }
        var low = 0
        var high = wakeUpsForAllReachable
        while low < high {
            let mid = (low + high) / 2
            if freshOpens(wakeUps: mid) >= fresh { high = mid } else { low = mid + 1 }
        }
        return low
    }

    /// SPEC §11's target read literally against the frontier: a policy with `fresh` fresh opens and `wakeUps`
    /// wake-ups must have at least `share` (90 %) of an oracle's fresh opens with at most `bound` (1.25×) that oracle's
    /// wake-ups. The oracles are the frontier's points `k = 0 …` ``wakeUpsForAllReachable``; the one that judges the
    /// policy most favourably is the one with the most wake-ups whose fresh opens the policy still has `share` of.
    /// Returns that oracle's wake-ups and whether the policy is within `bound` of them (a policy with no wake-up is
    /// within any bound).
    public func literalTarget(
        fresh: Int, wakeUps: Int, share: Double = 0.9, bound: Double = 1.25
    ) -> (oracleWakeUps: Int, met: Bool) {
        var low = 0
        var high = wakeUpsForAllReachable
        // The largest k with share × F(k) ≤ fresh (F is nondecreasing; F(0) may already be too many).
        guard share * Double(freshOpens(wakeUps: 0)) <= Double(fresh) else { return (0, false) }
        while low < high {
            let mid = (low + high + 1) / 2
            if share * Double(freshOpens(wakeUps: mid)) <= Double(fresh) { low = mid } else { high = mid - 1 }
        }
        return (low, Double(wakeUps) <= bound * Double(low))
    }

    /// The curve: `(k, fresh opens)` for `k = 0 …` ``wakeUpsForAllReachable``.
    public var curve: [(wakeUps: Int, freshOpens: Int)] {
        (0...wakeUpsForAllReachable).map { ($0, freshOpens(wakeUps: $0)) }
    }

    /// The numbers of wake-ups for which ``plan(wakeUps:)`` has a plan: the corners of the curve.
    public var plannedWakeUps: [Int] { stabbing.optimalPoints.keys.sorted() }

    /// A plan on the frontier with `k` wake-ups (one of ``plannedWakeUps``): each free open refreshed at its free
    /// start, each screen-off window holding a chosen instant refreshed at the latest chosen instant it holds. Nil
    /// for other `k`.
    public func plan(wakeUps k: Int) -> OraclePlan? {
        guard let points = stabbing.optimalPoints[k] else { return nil }
        var refreshes: [PlannedRefresh] = []
        var free = 0
        for window in windows {
            switch window.kind {
            case .free(let at):
                refreshes.append(PlannedRefresh(at: at, app: window.app))
                free += 1
            case .screenOff:
                let start = window.earliest.nanosecondsSinceEpoch
                let end = window.latest.nanosecondsSinceEpoch
                if let point = points.last(where: { $0 >= start && $0 <= end }) {
                    refreshes.append(PlannedRefresh(at: Instant(nanosecondsSinceEpoch: point), app: window.app))
                }
            case .reopenedTooSoon, .tooEarly:
                continue
            }
        }
        return OraclePlan(
            refreshes: refreshes.sorted(), wakeUps: points.map { Instant(nanosecondsSinceEpoch: $0) },
            freeRefreshes: free, opens: opens, missedWindows: missedWindows, refreshDuration: refreshDuration)
    }
}
