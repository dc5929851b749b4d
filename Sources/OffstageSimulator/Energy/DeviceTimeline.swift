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

    /// The runs in order of start (then end, then app).
    public var runsInOrder: [BackgroundRun] {
        runs.sorted { ($0.span.start, $0.span.end, $0.app) < ($1.span.start, $1.span.end, $1.app) }
    }

    /// One device wake-up: the run that woke the device, and the runs of its cluster from that one on (the wake-up
    /// paid for all of them).
    public struct WakeUp: Sendable {
        /// The first run of the cluster that started with the screen off.
        public var waking: BackgroundRun
        /// That run and the runs of its cluster that started after it, in order.
        public var runs: [BackgroundRun]
    }

    /// The device's wake-ups (definition: ``EnergyMeter``). Runs in order of start form clusters of overlapping runs;
    /// a cluster wakes the device once, at its first run that starts with the screen off, if any does.
    public var wakeUps: [WakeUp] {
        var result: [WakeUp] = []
        var busyUntil: Instant?
        var woken = false  // whether a run of the current cluster started with the screen off
        for run in runsInOrder {
            if let busy = busyUntil, run.span.start < busy {
                busyUntil = max(busy, run.span.end)
            } else {
                busyUntil = run.span.end
                woken = false
            }
            if woken {
                result[result.count - 1].runs.append(run)
            } else if !isScreenOn(at: run.span.start) {
                result.append(WakeUp(waking: run, runs: [run]))
                woken = true
            }
        }
        return result
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
