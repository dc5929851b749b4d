/// Inspecting and forcing scheduled work (SPEC SCH-8, SCH-9): what is planned and why, and the debug commands that
/// have the same effects as a real decision, marked as forced in the log.
extension OffstageCore {
    /// Every request of one app, or of every app, with its plan and holds. A legacy fetch whose interval is `never`
    /// is not pending work and is left out unless `includingIdleFetch` (``explain(_:identifier:at:)`` shows it, to
    /// say why the app is never fetched).
    public func tasks(of id: AppID? = nil, includingIdleFetch: Bool = false, at now: Instant) throws(CoreError) -> [TaskStatus] {
        let ids: [AppID]
        if let id {
            _ = try entry(id)
            ids = [id]
        } else {
            ids = apps.keys.sorted()
        }
        let conditions = conditions(at: now)
        var result: [TaskStatus] = []
        for id in ids {
            guard let entry = apps[id] else { continue }
            for run in entry.process?.runs ?? [] {
                let label = run.forced ? " (forced)" : ""
                let summary =
                    if let progress = run.progress {
                        "running since \(run.startedAt.clockTime): \(QuotedText.quote(progress.title)) \(progress.description)"
                            + (run.endedBecause.map { "; ending: \($0)" } ?? "")
                    } else {
                        "running since \(run.startedAt.clockTime)\(label); expires at \(run.expiresAt.clockTime)"
                    }
                result.append(TaskStatus(
                    app: id, identifier: run.request.identifier, kind: run.request.kind, state: .running,
                    request: run.request, holds: [], planned: nil, run: run, summary: summary))
            }
            for request in entry.durable.schedule.requests.values.sorted(by: { $0.identifier < $1.identifier })
            where request.kind == .continued {
                result.append(TaskStatus(
                    app: id, identifier: request.identifier, kind: .continued, state: .pending, request: request,
                    holds: [], planned: nil, run: nil, summary: continuedQueueSummary(entry, now)))
            }
            let running = Set(entry.process?.runs.map(\.request.identifier) ?? [])
            for request in pendingRequests(of: entry) where !running.contains(request.identifier) {
                if request.kind == .fetch, entry.durable.schedule.fetchInterval == .never, !includingIdleFetch { continue }
                let holds = holds(on: request, of: entry, conditions, now: now)
                let key = TaskKey(app: id, identifier: request.identifier)
                let planned = holds.isEmpty ? plan[key] : nil
                result.append(TaskStatus(
                    app: id, identifier: request.identifier, kind: request.kind, state: .pending, request: request,
                    holds: holds, planned: planned, run: nil, summary: summary(holds: holds, planned: planned)))
            }
        }
        return result
    }

    /// Why one app's requests (or one of them) run when they do (SPEC SCH-8).
    public func explain(_ id: AppID, identifier: String? = nil, at now: Instant) throws(CoreError) -> [TaskStatus] {
        if let identifier { try validateIdentifier(identifier) }
        // A legacy fetch the app never turned on is explained when asked for, or when there is nothing else: an app that
        // declares `fetch` for the task scheduler's refreshes would otherwise read about a fetch it never used.
        let others = try tasks(of: id, at: now)
        let all = identifier != nil || others.isEmpty ? try tasks(of: id, includingIdleFetch: true, at: now) : others
        guard let identifier else { return all }
        let matching = all.filter { $0.identifier == identifier }
        guard matching.isEmpty else { return matching }
        let manifest = try entry(id).app.manifest
        if identifier == TaskRequest.fetchIdentifier {
            throw CoreError(
                .notPermitted, "'\(id)' does not declare the 'fetch' background mode, so it is never fetched",
                fix: "add 'fetch' to UIBackgroundModes in the app's Info.plist")
        }
        if manifest.permittedTaskIdentifiers.contains(identifier) {
            throw CoreError(
                .noSuchTask, "'\(id)' has no pending request '\(identifier)': it runs only after the app submits one",
                fix: "the app must call submit(_:) with a request for '\(identifier)'")
        }
        throw notListed(identifier, id)
    }

    func summary(holds: [Hold], planned: PlannedRun?) -> String {
        if !holds.isEmpty { return "waiting: " + holds.map(\.description).joined(separator: "; ") }
        guard let planned else { return "runnable: the policy has not planned it yet" }
        guard let at = planned.at else { return "not planned: \(planned.reason)" }
        return "planned for \(at.clockTime): \(planned.reason)"
    }

