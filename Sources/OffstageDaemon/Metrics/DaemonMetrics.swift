import CoreMetrics
import Foundation
import OffstageCore
import class Prometheus.PrometheusCollectorRegistry
import struct Prometheus.PrometheusMetricsFactory
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Every metric the daemon records (SPEC §11 observability), made once from the factory it is given and exposed in
/// the Prometheus text format by ``exposition()``.
///
/// The factory is injected, never taken from `MetricsSystem.bootstrap`: one process may run several daemons (the
/// tests do), and each must count only its own work. Every name starts with `offstage_`; durations are histograms
/// in seconds (`_seconds`), counts are counters (`_total`). Label values are fixed sets (callback names, method
/// names from the interface definitions, error names the daemon itself sends), never raw caller input.
///
/// The hot path is one atomic add per counter and one short lock per histogram sample (the metric types' own);
/// every metric with labels is made up front or looked up in a table built at start, so recording allocates nothing.
public final class DaemonMetrics: Sendable {
    /// The Prometheus registry the metrics live in, when they were made by ``init(registry:deadlineTolerance:)``.
    public let registry: PrometheusCollectorRegistry?
    let factory: any MetricsFactory
    private let render: @Sendable () -> String

    /// Fired at or before `deadline + tolerance` counts as on time (SPEC §11: due work starts ≤ 1 ms late).
    let deadlineToleranceNanoseconds: Int64

    let wakeups: Counter
    let timerLateness: CoreMetrics.Timer
    let deadlinesMissed: Counter
    let freezes: Counter
    let freezeSeconds: CoreMetrics.Timer
    let freezeFailures: Counter
    let thaws: Counter
    let launches: Counter
    let launchFailures: Counter
    /// By ``CallbackLabel``'s raw index.
    let callbacks: [Counter]
    let callbackSeconds: [CoreMetrics.Timer]
    /// By ``TerminationSignal``.
    let terminations: [Counter]
    /// By ``StoreWrite``.
    let storeWriteSeconds: [CoreMetrics.Timer]
    /// Calls whose method no interface declares (or that could not be read): one series, not one per name sent.
    let unroutedCalls: IPCMethodMetrics
    let networkRuleSeconds: CoreMetrics.Timer
    let networkRuleFailures: Counter

    /// Metric names, as they appear in the exposition.
    public enum Name {
        /// Counter: times the daemon's one timer fired (each is a wake-up of the process).
        public static let wakeups = "offstage_wakeups_total"
        /// Histogram, seconds: how long after its deadline the timer fired.
        public static let timerLateness = "offstage_timer_lateness_seconds"
        /// Counter: timer firings later than the deadline tolerance (setting `deadlineTolerance`, default 1 ms).
        public static let deadlinesMissed = "offstage_deadlines_missed_total"
        /// Counter: app process trees frozen.
        public static let freezes = "offstage_freezes_total"
        /// Histogram, seconds: how long one freeze took, from the request to the kernel's confirmation.
        public static let freezeSeconds = "offstage_freeze_seconds"
        /// Counter: freezes that failed (the core then ends the app).
        public static let freezeFailures = "offstage_freeze_failures_total"
        /// Counter: app process trees thawed.
        public static let thaws = "offstage_thaws_total"
        /// Counter: app processes started.
        public static let launches = "offstage_launches_total"
        /// Counter: app processes that could not be started.
        public static let launchFailures = "offstage_launch_failures_total"
        /// Counter, label `callback`: lifecycle callbacks delivered to apps.
        public static let callbacks = "offstage_callbacks_total"
        /// Histogram, seconds, label `callback`: from delivering a callback to the app's answer (`CallbackDone`).
        public static let callbackSeconds = "offstage_callback_seconds"
        /// Counter, label `signal` (`SIGTERM`, `SIGKILL`): signals sent to end an app's process tree.
        public static let terminations = "offstage_terminations_total"
        /// Histogram, seconds, label `write`: one store transaction.
        public static let storeWriteSeconds = "offstage_store_write_seconds"
        /// Counter, labels `interface`, `method`: Varlink calls received.
        public static let ipcCalls = "offstage_ipc_calls_total"
        /// Counter, labels `interface`, `method`, `error`: Varlink calls answered with an error.
        public static let ipcErrors = "offstage_ipc_errors_total"
        /// Histogram, seconds: from the core's decision to block or allow apps' traffic (a setting changed, an app
        /// left the foreground) to the kernel's rules in force (SPEC SET-2).
        public static let networkRuleSeconds = "offstage_network_rule_seconds"
        /// Counter: batches of network rules the kernel refused.
        public static let networkRuleFailures = "offstage_network_rule_failures_total"
    }

    /// Metrics in a fresh Prometheus registry of their own, with buckets suited to each histogram.
    ///
    /// - Parameters:
    ///   - registry: Where the metrics live; ``exposition()`` renders it.
    ///   - deadlineTolerance: A timer firing later than this after its deadline counts as a missed deadline.
    public convenience init(
        registry: PrometheusCollectorRegistry = .init(), deadlineTolerance: Duration = .milliseconds(1)
    ) {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets = Self.buckets
        self.init(
            factory: factory, registry: registry, deadlineTolerance: deadlineTolerance,
            render: { registry.emitToString() })
    }

