import Synchronization

/// Who answers a run the daemon handed to an app's handler (a fetch, a remote notification): exactly one of the
/// handler's completion and the run's deadline. Whoever claims the run first is the only one to send its result; the
/// deadline claims before it cancels the handler's task, so a handler that returns as soon as it is cancelled cannot
/// send its own result between the cancel and the deadline's `.failed`.
final class RunClaim: Sendable {
    private let state = Mutex(State())

    private struct State {
        var completed = false
        /// The Swift task running the delegate's async handler, cancelled when the run's time is up.
        var work: Task<Void, Never>?
        /// The timer that completes a forgotten run, if the SDK keeps one.
        var timer: Task<Void, Never>?
    }

    /// What the first claim takes over: the handler's task and the deadline's timer, either of which may be absent.
    struct Claimed {
        var work: Task<Void, Never>?
        var timer: Task<Void, Never>?
    }

    /// Whether the run was claimed.
    var isCompleted: Bool { state.withLock { $0.completed } }

    /// Keeps the Swift task running the handler, to cancel it when the time is up; cancels it at once when the time
    /// was up before the task could be handed over.
    func attach(_ work: Task<Void, Never>) {
        let late = state.withLock { state in
            if !state.completed { state.work = work }
            return state.completed
        }
        if late { work.cancel() }
    }

    /// Keeps the deadline's timer, to cancel it when the handler answers first.
    func setTimer(_ timer: Task<Void, Never>) {
        state.withLock { $0.timer = timer }
    }

    /// Marks the run completed, once: the first caller gets what it takes over, later ones nil.
    func claim() -> Claimed? {
        state.withLock { state in
            guard !state.completed else { return nil }
            state.completed = true
            defer { state.work = nil; state.timer = nil }
            return Claimed(work: state.work, timer: state.timer)
        }
    }
}
