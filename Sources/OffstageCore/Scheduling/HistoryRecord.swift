/// What the history of scheduled work records (SPEC SCH-8, decision 0044): append-only records the core hands to its
/// shell in ``CoreAction/recordHistory(_:)``. A record with no end is open; the same record comes again, ended,
/// when it closes, and the shell keeps the latest (keyed by app, identifier and start; a run also by its number).
public enum HistoryRecord: Hashable, Sendable, Codable {
    /// A stretch of time during which one pending request waited for the same reasons.
    case wait(WaitRecord)
    /// A run of a request: its start, and its end with how it ended.
    case run(RunRecord)

    /// The app it is about.
    public var app: AppID {
        switch self {
        case .wait(let wait): wait.app
        case .run(let run): run.app
        }
    }
}

/// A stretch of time a pending request waited, and why: the set of reasons is the same throughout, and changes at
/// both ends (or the request stopped waiting: it ran, was cancelled, the app was uninstalled, the daemon stopped).
public struct WaitRecord: Hashable, Sendable, Codable {
    /// The app.
    public var app: AppID
    /// The request's identifier (``TaskRequest/fetchIdentifier`` for the legacy fetch).
    public var identifier: String
    /// Its kind.
    public var kind: TaskKind
    /// When the stretch began.
    public var startedAt: Instant
    /// When it ended; nil while it goes on.
    public var endedAt: Instant?
    /// Every reason that held it throughout, sorted; never empty.
    public var reasons: [WaitReason]
    /// The daemon stopped without closing it (a crash, a kill, a power loss): it was closed when the next daemon
    /// started, at the last moment the previous one is known to have been alive.
    public var interrupted: Bool

    /// Creates a record.
    public init(
        app: AppID, identifier: String, kind: TaskKind, startedAt: Instant, endedAt: Instant?, reasons: [WaitReason],
        interrupted: Bool = false
    ) {
        self.app = app
        self.identifier = identifier
        self.kind = kind
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.reasons = reasons
        self.interrupted = interrupted
    }
}

/// How a run started.
public enum RunStart: String, Hashable, Sendable, Codable {
    /// The app was not running: it was launched into the background.
    case launched
    /// The app was suspended: it was resumed.
    case resumed
    /// The app was running (in the background or in front): the handler was called at once.
    case running
    /// A continued-processing task the app still ran after a daemon restart, taken up again.
    case adopted
}

/// How a run ended (SPEC SCH-8: completed, expired, cut off, app killed).
public enum RunOutcome: String, Hashable, Sendable, Codable, CaseIterable {
    /// The app completed it before its expiration handler was called; ``RunRecord/result`` says how.
    case completed
    /// Its expiration handler was called (its runtime was over, it was forced, its conditions were lost, pressure,
    /// no progress) and the app then completed it within the grace period.
    case expired
    /// The user cancelled it (a continued-processing task) and the app then completed it.
    case cancelled
    /// The app did not complete it within the grace period after its expiration: the app was terminated.
    case cutOff = "cut-off"
    /// The app's process ended while it ran: it crashed, exited, was force-quit or killed by a watchdog.
    case appEnded = "app-ended"
    /// The daemon stopped or restarted while it ran.
    case daemonStopped = "daemon-stopped"
}

/// Why a run's expiration handler was called.
public enum RunExpiry: String, Hashable, Sendable, Codable {
    /// Its runtime was over.
    case runtime
    /// `offstage expire-task` (SPEC SCH-9).
    case forced
    /// A condition it needs was lost (a processing task and the device left idle, or was unplugged).
    case conditions
    /// The user cancelled it (SPEC SCH-11).
    case cancelled
    /// Pressure left no slot for it (SPEC SCH-11).
    case pressure
    /// It reported no progress for too long (SPEC SCH-11).
    case noProgress = "no-progress"
}

/// One run of a request: when, how it started, and how it ended.
public struct RunRecord: Hashable, Sendable, Codable {
    /// The app.
    public var app: AppID
    /// The request's identifier.
    public var identifier: String
    /// Its kind.
    public var kind: TaskKind
    /// The run's number.
    public var run: UInt64
    /// When it started.
    public var startedAt: Instant
    /// When it ended; nil while it runs.
    public var endedAt: Instant?
    /// Started by a debug command (SPEC SCH-9).
    public var forced: Bool
    /// Launched, resumed, already running, or taken up after a restart.
    public var start: RunStart
    /// How it ended; nil while it runs.
    public var outcome: RunOutcome?
    /// What the app said when it completed it, if it did.
    public var result: TaskResult?
    /// Why its expiration handler was called, if it was.
    public var expiry: RunExpiry?
    /// For people: the reason of the expiration or how the process ended.
    public var detail: String?

    /// Creates a record of a run that started.
    public init(
        app: AppID, identifier: String, kind: TaskKind, run: UInt64, startedAt: Instant, forced: Bool, start: RunStart
    ) {
        self.app = app
        self.identifier = identifier
        self.kind = kind
        self.run = run
        self.startedAt = startedAt
        self.forced = forced
        self.start = start
    }

    /// Seconds from start to end (or to `now` while it runs).
    public func duration(at now: Instant) -> Double { ((endedAt ?? now) - startedAt).inSeconds }
}