    /// Metrics made by any swift-metrics factory (a test factory, another backend); `render` produces the text
    /// ``exposition()`` returns.
    public convenience init(
        factory: any MetricsFactory, deadlineTolerance: Duration = .milliseconds(1),
        render: @escaping @Sendable () -> String
    ) {
        self.init(factory: factory, registry: nil, deadlineTolerance: deadlineTolerance, render: render)
    }

    private init(
        factory: any MetricsFactory, registry: PrometheusCollectorRegistry?, deadlineTolerance: Duration,
        render: @escaping @Sendable () -> String
    ) {
        self.factory = factory
        self.registry = registry
        self.render = render
        let tolerance = deadlineTolerance.components
        deadlineToleranceNanoseconds = tolerance.seconds * 1_000_000_000 + tolerance.attoseconds / 1_000_000_000
        func counter(_ name: String, _ dimensions: [(String, String)] = []) -> Counter {
            Counter(label: name, dimensions: dimensions, factory: factory)
        }
        func timer(_ name: String, _ dimensions: [(String, String)] = []) -> CoreMetrics.Timer {
            CoreMetrics.Timer(label: name, dimensions: dimensions, factory: factory)
        }
        wakeups = counter(Name.wakeups)
        timerLateness = timer(Name.timerLateness)
        deadlinesMissed = counter(Name.deadlinesMissed)
        freezes = counter(Name.freezes)
        freezeSeconds = timer(Name.freezeSeconds)
        freezeFailures = counter(Name.freezeFailures)
        thaws = counter(Name.thaws)
        launches = counter(Name.launches)
        launchFailures = counter(Name.launchFailures)
        callbacks = CallbackLabel.allCases.map { counter(Name.callbacks, [("callback", $0.rawValue)]) }
        callbackSeconds = CallbackLabel.allCases.map { timer(Name.callbackSeconds, [("callback", $0.rawValue)]) }
        terminations = TerminationSignal.allCases.map { counter(Name.terminations, [("signal", $0.rawValue)]) }
        storeWriteSeconds = StoreWrite.allCases.map { timer(Name.storeWriteSeconds, [("write", $0.rawValue)]) }
        unroutedCalls = IPCMethodMetrics(interface: "unknown", method: "unknown", factory: factory)
        networkRuleSeconds = timer(Name.networkRuleSeconds)
        networkRuleFailures = counter(Name.networkRuleFailures)
    }

    /// Histogram buckets by metric, in the ranges each one's samples fall in.
    static let buckets: [String: [Duration]] = [
        // §11: due work starts ≤ 1 ms late, so the buckets are fine around 1 ms.
        Name.timerLateness: [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2),
            .milliseconds(5), .milliseconds(10), .milliseconds(50), .milliseconds(100), .seconds(1),
        ],
        // A cgroup freeze takes tens to hundreds of microseconds; the freeze timeout is 100 ms by default.
        Name.freezeSeconds: [
            .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1),
            .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(50), .milliseconds(100),
        ],
        // Callbacks answer in about a millisecond, and the watchdogs allow seconds (20 s for launching).
        Name.callbackSeconds: [
            .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
            .milliseconds(50), .milliseconds(100), .milliseconds(500), .seconds(1), .seconds(5), .seconds(20),
        ],
        // One libnftables transaction takes a fraction of a millisecond; it waits behind the one before it.
        Name.networkRuleSeconds: [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2),
            .milliseconds(5), .milliseconds(10), .milliseconds(50), .milliseconds(100), .seconds(1),
        ],
        Name.storeWriteSeconds: [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2),
            .milliseconds(5), .milliseconds(10), .milliseconds(50), .milliseconds(100), .seconds(1),
        ],
    ]

    /// Everything recorded so far, in the Prometheus text format (version 0.0.4).
    public func exposition() -> String { render() }

    // MARK: Recording

    /// The one timer fired `latenessNanoseconds` after its deadline (negative when early, recorded as 0).
    func timerFired(latenessNanoseconds: Int64) {
        wakeups.increment()
        let lateness = max(0, latenessNanoseconds)
        timerLateness.recordNanoseconds(lateness)
        if lateness > deadlineToleranceNanoseconds { deadlinesMissed.increment() }
    }

    /// A freeze that took `nanoseconds` succeeded.
    func frozen(nanoseconds: Int64) {
        freezes.increment()
        freezeSeconds.recordNanoseconds(nanoseconds)
    }

    /// A callback was handed to an app.
    func callbackDelivered(_ label: CallbackLabel) {
        callbacks[label.index].increment()
    }

    /// The app answered a callback `nanoseconds` after it was delivered.
    func callbackAnswered(_ label: CallbackLabel, nanoseconds: Int64) {
        callbackSeconds[label.index].recordNanoseconds(nanoseconds)
    }

    /// A signal went to an app's process tree to end it.
    func terminated(_ signal: TerminationSignal) {
        terminations[signal.index].increment()
    }

    /// A store transaction of `kind` took `nanoseconds`.
    func storeWrote(_ kind: StoreWrite, nanoseconds: Int64) {
        storeWriteSeconds[kind.index].recordNanoseconds(nanoseconds)
    }

    /// The counters of one Varlink method, made once when the server starts.
    func ipcMethod(interface: String, method: String) -> IPCMethodMetrics {
        IPCMethodMetrics(interface: interface, method: method, factory: factory)
    }

    /// Nanoseconds on the monotonic clock: durations are measured with it, so a change of the wall clock cannot
    /// make one negative or huge.
    static func monotonicNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}

