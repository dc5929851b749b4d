import OffstageProtocol

/// The callbacks of scheduled background work (SPEC SCH-3, SCH-4). Each handler only starts the work: the run
/// lasts until the app completes it (`CompleteTask`), while the callback is answered as soon as the handler returns.
extension Application {
    func handleScheduledWork(_ callback: AppInterface.CallbackMessage) {
        guard let run = callback.run else {
            reportToDeveloper("ignored a \(callback.kind) callback without a run number (a daemon of another version?)")
            return
        }
        switch callback.kind {
        case "runTask":
            TaskScheduler.shared.startRun(
                run, identifier: callback.taskIdentifier ?? "", kind: callback.taskKind, title: callback.taskTitle,
                subtitle: callback.taskSubtitle)
        case "performFetch":
            performFetch(run)
        case "taskExpiring":
            TaskScheduler.shared.expireRun(run)
        default:
            break
        }
    }

    /// `performFetch`: calls the delegate's perform-fetch method with a completion handler that completes the run once.
    private func performFetch(_ run: UInt64) {
        let fetch = FetchRun(run: run)
        TaskScheduler.shared.track(fetch)
        guard let delegate else {
            reportToDeveloper("a background fetch arrived before the app has a delegate: completing it with .noData")
            fetch.complete(.noData)
            return
        }
        FetchRun.current = fetch
        defer { FetchRun.current = nil }
        delegate.application(self, performFetchWithCompletionHandler: { result in fetch.complete(result) })
    }
}
