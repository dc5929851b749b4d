/// One line of the daemon's structured event log, which `offstage log`, `explain` and the timeline read.
public struct LogEntry: Hashable, Sendable, Codable {
    /// What kind of event it records.
    public enum Kind: String, Hashable, Sendable, Codable, CaseIterable {
        case install, uninstall, launch, launchFailed, attach, detach, state, callback, callbackDone
        case freeze, thaw, terminate, kill, exit, taskBegin, taskEnd, taskExpire, watchdog
        case settings, device, warning
        /// Scheduled work: a request submitted or cancelled, a run started or completed, a device wake-up.
        case schedule, taskRun, taskDone, wakeup
        /// A background mode began or stopped keeping an app running, or told it something (SPEC §7).
        case mode
        /// A local notification scheduled, delivered, answered or moved (SPEC NT-1, NT-2).
        case notification
        /// A push arrived, was held, woke an app, or ended (SPEC NT-4, NT-5).
        case push
        /// A background transfer created, started, retried, finished, or its app woken for it (SPEC §5).
        case transfer
        /// The user's data controls blocked or allowed an app's traffic (SPEC SET-2).
        case network
    }

    /// When it happened.
    public var at: Instant
    /// The app it concerns, if any.
    public var app: AppID?
    /// What kind of event.
    public var kind: Kind
    /// What happened, for people.
    public var message: String
    /// The new state, for state changes (the timeline draws these).
    public var state: ApplicationState?

    /// Creates an entry.
    public init(at: Instant, app: AppID?, kind: Kind, message: String, state: ApplicationState? = nil) {
        self.at = at
        self.app = app
        self.kind = kind
        self.message = message
        self.state = state
    }
}
