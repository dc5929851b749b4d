/// One app's open background tasks and the budget they share (SPEC BT-1..5).
///
/// In the foreground there is no deadline. Each time the app enters the background a fresh budget starts;
/// a warning point `expirationWarning` before its end calls every open task's expiration handler once, and
/// at the end any task still open gets the app terminated.
public struct BackgroundTaskLedger: Hashable, Sendable {
    /// An open task.
    public struct OpenTask: Hashable, Sendable {
        /// Its identifier.
        public var id: BackgroundTaskID
        /// The name the app gave it (may be empty).
        public var name: String
        /// When it began.
        public var begunAt: Instant
        /// Whether its expiration handler was called during the current budget.
        public var expirationSent: Bool
    }

    /// The open tasks, oldest first.
    public private(set) var tasks: [OpenTask] = []
    /// The end of the current budget; nil in the foreground.
    public private(set) var budgetEnd: Instant?
    /// The warning lead time.
    public private(set) var expirationWarning: Duration

    /// Creates an empty ledger.
    public init(expirationWarning: Duration) {
        self.expirationWarning = expirationWarning
    }

    /// Whether any task is open.
    public var hasOpenTasks: Bool { !tasks.isEmpty }

    /// When the expiration handlers are due: the warning point, if a task has not yet been warned.
    public var expirationDue: Instant? {
        guard let budgetEnd, tasks.contains(where: { !$0.expirationSent }) else { return nil }
        return budgetEnd - expirationWarning
    }

    /// When the app is terminated if tasks are still open.
    public var overrunDue: Instant? { tasks.isEmpty ? nil : budgetEnd }

    /// Seconds left of the budget; the largest finite value in the foreground (SPEC BT-3).
    public func timeRemaining(at now: Instant) -> Double {
        guard let budgetEnd else { return .greatestFiniteMagnitude }
        return max(0, (budgetEnd - now).inSeconds)
    }

    /// Starts a fresh budget: the app entered the background.
    public mutating func enterBackground(at now: Instant, budget: Duration) {
        budgetEnd = now + budget
        for index in tasks.indices { tasks[index].expirationSent = false }
    }

    /// Lifts the deadline: the app returned to the foreground; open tasks stay valid (SPEC BT-5).
    public mutating func enterForeground() {
        budgetEnd = nil
        for index in tasks.indices { tasks[index].expirationSent = false }
    }

    /// Whether a task may begin now: always in the foreground, in the background only before the budget ends.
    public func canBegin(at now: Instant) -> Bool {
        guard let budgetEnd else { return true }
        return now < budgetEnd
    }

    /// Records a task that began.
    public mutating func begin(_ id: BackgroundTaskID, name: String, at now: Instant) {
        tasks.append(OpenTask(id: id, name: name, begunAt: now, expirationSent: false))
    }

    /// Ends a task; nil when the identifier is unknown or already ended (harmless, SPEC BT-1).
    public mutating func end(_ id: BackgroundTaskID) -> OpenTask? {
        guard let index = tasks.firstIndex(where: { $0.id == id }) else { return nil }
        return tasks.remove(at: index)
    }

    /// Marks every not-yet-warned task as warned and returns their identifiers, if the warning point has come.
    public mutating func takeExpiring(at now: Instant) -> [BackgroundTaskID] {
        guard let due = expirationDue, now >= due else { return [] }
        var ids: [BackgroundTaskID] = []
        for index in tasks.indices where !tasks[index].expirationSent {
            tasks[index].expirationSent = true
            ids.append(tasks[index].id)
        }
        return ids
    }

    /// Drops every task (the process is gone).
    public mutating func removeAll() {
        tasks.removeAll()
        budgetEnd = nil
    }
}
