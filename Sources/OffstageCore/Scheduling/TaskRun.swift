/// A request being run by the app: its handler has been (or is about to be) called (SPEC SCH-3).
public struct TaskRun: Hashable, Sendable, Codable {
    /// Identifies the run; the app completes it with this number.
    public var id: UInt64
    /// What runs.
    public var request: TaskRequest
    /// When the system started it.
    public var startedAt: Instant
    /// When its runtime ends and the expiration handler is called.
    public var expiresAt: Instant
    /// After expiration: when the app is terminated if it has still not completed the task.
    public var killAt: Instant?
    /// Whether the expiration handler has been called.
    public var expirationSent: Bool = false
    /// Started by a debug command rather than the policy (SPEC SCH-9).
    public var forced: Bool
    /// Whether the device was on battery when it started (only battery runtime counts against the daily budget).
    public var onBattery: Bool
    /// A continued-processing task's progress and title (SPEC SCH-11); nil for every other kind.
    public var progress: ContinuedProgress?
    /// Why the system ended it early (the user cancelled it, pressure, silence), recorded with its end.
    public var endedBecause: String?
    /// Why its expiration handler was called, once it was (the history records it with the run's end, SPEC SCH-8).
    public var expiry: RunExpiry?
    /// How it started (the history records it with the run, SPEC SCH-8).
    public var start: RunStart?

    /// The next instant the core must act on this run.
    public var deadline: Instant { killAt ?? expiresAt }
}
