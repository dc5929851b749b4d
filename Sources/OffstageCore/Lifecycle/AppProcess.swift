/// What the core knows about an app's running process.
public struct AppProcess: Hashable, Sendable {
    /// Identifies the launch until the pid is known.
    public var launch: UInt64
    /// The process id, once the shell reported it.
    public var pid: Int32?
    /// Why it was launched.
    public var reason: LaunchReason
    /// Its state (never `notRunning`).
    public var phase: ApplicationState
    /// Whether did-finish-launching has returned.
    public var launchCompleted: Bool
    /// The launch watchdog (SPEC LC-3), until did-finish-launching returns.
    public var launchDeadline: Instant?
    /// Whether the SDK's callback stream is connected.
    public var attached: Bool = false
    /// Found alive after a daemon restart and not yet reattached; terminated if it does not reattach by then.
    public var reattachDeadline: Instant?
    /// Whether the process tree is frozen.
    public var frozen: Bool = false
    /// The callback sent and not yet answered; callbacks go one at a time, in order, except for `sentBehind`.
    public var inFlight: Callback?
    /// The second of a pair the app always runs back to back (will-resign-active then did-enter-background), sent
    /// right behind `inFlight` instead of after its answer, so leaving the foreground costs one round trip to the
    /// app, not two. It becomes `inFlight` when `inFlight` is answered, and its watchdog then counts from that moment;
    /// the deadline it is sent with allows for the time `inFlight` may take.
    public var sentBehind: Callback?
    /// The callback stream closed while `inFlight` (and `sentBehind`) were out: they are sent again, with the same
    /// ids, when the app reattaches (the SDK answers a repeated id without running the handler again).
    public var resendInFlight = false
    /// Callbacks waiting to be sent (while launching, detached, frozen, or behind `inFlight`).
    public var queue: [CallbackKind] = []
    /// Open background tasks and their budget.
    public var ledger: BackgroundTaskLedger
    /// Scheduled tasks the app is running (SPEC SCH-3).
    public var runs: [TaskRun] = []
    /// Runs of the previous daemon's that the app completed after a restart, before its report arrived: the SDK may
    /// have read its running tasks before it completed one, and a continued-processing run the report still lists is
    /// not taken up again (SPEC SCH-11, LC-8). Emptied by the report.
    public var completedBeforeReport: Set<UInt64> = []
    /// Remote-notification handlers the app is running (SPEC NT-4).
    public var pushRuns: [PushRun] = []
    /// Handlers of background sessions' events the app is running (SPEC TR-3).
    public var transferRuns: [TransferEventsRun] = []
    /// The numbers of the runs (tasks, remote-notification handlers, session events) most recently started in this
    /// process, oldest first, at most ``recentRunsKept``. Completing one that has ended is a race the app cannot
    /// avoid (its deadline came first) and is harmless; completing any other number is a mistake the app is told of.
    public private(set) var recentRuns: [UInt64] = []
    /// How many run numbers ``recentRuns`` keeps.
    public static let recentRunsKept = 64
    /// Background sessions this process opened: their events go straight to it.
    public var transferSessionsOpen: Set<String> = []
    /// When each open session last told the app of progress.
    public var transferSignals: [String: Instant] = [:]
    /// When the app will be suspended if it stays idle in the background (SPEC LC-4).
    public var suspendAt: Instant?
    /// Why the app was last suspended, for `offstage apps` and `explain`: nothing held it, and which mode would have
    /// but may not (SPEC MODE-6, SET-2).
    public var suspendedBecause: String?
    /// Termination in progress.
    public var termination: TerminationProgress?
    /// When the launch began.
    public var startedAt: Instant
    /// The last input at which the app was in front (SPEC MEM-1: the least recently used is ended first); nil when it
    /// has not been in front since it started.
    public var lastInFront: Instant?
    /// Its memory at the daemon's latest reading, in bytes (SPEC MEM-1): recorded with it if it is ended for memory.
    public var memoryBytes: Int64?

    /// Creates the record of a process being launched.
    public init(launch: UInt64, reason: LaunchReason, phase: ApplicationState, startedAt: Instant, ledger: BackgroundTaskLedger) {
        self.launch = launch
        self.reason = reason
        self.phase = phase
        self.launchCompleted = false
        self.startedAt = startedAt
        self.ledger = ledger
    }

