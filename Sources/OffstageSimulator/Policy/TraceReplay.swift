import OffstageCore

/// Replays a usage trace on the real core: the user's screen-ons, opens, closes and screen-offs drive the simulated
/// device, every app keeps a refresh request pending (resubmitting after each run, as apps do), and the policy under
/// test decides when refreshes run. What comes out is what the meters need: refreshes (start to completion) and background runs.
public struct TraceReplay: Sendable {
    /// How the simulated apps behave.
    public struct Options: Sendable {
        /// How long one refresh runs. Default 10 s.
        public var refreshDuration: Duration = .seconds(10)
        /// Each app finds new data with a probability drawn uniformly from this range. Default 0.3…0.9.
        public var newDataProbability: ClosedRange<Double> = 0.3...0.9
        /// Seeds the apps' results and install times.
        public var seed: UInt64 = 1
        /// Apps were installed at random instants during this long before the trace starts, so timers that start at
        /// install (the fixed-interval baseline) are not in step. Default one day.
        public var installSpread: Duration = .seconds(86_400)
        /// The phone's battery, charged every night; nil for a device on mains power (always charging).
        public var battery: VirtualBattery? = VirtualBattery()
        /// The core's settings (UTC is the trace's local time).
        public var configuration = CoreConfiguration()

        /// The defaults.
        public init() {}
    }

    /// What a replay produced.
    public struct Outcome: Sendable {
        /// The trace replayed.
        public var trace: UsageTrace
        /// Screen-on spans and every background run.
        public var timeline: DeviceTimeline
        /// Each app's refreshes that completed without failing, start to completion, by app label.
        public var refreshes: [String: [Span]]
    }

    /// The identifier every replayed app refreshes with.
    public static let identifier = "com.trace.refresh"

