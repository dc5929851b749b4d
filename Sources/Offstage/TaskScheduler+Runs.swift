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
    func startRun(_ run: UInt64, identifier: String, kind: String?, title: String? = nil, subtitle: String? = nil) {
        let task: BackgroundTask =
            switch kind {
            case "refresh": AppRefreshTask(identifier: identifier, run: run)
            case "processing": ProcessingTask(identifier: identifier, run: run)
            case "continued": ContinuedProcessingTask(identifier: identifier, run: run, title: title, subtitle: subtitle)
            default: BackgroundTask(identifier: identifier, run: run)
            }
        let handler = state.withLock { state in
            // A continued-processing task has an identifier of its own, under the pattern its handler was registered
            // for (`com.example.export.*` runs `com.example.export.42`).
            let handler =
                state.handlers[identifier]
                ?? state.handlers.first { pattern, _ in
                    pattern.hasSuffix(".*") && identifier.count > pattern.count - 1 && identifier.hasPrefix(pattern.dropLast())
                }?.value
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

    /// The continued-processing tasks running now, for `Attach`: a restarted daemon takes them up again.
    func continuedRuns() -> [AppInterface.ContinuedRun] {
        let tasks = state.withLock { state in
            state.runs.values.compactMap { run -> ContinuedProcessingTask? in
                if case .task(let task) = run { return task as? ContinuedProcessingTask }
                return nil
            }
        }
        return tasks.sorted { $0.run < $1.run }.map {
            AppInterface.ContinuedRun(
                run: $0.run, identifier: $0.identifier, title: $0.title, subtitle: $0.subtitle,
                completed: $0.progress.completedUnitCount, total: $0.progress.totalUnitCount)
        }
    }

    /// Whether the run has started and not yet completed.
    func isRunning(_ run: UInt64) -> Bool { state.withLock { $0.runs[run] != nil } }

    /// A run was completed: forget it.
    func runEnded(_ run: UInt64) {
        _ = state.withLock { $0.runs.removeValue(forKey: run) }
    }
}