    /// Runs a pending request now, whatever the conditions and the policy (SPEC SCH-9 "run a task now").
    public mutating func runTaskNow(_ id: AppID, identifier: String, at now: Instant) throws(CoreError) -> [CoreAction] {
        try validateIdentifier(identifier)
        if identifier == TaskRequest.fetchIdentifier { return try fetchNow(id, at: now) }
        let entry = try forcedRunEntry(id, identifier)
        guard let request = entry.durable.schedule.requests[identifier] else {
            throw CoreError(
                .noSuchTask, "'\(id)' has no pending request '\(identifier)'",
                fix: "the app must submit one first; `offstage tasks \(id)` lists what is pending")
        }
        startRun(id, request, forced: true, now)
        return finish(now)
    }

    /// The legacy fetch now, whatever its interval (SPEC SCH-9, Xcode's "Simulate Background Fetch").
    public mutating func fetchNow(_ id: AppID, at now: Instant) throws(CoreError) -> [CoreAction] {
        let entry = try forcedRunEntry(id, TaskRequest.fetchIdentifier)
        guard entry.app.manifest.declares(.fetch) else {
            throw CoreError(
                .notPermitted, "'\(id)' does not declare the 'fetch' background mode",
                fix: "add 'fetch' to UIBackgroundModes in the app's Info.plist")
        }
        startRun(id, TaskRequest(identifier: TaskRequest.fetchIdentifier, kind: .fetch, submittedAt: now), forced: true, now)
        return finish(now)
    }

    /// Calls the expiration handler of a running task now (SPEC SCH-9 "expire a running task now").
    public mutating func expireTaskNow(_ id: AppID, identifier: String, at now: Instant) throws(CoreError) -> [CoreAction] {
        try validateIdentifier(identifier)
        let entry = try entry(id)
        guard let run = entry.process?.runs.first(where: { $0.request.identifier == identifier }) else {
            throw CoreError(
                .noSuchTask, "no run of '\(identifier)' is in progress in '\(id)'",
                fix: "start one with `offstage run-task \(id) \(identifier)`")
        }
        guard !run.expirationSent else {
            throw CoreError(
                .invalidArgument, "the expiration handler of '\(identifier)' in '\(id)' was already called",
                fix: "wait for the app to complete the task, or for the grace period to end")
        }
        expireRun(id, run: run.id, because: "forced", cause: .forced, now)
        return finish(now)
    }

    func forcedRunEntry(_ id: AppID, _ identifier: String) throws(CoreError) -> AppEntry {
        let entry = try entry(id)
        if shuttingDown {
            throw CoreError(.appNotRunning, "the daemon is shutting down", fix: "start it again and retry")
        }
        if entry.uninstalling {
            throw CoreError(.appNotRunning, "'\(id)' is being uninstalled", fix: "install it again to run its tasks")
        }
        if entry.process?.termination != nil {
            throw CoreError(.appNotRunning, "'\(id)' is being terminated", fix: "try again once it has exited")
        }
        if entry.durable.forceQuit {
            // LC-6 has one exception (significant location changes); a debug run is not it.
            throw CoreError(
                .unavailable, "'\(id)' was force-quit: nothing of it runs in the background until the user opens it",
                fix: "open it first (`offstage open \(id)`)")
        }
        // A forced run has the effects of a real decision, and no real decision runs such an app in the background.
        if !device.settings.multitaskingSupported {
            throw CoreError(
                .unavailable, "multitasking is off for the device, so '\(id)' cannot run '\(identifier)' in the background",
                fix: "turn it on with `offstage settings multitasking=on`")
        }
        if entry.app.manifest.exitsOnSuspend {
            throw CoreError(
                .unavailable,
                "'\(id)' declares UIApplicationExitsOnSuspend, so it never runs '\(identifier)' in the background",
                fix: "remove UIApplicationExitsOnSuspend from its Info.plist to let it run background work")
        }
        if entry.process?.runs.contains(where: { $0.request.identifier == identifier }) == true {
            throw CoreError(
                .alreadyRunning, "'\(identifier)' is already running in '\(id)'",
                fix: "expire it with `offstage expire-task \(id) \(identifier)` or wait for it to complete")
        }
        return entry
    }
}
