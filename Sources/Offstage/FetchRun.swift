/// One legacy background fetch in progress: answers the daemon's `performFetch` run once, whichever comes first of
/// the app's completion handler and the run's expiration.
final class FetchRun: Sendable {
    /// The daemon's number for this run.
    let run: UInt64
    private let claim = RunClaim()

    /// The fetch whose delegate call is in progress on the main actor, so that the default delegate
    /// implementation can hand over the task it starts.
    @MainActor static var current: FetchRun?

    init(run: UInt64) { self.run = run }

    /// Keeps the Swift task doing the fetch, to cancel it if the run expires (at once if it has expired already).
    func attach(_ work: Task<Void, Never>) { claim.attach(work) }

    /// Completes the run; later calls are ignored.
    func complete(_ result: BackgroundFetchResult) {
        guard claim.claim() != nil else { return }
        send(result)
    }

    private func send(_ result: BackgroundFetchResult) {
        TaskScheduler.shared.runEnded(run)
        DaemonLink.shared.completeTask(run: run, result: result)
    }

    /// The run's time is over: completes it as failed, so that the app is not terminated, and cancels the async fetch
    /// (whose later completion is then ignored).
    func expire() {
        guard let claimed = claim.claim() else { return }
        claimed.work?.cancel()
        reportToDeveloper(
            "the background fetch ran out of time before its completion handler was called: completing it as "
                + ".failed; call the completion handler within about 30 s")
        send(.failed)
    }
}
