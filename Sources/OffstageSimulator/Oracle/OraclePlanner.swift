import OffstageCore

/// Plans refreshes with knowledge of every future open: each open that can be made fresh is, with the fewest
/// device wake-ups, as late as possible.
///
/// The **window** of an open at `t` of an app whose previous open was at `p` (the trace's start for its first
/// open) is the set of refresh start times `[max(p, t − H), t − d]`, where `d` is the refresh duration and `H` the
/// freshness horizon (the knob): a refresh starting there completes after `p` and no later than `t`, and content
/// is at most `H` old when shown. A refresh never starts while the app itself is in the foreground, so the part
/// of the window inside the app's previous session is cut off. An open whose window is then empty is a **missed
/// window** and gets no refresh. Otherwise:
/// 1. If the window holds screen-on time, the refresh starts at the **latest** such moment (to the nanosecond):
///    it costs no wake-up, and being latest it leaves the content youngest.
/// 2. The remaining windows lie wholly in screen-off time. They are stabbed with the minimum number of instants
///    by the classic greedy: take windows by their end; if the last chosen instant lies in the window, the
///    refresh shares it; otherwise choose the window's end. Each chosen instant is one device wake-up that
///    refreshes every app whose window holds it. Choosing ends also minimises age.
///
/// The count of chosen instants is minimal (the greedy is optimal for interval stabbing). ``EnergyMeter`` may count
/// fewer wake-ups for the plan: runs of two instants less than `d` apart overlap and form one cluster.
public struct OraclePlanner: Sendable {
    /// How long one refresh runs (`d`, positive).
    public let refreshDuration: Duration
    /// The freshness horizon (`H`): how long before an open a refresh may start.
    public let horizon: Duration

    /// A planner; `refreshDuration` must be positive.
    public init(refreshDuration: Duration, horizon: Duration) {
        precondition(refreshDuration > .zero, "a refresh takes some time")
        self.refreshDuration = refreshDuration
        self.horizon = horizon
    }

    /// Plans the refreshes for `trace`.
    public func plan(_ trace: UsageTrace) -> OraclePlan {
        var refreshes: [PlannedRefresh] = []
        var free = 0
        var missed = 0
        var screenOffWindows: [(app: String, earliest: Instant, latest: Instant)] = []
        var bySession: [String: [AppSession]] = [:]
        for session in trace.sessions { bySession[session.app, default: []].append(session) }
        for app in bySession.keys.sorted() {
            var previous: AppSession?
            for session in bySession[app]! {
                defer { previous = session }
                let open = session.start
                let latest = open - refreshDuration
                var earliest = max(previous?.start ?? trace.start, open - horizon)
                if let previous { earliest = max(earliest, previous.end) }
                guard earliest <= latest else {
                    missed += 1
                    continue
                }
                if let moment = latestScreenOn(in: trace.screenOn, from: earliest, through: latest) {
                    refreshes.append(PlannedRefresh(at: moment, app: app))
                    free += 1
                } else {
                    screenOffWindows.append((app, earliest, latest))
                }
            }
        }
        var wakeUps: [Instant] = []
        let byEnd = screenOffWindows.sorted { ($0.latest, $0.earliest, $0.app) < ($1.latest, $1.earliest, $1.app) }
        for window in byEnd {
            if let last = wakeUps.last, last >= window.earliest {
                refreshes.append(PlannedRefresh(at: last, app: window.app))
            } else {
                wakeUps.append(window.latest)
                refreshes.append(PlannedRefresh(at: window.latest, app: window.app))
            }
        }
        return OraclePlan(
            refreshes: refreshes.sorted(), wakeUps: wakeUps, freeRefreshes: free, opens: trace.sessions.count,
            missedWindows: missed, refreshDuration: refreshDuration)
    }

    /// The latest instant in `[earliest, latest]` at which the screen is on, if any.
    private func latestScreenOn(in spans: [Span], from earliest: Instant, through latest: Instant) -> Instant? {
        // The last span starting at or before `latest`.
        var low = 0
        var high = spans.count
        while low < high {
            let mid = (low + high) / 2
            if spans[mid].start <= latest { low = mid + 1 } else { high = mid }
        }
        guard low > 0 else { return nil }
        let lastOn = spans[low - 1].end - .nanoseconds(1)
        guard lastOn >= earliest else { return nil }
        return min(latest, lastOn)
    }
}
