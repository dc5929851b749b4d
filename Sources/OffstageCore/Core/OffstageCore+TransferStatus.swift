/// One background transfer as `offstage explain` shows it (SPEC §5, SCH-8): where it stands and, while it waits,
/// what holds it back.
public struct TransferExplanation: Hashable, Sendable {
    /// The task.
    public var task: TransferTask
    /// The conditions that hold it back now; empty unless it waits.
    public var holds: [Hold]
    /// One line for people: `waiting: no network`, `running: 4194304 of 25165824 bytes`.
    public var summary: String

    /// An explanation of `task`.
    public init(task: TransferTask, holds: [Hold], summary: String) {
        self.task = task
        self.holds = holds
        self.summary = summary
    }
}

extension OffstageCore {
    /// Every transfer of one app, oldest first, with why each waits, as `explain` gives it beside scheduled work.
    public func explainTransfers(_ id: AppID, at now: Instant) throws(CoreError) -> [TransferExplanation] {
        _ = try entry(id)
        return transfers.tasks(of: id).map { task in
            let holds = task.state == .waiting ? transferHolds(task, at: now) : []
            return TransferExplanation(task: task, holds: holds, summary: transferSummary(task, at: now))
        }
    }

    /// One line on where `task` stands.
    func transferSummary(_ task: TransferTask, at now: Instant) -> String {
        let bytes = task.bytesExpected.map { "\(task.bytesDone) of \($0) bytes" } ?? "\(task.bytesDone) bytes"
        let unheard = "; the app hears of it when it next opens the session, or is woken for it"
        switch task.state {
        case .waiting:
            return "waiting: " + transferWaitingFor(task, at: now).joined(separator: "; ")
        case .running:
            return "running: \(bytes)"
        case .paused:
            return "paused at \(bytes), by the app or by hand: `offstage transfers resume \(task.id)` resumes it"
        case .completed:
            return "completed (\(bytes))" + unheard
        case .failed:
            return "failed: \(task.failure?.message ?? task.lastError ?? "unknown")" + unheard
        }
    }
}