/// The `callback` label: one value per kind of callback, so the series are known when the daemon starts.
enum CallbackLabel: String, CaseIterable, Sendable {
    case didFinishLaunching, willEnterForeground, didBecomeActive, willResignActive, didEnterBackground
    case willTerminate, backgroundTasksExpiring, runTask, performFetch, taskExpiring, audioInterruption, keepAlive
    case voipSocket, systemEvent, locations, locationError, accessory, notificationWillPresent, notificationResponse
    case remoteNotification, transferEvents, memoryWarning

    /// The label of `kind`. The switch is exhaustive, so a new kind of callback cannot be left without one.
    init(_ kind: CallbackKind) {
        switch kind {
        case .didFinishLaunching: self = .didFinishLaunching
        case .willEnterForeground: self = .willEnterForeground
        case .didBecomeActive: self = .didBecomeActive
        case .willResignActive: self = .willResignActive
        case .didEnterBackground: self = .didEnterBackground
        case .willTerminate: self = .willTerminate
        case .backgroundTasksExpiring: self = .backgroundTasksExpiring
        case .runTask: self = .runTask
        case .performFetch: self = .performFetch
        case .taskExpiring: self = .taskExpiring
        case .audioInterruption: self = .audioInterruption
        case .keepAlive: self = .keepAlive
        case .voipSocket: self = .voipSocket
        case .systemEvent: self = .systemEvent
        case .locations: self = .locations
        case .locationError: self = .locationError
        case .accessory: self = .accessory
        case .notificationWillPresent: self = .notificationWillPresent
        case .notificationResponse: self = .notificationResponse
        case .remoteNotification: self = .remoteNotification
        case .transferEvents: self = .transferEvents
        case .memoryWarning: self = .memoryWarning
        }
    }

    var index: Int { Self.allCases.firstIndex(of: self)! }
}

/// The `signal` label of `offstage_terminations_total`.
enum TerminationSignal: String, CaseIterable, Sendable {
    case sigterm = "SIGTERM"
    case sigkill = "SIGKILL"

    var index: Int { self == .sigterm ? 0 : 1 }
}

/// The `write` label of `offstage_store_write_seconds`: which kind of transaction.
public enum StoreWrite: String, CaseIterable, Sendable {
    /// Apps' durable state and the device, one transaction per input.
    case state
    /// Removing an uninstalled app.
    case uninstall
    /// Recording or forgetting a running process.
    case process
    /// Appending to the event log.
    case log
    /// The store's own bookkeeping (the number floor).
    case meta
    /// Local notifications: pending requests, deliveries (one transaction per firing), badges, categories.
    case notification
    /// Push: accepting one (before the gateway answers 200), its outcome, keys and tokens.
    case push
    /// Background transfers: a task created, a checkpoint, a state change, a session.
    case transfer
    /// The history of scheduled work: stretches of waiting and runs (SPEC SCH-8).
    case history
    /// What apps used, per day (SPEC SET-3).
    case usage

    var index: Int { Self.allCases.firstIndex(of: self)! }
}

/// The counters of one Varlink method: calls, and errors by error name.
///
/// Calls are counted on the event loop's hot path with one atomic add. Error counters are made on first use under a
/// lock (errors are rare), at most ``maximumErrorNames`` of them; any further name is counted as `other`, so a bug
/// that puts caller input into an error name cannot grow the exposition without bound.
final class IPCMethodMetrics: Sendable {
    let interface: String
    let method: String
    let calls: Counter
    private let factory: any MetricsFactory
    private let errors = Mutex<[String: Counter]>([:])
    static let maximumErrorNames = 32

    init(interface: String, method: String, factory: any MetricsFactory) {
        self.interface = interface
        self.method = method
        self.factory = factory
        calls = Counter(
            label: DaemonMetrics.Name.ipcCalls, dimensions: [("interface", interface), ("method", method)],
            factory: factory)
    }

    /// A call was received.
    func called() { calls.increment() }

    /// The call was answered with the error `name`.
    func failed(_ name: String) {
        let counter = errors.withLock { errors -> Counter in
            let key = errors[name] != nil || errors.count < Self.maximumErrorNames ? name : "other"
            if let counter = errors[key] { return counter }
            let counter = Counter(
                label: DaemonMetrics.Name.ipcErrors,
                dimensions: [("interface", interface), ("method", method), ("error", key)], factory: factory)
            errors[key] = counter
            return counter
        }
        counter.increment()
    }
}