    /// Remembers that run `run` started in this process (``recentRuns``).
    public mutating func started(run: UInt64) {
        recentRuns.append(run)
        if recentRuns.count > Self.recentRunsKept { recentRuns.removeFirst(recentRuns.count - Self.recentRunsKept) }
    }

    /// Whether something keeps the app running in the background (SPEC LC-4, BT-2).
    public var isBusy: Bool {
        inFlight != nil || !queue.isEmpty || ledger.hasOpenTasks || !runs.isEmpty || !pushRuns.isEmpty || !transferRuns.isEmpty
    }
}

/// A termination in progress: will-terminate → SIGTERM → SIGKILL, each stage with its deadline.
public struct TerminationProgress: Hashable, Sendable {
    /// The stages, in escalating order.
    public enum Stage: Int, Hashable, Sendable, Comparable {
        /// will-terminate sent (or queued); the process must exit by `escalateAt`.
        case willTerminate
        /// SIGTERM sent; SIGKILL follows at `escalateAt`.
        case signaled
        /// SIGKILL sent; waiting for the exit.
        case killed

        public static func < (lhs: Stage, rhs: Stage) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Why.
    public var reason: TerminationReason
    /// How far it has gone.
    public var stage: Stage
    /// When to escalate to the next stage.
    public var escalateAt: Instant?
}

/// An installed app and everything the core tracks about it.
public struct AppEntry: Hashable, Sendable {
    /// The installation.
    public var app: InstalledApp
    /// What survives restarts.
    public var durable: AppDurableState
    /// The running process, if any.
    public var process: AppProcess?
    /// The user opened it while it was being terminated: launch it again once it has exited.
    public var pendingOpen: Bool = false
    /// Uninstall requested: forget it once its process is gone. Durable, so a restart finishes it (SPEC MAN-3).
    public var uninstalling: Bool {
        get { durable.uninstallPending }
        set { durable.uninstallPending = newValue }
    }

    /// Creates an entry.
    public init(app: InstalledApp, durable: AppDurableState = .init()) {
        self.app = app
        self.durable = durable
    }

    /// The state as the user sees it.
    public var state: ApplicationState { process?.phase ?? .notRunning }
}

/// A snapshot of one app for the CLI and the SDK (SPEC CLI-2).
public struct AppStatus: Hashable, Sendable, Codable {
    /// The app id.
    public var id: AppID
    /// Its state.
    public var state: ApplicationState
    /// Its process id, or nil when not running.
    public var pid: Int32?
    /// How many background tasks are open.
    public var backgroundTasks: Int
    /// Seconds of background time left; nil in the foreground or when not running.
    public var backgroundTimeRemaining: Double?
    /// Why the running process was launched.
    public var launchReason: LaunchReason?
    /// The termination in progress, if any.
    public var terminating: String?
    /// Force-quit and not opened since (SPEC LC-6).
    public var forceQuit: Bool
    /// The last termination.
    public var lastTermination: TerminationRecord?
    /// The manifest's background modes.
    public var backgroundModes: [BackgroundMode]
    /// Whether the app exits instead of entering the background.
    public var exitsOnSuspend: Bool
    /// What each background mode says about the running app: which keep it running, and which would but may not.
    public var modeHolds: [ModeHold] = []
    /// Its band for memory while it has a process (SPEC MEM-1).
    public var memoryBand: MemoryBand?
    /// Its place in the order apps are ended when memory stays short, 1 first; nil when it has no process.
    public var memoryEndingRank: Int?
    /// The user's "kept in memory" setting (SPEC SET-2).
    public var keptInMemory: Bool = false

    /// Why the app is suspended, while it is.
    public var suspendedBecause: String?
    /// Its continued-processing tasks, running then queued (SPEC SCH-11).
    public var continued: [ContinuedTaskView] = []

    /// The modes keeping the app running now (SPEC §7).
    public var activeModes: [BackgroundMode] { modeHolds.filter { $0.verdict == .holds }.map(\.mode) }
}
