import OffstageCore

/// What a simulated app does with scheduled work: what it submits when it launches, how long its task handlers run,
/// what they find, and whether it resubmits — written as data, like ``AppBehavior``.
public struct TaskBehavior: Sendable {
    /// A request the app submits.
    public struct Submission: Sendable, Hashable {
        /// The identifier (listed in the manifest).
        public var identifier: String
        /// Refresh or processing.
        public var kind: TaskKind
        /// Earliest begin date, relative to the moment of submission; nil for none.
        public var earliestAfter: Duration?
        /// Needs a network (nil: the kind's default).
        public var requiresNetwork: Bool?
        /// Needs external power.
        public var requiresExternalPower: Bool

        /// Creates a submission.
        public init(
            _ identifier: String, kind: TaskKind = .appRefresh, earliestAfter: Duration? = nil,
            requiresNetwork: Bool? = nil, requiresExternalPower: Bool = false
        ) {
            self.identifier = identifier
            self.kind = kind
            self.earliestAfter = earliestAfter
            self.requiresNetwork = requiresNetwork
            self.requiresExternalPower = requiresExternalPower
        }

        func request(at now: Instant) -> TaskRequest {
            TaskRequest(
                identifier: identifier, kind: kind, earliestBegin: earliestAfter.map { now + $0 },
                requiresNetwork: requiresNetwork, requiresExternalPower: requiresExternalPower, submittedAt: now)
        }
    }

    /// Submitted when did-finish-launching runs.
    public var submitsOnLaunch: [Submission] = []
    /// Set when did-finish-launching runs.
    public var fetchIntervalOnLaunch: FetchInterval?
    /// How long a task or fetch handler works before it completes; nil for never (it ignores its time).
    public var runtime: Duration? = .seconds(2)
    /// The results of successive runs, cycled.
    public var results: [TaskResult] = [.newData]
    /// After each completed refresh or processing run, submit the same request again with its earliest begin this
    /// far ahead (`.zero` for none); nil to not resubmit.
    public var resubmitAfter: Duration?
    /// The expiration handler completes the task at once (as failed); otherwise the app ignores it.
    public var completesOnExpiration: Bool = true

    /// No scheduled work.
    public init() {}
}
