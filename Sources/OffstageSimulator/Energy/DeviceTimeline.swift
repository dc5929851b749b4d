import OffstageCore

/// What a device did that costs background energy: when its screen was on, and the background work it ran.
public struct DeviceTimeline: Hashable, Sendable {
    /// The screen-on spans, sorted and disjoint.
    public var screenOn: [Span]
    /// The background runs, in any order.
    public var runs: [BackgroundRun]

    /// Creates a timeline.
    public init(screenOn: [Span], runs: [BackgroundRun]) {
        self.screenOn = screenOn
        self.runs = runs
    }

    /// The timeline of a usage trace's screen with the given runs.
    public init(trace: UsageTrace, runs: [BackgroundRun]) {
        self.init(screenOn: trace.screenOn, runs: runs)
    }

    /// Whether the screen is on at `instant`.
    public func isScreenOn(at instant: Instant) -> Bool {
        var low = 0
        var high = screenOn.count
        while low < high {
            let mid = (low + high) / 2
            if screenOn[mid].start <= instant { low = mid + 1 } else { high = mid }
        }
        return low > 0 && screenOn[low - 1].contains(instant)
    }
}
