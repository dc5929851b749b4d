import OffstageCore

/// An oracle's refresh plan for a trace, with what it costs.
public struct OraclePlan: Hashable, Sendable {
    /// The planned refreshes, sorted by time then app: at most one per open.
    public var refreshes: [PlannedRefresh]
    /// The instants at which the plan wakes the device, sorted; each refreshes every app whose window holds it.
    public var wakeUps: [Instant]
    /// Refreshes that start while the screen is on (no wake-up).
    public var freeRefreshes: Int
    /// The opens in the trace.
    public var opens: Int
    /// Opens no background refresh can make fresh: their window is empty, or holds only the app's own foreground
    /// time.
    public var missedWindows: Int
    /// How long one refresh runs.
    public var refreshDuration: Duration

    /// Creates a plan.
    public init(
        refreshes: [PlannedRefresh], wakeUps: [Instant], freeRefreshes: Int, opens: Int, missedWindows: Int,
        refreshDuration: Duration
    ) {
        self.refreshes = refreshes
        self.wakeUps = wakeUps
        self.freeRefreshes = freeRefreshes
        self.opens = opens
        self.missedWindows = missedWindows
        self.refreshDuration = refreshDuration
    }

    /// Each app's refreshes, start to completion, by label: the input of ``FreshnessMeter``.
    public var refreshSpans: [String: [Span]] {
        var result: [String: [Span]] = [:]
        for refresh in refreshes { result[refresh.app, default: []].append(Span(start: refresh.at, duration: refreshDuration)) }
        return result
    }

    /// The plan as background runs for ``EnergyMeter`` (warm launches by default).
    public func runs(usesNetwork: Bool = true, isColdLaunch: Bool = false) -> [BackgroundRun] {
        refreshes.map {
            BackgroundRun(
                app: $0.app, span: Span(start: $0.at, duration: refreshDuration), usesNetwork: usesNetwork,
                isColdLaunch: isColdLaunch)
        }
    }
}
