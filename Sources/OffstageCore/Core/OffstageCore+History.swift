/// The history of scheduled work (SPEC SCH-8, decision 0044): what each pending request waited for and for how long,
/// and each run with how it ended. The core keeps only the open stretches (``TaskHistory``); everything else goes to
/// the shell as ``CoreAction/recordHistory(_:)``, which stores it and answers `offstage explain --history`.
extension OffstageCore {
    /// The app's refresh, processing and fetch requests wait as the scheduler found them now.
    mutating func observeWaits(_ id: AppID, _ waiting: [TaskHistory.Waiting], _ now: Instant) {
        emitHistory(history.observe(id, .scheduled, waiting: waiting, at: now))
    }

    /// Every queued continued-processing request waits for a slot, or for what keeps its app from starting one; apps
    /// that have none queued any more (started, cancelled, uninstalled) close theirs.
    mutating func observeContinuedWaits(_ now: Instant) {
        guard !continuedApps.isEmpty || !history.continuedApps.isEmpty else { return }
        for id in continuedApps.union(history.continuedApps).sorted() {
            guard let entry = apps[id], !entry.uninstalling else {
                observe(id, .continued, [], now)
                continue
            }
            let running = Set(entry.process?.runs.map(\.request.identifier) ?? [])
            let reason = continuedStartBlock(entry, now)?.reason ?? .continuedSlot
            let waiting = entry.durable.schedule.requests.values
                .filter { $0.kind == .continued && !running.contains($0.identifier) }
                .map { TaskHistory.Waiting(identifier: $0.identifier, kind: .continued, reasons: [reason]) }
            observe(id, .continued, waiting, now)
        }
    }

    private mutating func observe(_ id: AppID, _ scope: TaskHistory.Scope, _ waiting: [TaskHistory.Waiting], _ now: Instant) {
        emitHistory(history.observe(id, scope, waiting: waiting, at: now))
    }

    /// What one pending request waits for: its holds, or the policy's plan when nothing holds it.
    func waiting(_ request: TaskRequest, holds: [Hold]) -> TaskHistory.Waiting {
        TaskHistory.Waiting(
            identifier: request.identifier, kind: request.kind,
            reasons: holds.isEmpty ? [.plannedTime] : holds.map(\.waitReason))
    }

    /// A run starts: the request's wait ends, and the run is recorded as started.
    mutating func recordRunStarted(_ id: AppID, _ run: TaskRun, _ now: Instant) {
        emitHistory(history.stop(TaskKey(app: id, identifier: run.request.identifier), at: now))
        emit(.recordHistory(.run(RunRecord(
            app: id, identifier: run.request.identifier, kind: run.request.kind, run: run.id, startedAt: run.startedAt,
            forced: run.forced, start: run.start ?? .running))))
    }

    /// A run ended. `outcome` is nil when the app completed it; it is then completed, expired or cancelled by what
    /// happened to it before. `result` is what the app said, when it completed it.
    mutating func recordRunEnded(
        _ id: AppID, _ run: TaskRun, _ outcome: RunOutcome?, result: TaskResult?, detail: String?, _ now: Instant
    ) {
        var record = RunRecord(
            app: id, identifier: run.request.identifier, kind: run.request.kind, run: run.id, startedAt: run.startedAt,
            forced: run.forced, start: run.start ?? .running)
        record.endedAt = now
        record.outcome =
            outcome ?? (!run.expirationSent ? .completed : run.expiry == .cancelled ? .cancelled : .expired)
        record.result = result
        record.expiry = run.expirationSent ? run.expiry : nil
        record.detail = detail
        emit(.recordHistory(.run(record)))
    }

    /// How a run that the app's process ending cut short ended: cut off when it overran its grace period (the reason
    /// the process was ended), ended with the daemon when it shut down, else ended with the app.
    func outcomeOfCutOff(_ run: TaskRun, _ reason: TerminationReason?, _ now: Instant) -> RunOutcome {
        switch reason {
        case .taskOverrun where run.expirationSent && run.killAt.map({ now >= $0 }) == true: .cutOff
        case .shutdown: .daemonStopped
        default: .appEnded
        }
    }

    /// The daemon shuts down: every open wait closes now (the time it is down is not counted as waiting).
    mutating func closeAllWaits(_ now: Instant) {
        emitHistory(history.stopAll(at: now))
    }

    /// Hands out the waits opened during this input that are still open; called as the input ends.
    mutating func flushHistory() {
        emitHistory(history.flush())
    }

    private mutating func emitHistory(_ records: [HistoryRecord]) {
        for record in records { emit(.recordHistory(record)) }
    }

    /// Checks a question about the history of one app (or one of its identifiers) since `since` (SPEC SCH-8): the app
    /// is installed, the identifier is one it may use, and `since` is not after `now`.
    public func validateHistoryQuery(_ id: AppID, identifier: String?, since: Instant, at now: Instant) throws(CoreError) {
        let entry = try entry(id)
        if let identifier {
            try validateIdentifier(identifier)
            let manifest = entry.app.manifest
            let known =
                identifier == TaskRequest.fetchIdentifier
                ? manifest.declares(.fetch)
                : manifest.permits(identifier, .continued) || manifest.permittedTaskIdentifiers.contains(identifier)
            if !known {
                if identifier == TaskRequest.fetchIdentifier {
                    throw CoreError(
                        .notPermitted, "'\(id)' does not declare the 'fetch' background mode, so it has no fetch history",
                        fix: "add 'fetch' to UIBackgroundModes in the app's Info.plist")
                }
                throw notListed(identifier, id)
            }
        }
        guard since <= now else {
            throw CoreError(
                .invalidArgument, "the history cannot start at \(since.clockTime), after now (\(now.clockTime))",
                fix: "give a time in the past, e.g. --since 2h or --since 2025-01-31T08:00")
        }
    }
}
