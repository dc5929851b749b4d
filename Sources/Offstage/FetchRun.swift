import Synchronization

/// One legacy background fetch in progress: answers the daemon's `performFetch` run once, whichever comes first of
/// the app's completion handler and the run's expiration.
final class FetchRun: Sendable {
    /// The daemon's number for this run.
    let run: UInt64
    private let state = Mutex(State())

    private struct State {
        var completed = false
        /// The Swift task running the delegate's async fetch, cancelled when the run expires.
        var work: Task<Void, Never>?
    }

    /// The fetch whose delegate call is in progress on the main actor, so that the default delegate
    /// implementation can hand over the task it starts.
    @MainActor static var current: FetchRun?

    init(run: UInt64) { self.run = run }

    /// Keeps the Swift task doing the fetch, to cancel it if the run expires; cancels it at once when the run expired
    /// before the task could be handed over.
    func attach(_ work: Task<Void, Never>) {
        let late = state.withLock { state in
            if !state.completed { state.work = work }
            return state.completed
        }
        if late { work.cancel() }
    }

    /// Completes the run; later calls are ignored.
    func complete(_ result: BackgroundFetchResult) {
        guard claim() != nil else { return }
        send(result)
    }

    /// Marks the run completed, once: the first caller gets the fetch's task (if any), later ones nil. Only the caller
    /// that claims the run sends its result, so a fetch that returns as soon as the expiration cancels it cannot send
    /// its own result between the cancel and the expiration's `.failed`.
    private func claim() -> Task<Void, Never>?? {
        state.withLock { state in
            guard !state.completed else { return nil }
            state.completed = true
            defer { state.work = nil }
            return .some(state.work)
        }
    }

    private func send(_ result: BackgroundFetchResult) {
        TaskScheduler.shared.runEnded(run)
        DaemonLink.shared.completeTask(run: run, result: result)
    }

    /// The run's time is over: completes it as failed, so that the app is not terminated, and cancels the async fetch
    /// (whose later completion is then ignored).
    func expire() {
        guard let work = claim() else { return }
        work?.cancel()
        reportToDeveloper(
            "the background fetch ran out of time before its completion handler was called: completing it as "
                + ".failed; call the completion handler within about 30 s")
        send(.failed)
    }
}
