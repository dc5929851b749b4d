/// Decides when runnable background work runs (SPEC SCH-5, SCH-7).
///
/// The core's controllers first drop every request whose conditions are not met (network, power, budget …); the
/// policy sees only what could run now and answers with what runs now, when it plans to run the rest, and when to
/// ask it again. Policies are pure: the same context gives the same decision. Several run side by side on the same
/// usage trace in the simulator, which is how the policy is measured.
public protocol SchedulingPolicy: Sendable {
    /// A short name for logs, the CLI and benchmark tables (`adaptive`, `fixed-interval` …).
    var name: String { get }

    /// Decides what runs now. Called whenever something that matters changed, and at the decision's `nextCheck`.
    mutating func decide(_ context: SchedulingContext) -> SchedulingDecision
}

/// One pending request, identified by app and identifier.
public struct TaskKey: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The app.
    public var app: AppID
    /// The request's identifier (``TaskRequest/fetchIdentifier`` for the legacy fetch).
    public var identifier: String

    /// Creates a key.
    public init(app: AppID, identifier: String) {
        self.app = app
        self.identifier = identifier
    }

    public static func < (lhs: TaskKey, rhs: TaskKey) -> Bool {
        (lhs.app, lhs.identifier) < (rhs.app, rhs.identifier)
    }

    public var description: String { "\(app)/\(identifier)" }
}

/// What a policy knows when it decides.
public struct SchedulingContext: Sendable {
    /// The current time.
    public var now: Instant
    /// Whether the device is awake anyway (screen on, or background work already running), so running more work
    /// now costs no device wake-up.
    public var awake: Bool
    /// Whether the screen is locked.
    public var locked: Bool
    /// Since when, if it is locked.
    public var lockedSince: Instant?
    /// Whether external power is connected.
    public var charging: Bool
    /// The device's local time (hour of day, day boundaries).
    public var clock: LocalClock
    /// The half-life of usage history, in days.
    public var usageHalfLifeDays: Double
    /// The runnable requests: every condition holds.
    public var candidates: [Candidate]
    /// When the user unlocks the device, per hour of the day (with each app's first opens after an unlock, the chance
    /// that the next unlock opens a given app first).
    public var unlocks: UsageHistory

    /// A runnable request and what the policy may want to know about its app.
    public struct Candidate: Sendable {
        /// Which request.
        public var key: TaskKey
        /// The request.
        public var request: TaskRequest
        /// When the user opens the app.
        public var usage: UsageHistory
        /// What the app's background work found so far.
        public var results: ResultHistory
        /// When the app was installed.
        public var installedAt: Instant

        /// Creates a candidate.
        public init(key: TaskKey, request: TaskRequest, usage: UsageHistory, results: ResultHistory, installedAt: Instant) {
            self.key = key
            self.request = request
            self.usage = usage
            self.results = results
            self.installedAt = installedAt
        }
    }

    /// Creates a context.
    public init(
        now: Instant, awake: Bool, locked: Bool, lockedSince: Instant?, charging: Bool, clock: LocalClock,
        usageHalfLifeDays: Double, candidates: [Candidate], unlocks: UsageHistory = .init()
    ) {
        self.now = now
        self.awake = awake
        self.locked = locked
        self.lockedSince = lockedSince
        self.charging = charging
        self.clock = clock
        self.usageHalfLifeDays = usageHalfLifeDays
        self.candidates = candidates
        self.unlocks = unlocks
    }
}

/// A policy's answer.
public struct SchedulingDecision: Sendable {
    /// Requests to run now.
    public var run: [TaskKey] = []
    /// Why each request in ``run`` runs now, where the policy says (logged with the run, SPEC SCH-8).
    public var why: [TaskKey: String] = [:]
    /// When the policy plans to run each request it did not run now, and why (SPEC SCH-8); nil when it has no plan
    /// for it yet.
    public var planned: [TaskKey: PlannedRun] = [:]
    /// When to decide again if nothing else changes; nil when only a change (not time) can make a difference.
    public var nextCheck: Instant?

    /// Creates a decision.
    public init(run: [TaskKey] = [], planned: [TaskKey: PlannedRun] = [:], nextCheck: Instant? = nil) {
        self.run = run
        self.planned = planned
        self.nextCheck = nextCheck
    }

    /// Runs `key` now, for `reason`.
    public mutating func runNow(_ key: TaskKey, _ reason: String) {
        run.append(key)
        why[key] = reason
    }

    /// Plans `key` at `at` and keeps `nextCheck` at the earliest plan.
    public mutating func plan(_ key: TaskKey, at: Instant?, _ reason: String) {
        planned[key] = PlannedRun(at: at, reason: reason)
        if let at, nextCheck == nil || at < nextCheck! { nextCheck = at }
    }
}

/// When a policy plans to run a request, and why.
public struct PlannedRun: Hashable, Sendable, Codable {
    /// The planned instant, or nil when the policy waits for a change rather than a time.
    public var at: Instant?
    /// Why then, for people.
    public var reason: String

    /// Creates a plan.
    public init(at: Instant?, reason: String) {
        self.at = at
        self.reason = reason
    }
}
