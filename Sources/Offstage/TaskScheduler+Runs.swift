import OffstageProtocol

/// The daemon's side of a run: start it, expire it, forget it once completed (SPEC SCH-3, SCH-4).
extension TaskScheduler {
    /// did-finish-launching returned: from now on registering is refused (SPEC SCH-1).
    func launchFinished() {
        state.withLock { $0.launchFinished = true }
    }

    /// `runTask`: calls the launch handler registered for `identifier` with a new task; with none registered, the
    /// run is completed as failed at once.
    @MainActor
    func startRun(_ run: UInt64, identifier: String, kind: String?) {
        let task: BackgroundTask =
            switch kind {
            case "refresh": AppRefreshTask(identifier: identifier, run: run)
            case "processing": ProcessingTask(identifier: identifier, run: run)
            default: BackgroundTask(identifier: identifier, run: run)
            }
        let handler = state.withLock { state in
            let handler = state.handlers[identifier]
            if handler != nil { state.runs[run] = .task(task) }
            return handler
        }
        guard let handler else {
            reportToDeveloper(
                "no launch handler is registered for task '\(identifier)': completing the run as failed; call "
                    + "TaskScheduler.shared.register(forTaskWithIdentifier: \"\(identifier)\", using: nil) { … } "
                    + "before application(_:didFinishLaunchingWithOptions:) returns")
            link.completeTask(run: run, result: .failed)
            return
        }
        handler(task)
    }

    /// Keeps a fetch run until it completes.
    func track(_ fetch: FetchRun) {
        state.withLock { $0.runs[fetch.run] = .fetch(fetch) }
    }

    /// `taskExpiring`: the run's time is running out.
    @MainActor
    func expireRun(_ run: UInt64) {
        switch state.withLock({ $0.runs[run] }) {
        case .task(let task): task.expire()
        case .fetch(let fetch): fetch.expire()
        case nil: break  // already completed
        }
    }

    /// A run was completed: forget it.
    func runEnded(_ run: UInt64) {
        _ = state.withLock { $0.runs.removeValue(forKey: run) }
    }
}
