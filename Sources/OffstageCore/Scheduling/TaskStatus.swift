/// One request as the CLI shows it (`offstage tasks`, `offstage explain`, SPEC SCH-8): pending or running, when it
/// is planned, and every condition that holds it back.
public struct TaskStatus: Hashable, Sendable, Codable {
    /// Pending, running, or not scheduled at all (a fetch whose interval is `never`).
    public enum State: String, Hashable, Sendable, Codable {
        case pending, running
    }

    /// The app.
    public var app: AppID
    /// The request's identifier (``TaskRequest/fetchIdentifier`` for the legacy fetch).
    public var identifier: String
    /// Refresh, processing or fetch.
    public var kind: TaskKind
    /// Pending or running.
    public var state: State
    /// The request.
    public var request: TaskRequest
    /// Every condition that holds it back now (empty when it may run).
    public var holds: [Hold]
    /// The policy's plan, when every condition holds.
    public var planned: PlannedRun?
    /// For a running task: when it started, when it expires, and whether it was forced.
    public var run: TaskRun?
    /// One line for people: why it runs when it runs.
    public var summary: String

    /// Creates a status.
    public init(
        app: AppID, identifier: String, kind: TaskKind, state: State, request: TaskRequest, holds: [Hold],
        planned: PlannedRun?, run: TaskRun?, summary: String
    ) {
        self.app = app
        self.identifier = identifier
        self.kind = kind
        self.state = state
        self.request = request
        self.holds = holds
        self.planned = planned
        self.run = run
        self.summary = summary
    }
}