    /// The app id for a trace's app label.
    public static func appID(for label: String) -> AppID {
        let safe = label.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "-" }
        return AppID("com.trace." + String(safe).split(separator: "-").joined(separator: "-"))
    }

    /// Replays `trace` under `policy` and returns the core's event log (to read why the policy did what it did).
    public static func runWithLog(_ trace: UsageTrace, policy: any SchedulingPolicy, options: Options = .init()) -> [LogEntry] {
        replay(trace, policy: policy, options: options).0.log
    }

    /// Replays `trace` under `policy`, returning what the meters need and the core's event log together (to break a
    /// policy's wake-ups down by the rule that paid for them: ``WakeUpBreakdown``).
    public static func runWithOutcomeAndLog(
        _ trace: UsageTrace, policy: any SchedulingPolicy, options: Options = .init()
    ) -> (outcome: Outcome, log: [LogEntry]) {
        let (sim, labels) = replay(trace, policy: policy, options: options)
        let (runs, refreshes) = backgroundRuns(sim.trace, labels: labels)
        return (Outcome(trace: trace, timeline: DeviceTimeline(trace: trace, runs: runs), refreshes: refreshes), sim.log)
    }

    /// Replays `trace` under `policy`.
    public static func run(_ trace: UsageTrace, policy: any SchedulingPolicy, options: Options = .init()) -> Outcome {
        let (sim, labels) = replay(trace, policy: policy, options: options)
        let (runs, refreshes) = backgroundRuns(sim.trace, labels: labels)
        return Outcome(trace: trace, timeline: DeviceTimeline(trace: trace, runs: runs), refreshes: refreshes)
    }

    static func replay(_ trace: UsageTrace, policy: any SchedulingPolicy, options: Options) -> (Simulation, [AppID: String]) {
        var sim = Simulation(configuration: options.configuration, clock: VirtualClock(start: trace.start), policy: policy)
        var random = SeededGenerator(seed: options.seed)
        var labels: [AppID: String] = [:]
        if !trace.isScreenOn(at: trace.start) { sim.lock() }
        for label in trace.apps {
            let id = appID(for: label)
            labels[id] = label
            let probability = random.uniform(options.newDataProbability.lowerBound, options.newDataProbability.upperBound)
            var tasks = TaskBehavior()
            tasks.runtime = options.refreshDuration
            tasks.results = (0..<512).map { _ in random.chance(probability) ? .newData : .noData }
            tasks.resubmitAfter = .zero
            let manifest = Manifest(
                id: id, executable: "app", backgroundModes: [.fetch], permittedTaskIdentifiers: [identifier])
            let installedAt = trace.start - .seconds(double: random.uniform(0, options.installSpread.inSeconds))
            sim.install(
                manifest, behavior: AppBehavior().with(\.tasks, tasks), installedAt: installedAt, pending: [.init(identifier)])
        }
        let clock = LocalClock(utcOffsetSeconds: options.configuration.utcOffsetSeconds ?? 0)
        var battery = options.battery
        var batteryAt = trace.start
        var scanned = 0
        var screenOn = trace.isScreenOn(at: trace.start)
        // The battery between two events: drained or charged, and by the background work done meanwhile.
        func updateBattery(to instant: Instant) {
            guard var current = battery else { return }
            var completed = 0
            for record in sim.trace[scanned...] { if case .taskCompleted = record.event { completed += 1 } }
            scanned = sim.trace.count
            let work = Double(completed) * options.refreshDuration.inSeconds
            current.run(from: batteryAt, to: instant, screenOn: screenOn, background: work, clock)
            batteryAt = instant
            battery = current
            sim.machineReading(current.reading(at: instant, clock))
        }
        updateBattery(to: trace.start)
        let events = events(of: trace, battery: battery, clock)
        for (index, event) in events.enumerated() {
            sim.run(until: event.at)
            updateBattery(to: event.at)
            switch event.kind {
            case .charger: break
            case .screenOn:
                // The phone returns to the app left in front only if the user opens it as the screen comes on.
                let before = sim.core.device.appBeforeLock
                let reopened = events[(index + 1)...].prefix { $0.at == event.at }.contains {
                    if case .open(let label) = $0.kind { return appID(for: label) == before }
                    return false
                }
                sim.unlock(returningToApp: reopened)
                screenOn = true
            case .open(let label):
                if sim.core.device.foregroundApp != appID(for: label) { try? sim.open(appID(for: label)) }
            case .close(let label):
                // A close at the moment the screen goes off is the lock itself: the app leaves with the screen off.
                let locking = events[(index + 1)...].prefix { $0.at == event.at }.contains {
                    if case .screenOff = $0.kind { return true }
                    return false
                }
                if !locking, sim.core.device.foregroundApp == appID(for: label) { sim.home() }
            case .screenOff:
                sim.lock()
                screenOn = false
            }
        }
        sim.run(until: trace.end)
        return (sim, labels)
    }

    /// One step of the user's day.
    struct Event {
        enum Kind {
            case close(String), screenOff, screenOn, open(String), charger

            /// At equal instants: a close and a screen-off happen before a screen-on and an open.
            var order: Int {
                switch self {
                case .charger: 0
                case .close: 1
                case .screenOff: 2
                case .screenOn: 3
                case .open: 4
                }
            }
        }
        var at: Instant
        var kind: Kind
    }

    static func events(of trace: UsageTrace, battery: VirtualBattery?, _ clock: LocalClock) -> [Event] {
        var events: [Event] = []
        var instant = trace.start
        while let change = battery?.nextChargerChange(after: instant, clock), change < trace.end {
            events.append(Event(at: change, kind: .charger))
            instant = change
        }
        for span in trace.screenOn {
            events.append(Event(at: span.start, kind: .screenOn))
            events.append(Event(at: span.end, kind: .screenOff))
        }
        for session in trace.sessions {
            events.append(Event(at: session.start, kind: .open(session.app)))
            events.append(Event(at: session.end, kind: .close(session.app)))
        }
        return events.enumerated().sorted { a, b in
            (a.element.at, a.element.kind.order, a.offset) < (b.element.at, b.element.kind.order, b.offset)
        }.map(\.element)
    }

    /// Background runs (handler called → task completed) and the refreshes that refreshed content, by app label.
    static func backgroundRuns(_ records: [TraceRecord], labels: [AppID: String]) -> ([BackgroundRun], [String: [Span]]) {
        var runs: [BackgroundRun] = []
        var refreshes: [String: [Span]] = [:]
        var started: [AppID: (at: Instant, cold: Bool)] = [:]
        var launchedForWork: Set<AppID> = []
        for record in records {
            guard let label = labels[record.app] else { continue }
            switch record.event {
            case .launched(let reason) where reason != .user:
                launchedForWork.insert(record.app)
            case .callback("runTask"), .callback("performFetch"):
                started[record.app] = (record.at, launchedForWork.remove(record.app) != nil)
            case .taskCompleted(_, let result):
                let start = started.removeValue(forKey: record.app)
                if let start {
                    runs.append(BackgroundRun(
                        app: label, span: Span(start: start.at, end: record.at), usesNetwork: true, isColdLaunch: start.cold))
                }
                if result.refreshedContent {
                    refreshes[label, default: []].append(Span(start: start?.at ?? record.at, end: record.at))
                }
            default:
                break
            }
        }
        return (runs, refreshes)
    }
}
