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

    /// Keeps the Swift task doing the fetch, to cancel it if the run expires.
    func attach(_ work: Task<Void, Never>) {
        state.withLock { $0.work = work }
    }

    /// Completes the run; later calls are ignored.
    func complete(_ result: BackgroundFetchResult) {
        let first = state.withLock { state in
            guard !state.completed else { return false }
            state.completed = true
            state.work = nil
            return true
        }
        guard first else { return }
        TaskScheduler.shared.runEnded(run)
        DaemonLink.shared.completeTask(run: run, result: result)
    }

    /// The run's time is over: cancels the async fetch and completes as failed, so that the app is not terminated.
    func expire() {
        let (pending, work) = state.withLock { ($0.completed == false, $0.work) }
        guard pending else { return }
        work?.cancel()
        reportToDeveloper(
            "the background fetch ran out of time before its completion handler was called: completing it as "
                + ".failed; call the completion handler within about 30 s")
        complete(.failed)
    }
}
