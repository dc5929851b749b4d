/// Running scheduled work (SPEC SCH-3, SCH-4): the app is resumed or launched into the background, its handler is
/// called, its runtime is bounded by an expiration and a grace period, and its result teaches the policy.
extension OffstageCore {
    /// Starts a run of `request`: launches the app into the background, thaws it, or sends the handler to it.
    mutating func startRun(_ id: AppID, _ request: TaskRequest, forced: Bool, _ now: Instant, why: String? = nil) {
        // The holds and the debug verbs keep these out already; this guard keeps any new path from breaking LC-7.
        guard var entry = apps[id], !entry.uninstalling, !exitsOnSuspend(entry) else { return }
        var run = TaskRun(
            id: takeNumber(), request: request, startedAt: now, expiresAt: now + configuration.runtime(of: request.kind),
            forced: forced, onBattery: !conditions(at: now).charging)
        if request.kind == .fetch {
            entry.durable.schedule.lastFetchAt = now
        } else {
            entry.durable.schedule.requests[request.identifier] = nil
        }
        if let details = request.continued {
            // The user's own work, not the scheduler's: it is not run again after a restart, nor counted as a refresh.
            run.progress = ContinuedProgress(title: details.title, subtitle: details.subtitle, reportedAt: now)
        } else {
            entry.durable.schedule.started[request.identifier] = request
            entry.durable.schedule.results.lastRunAt = now
        }
        apps[id] = entry
        emit(.saveApp(id))
        let how: String
        if entry.process == nil {
            launch(id, request.kind.launchReason, now)
            how = "launched into the background"
            run.start = .launched
        } else if entry.process?.frozen == true {
            wakeInBackground(id, now)
            how = "resumed"
            run.start = .resumed
        } else {
            how = "running"
            run.start = .running
        }
        apps[id]?.process?.runs.append(run)
        apps[id]?.process?.started(run: run.id)
        recordRunStarted(id, run, now)
        showContinued(id, run)
        enqueue(
            id,
            request.kind == .fetch
                ? .performFetch(run: run.id)
                : .runTask(run: run.id, identifier: request.identifier, kind: request.kind, details: request.continued))
        let label = runLabel(run)
        log(now, id, .taskRun, "\(label) started (\(how))\(forced ? " — forced" : why.map { ": " + $0 } ?? "")")
        touched.insert(id)
    }

    /// The app completed a run (`setTaskCompleted`, or the fetch completion handler). `pid` comes from the caller's
    /// connection. Completing a run that has ended (its deadline came first) is harmless and logged; a number that
    /// is not one of this process's runs is refused (`noSuchTask`).
    public mutating func completeTask(
        _ id: AppID, pid: Int32, run runID: UInt64, result: TaskResult, at now: Instant
    ) throws(CoreError) -> [CoreAction] {
        _ = try runningProcess(id, pid: pid)
        guard let index = apps[id]?.process?.runs.firstIndex(where: { $0.id == runID }),
            let run = apps[id]?.process?.runs.remove(at: index)
        else {
            if let process = apps[id]?.process, !process.attached, process.reattachDeadline != nil, runID < firstNumber {
                // Found alive after a restart and not reattached yet: the app completed a run of the previous daemon's,
                // which its report, read before, may still list as running.
                apps[id]?.process?.completedBeforeReport.insert(runID)
                log(now, id, .taskDone, "task run \(runID) of the previous daemon completed before the app reported what it runs")
                return finish(now)
            }
            try requireEndedRun(id, runID, "task")
            log(now, id, .warning, "completion of finished task run \(runID) ignored")
            return finish(now)
        }
        endRun(id, run, result, now)
        return finish(now)
    }

    /// Nothing when `runID` is a run of the app's process that has ended (a harmless late completion); `noSuchTask`
    /// when it never was one of its runs (another app's, a number made up, one from before a restart).
    func requireEndedRun(_ id: AppID, _ runID: UInt64, _ kind: String) throws(CoreError) {
        guard apps[id]?.process?.recentRuns.contains(runID) != true else { return }
        throw CoreError(
            .noSuchTask, "'\(id)' has no \(kind) run \(runID)",
            fix: "complete the run the daemon handed to the handler, with the number it carries")
    }

    /// Records the end of a run: result, budget, and the request's return to pending if the run was cut off.
    /// `outcome` says how a run that was cut off ended (nil when the app completed it).
    mutating func endRun(
        _ id: AppID, _ run: TaskRun, _ result: TaskResult, _ now: Instant, cutOff: String? = nil, outcome: RunOutcome? = nil
    ) {
        let detail = [run.endedBecause, cutOff].compactMap { $0 }.joined(separator: "; ")
        recordRunEnded(
            id, run, cutOff == nil ? nil : outcome ?? .appEnded, result: cutOff == nil ? result : nil,
            detail: detail.isEmpty ? nil : detail, now)
        if let progress = run.progress {
            endContinuedRun(id, run, progress, result, now, cutOff: cutOff)
            return
        }
        guard var schedule = apps[id]?.durable.schedule else { return }
        let seconds = (now - run.startedAt).inSeconds
        schedule.results.record(result, at: now, startedAt: run.startedAt)
        if run.onBattery { schedule.budget.spend(seconds, on: configuration.localClock.day(now)) }
        if schedule.started[run.request.identifier] == run.request { schedule.started[run.request.identifier] = nil }
        let identifier = run.request.identifier
        if cutOff != nil, run.request.kind != .fetch, schedule.requests[identifier] == nil {
            // The app never got to finish or resubmit: the request stays pending rather than being lost.
            schedule.requests[identifier] = run.request
        }
        apps[id]?.durable.schedule = schedule
        emit(.saveApp(id))
        let label = run.request.kind == .fetch ? "background fetch" : "task '\(identifier)'"
        if let cutOff {
            log(now, id, .taskDone, "\(label) cut off after \(format(seconds)) s: \(cutOff)")
        } else {
            log(now, id, .taskDone, "\(label) completed after \(format(seconds)) s: \(result.rawValue)")
        }
        scheduleAgain(id)
        touched.insert(id)
    }

    /// Calls a run's expiration handler now; the app must complete it within the grace period.
    mutating func expireRun(_ id: AppID, run runID: UInt64, because why: String, cause: RunExpiry, _ now: Instant) {
        guard let index = apps[id]?.process?.runs.firstIndex(where: { $0.id == runID }),
            let run = apps[id]?.process?.runs[index], !run.expirationSent
        else { return }
        let killAt = now + configuration.taskGrace
        apps[id]?.process?.runs[index].expirationSent = true
        apps[id]?.process?.runs[index].killAt = killAt
        apps[id]?.process?.runs[index].expiry = cause
        enqueue(id, .taskExpiring(run: runID))
        let label = run.progress != nil ? runLabel(run) : run.request.kind == .fetch ? "background fetch" : "task '\(run.request.identifier)'"
        log(now, id, .taskExpire, "\(label): expiration handler due (\(why))")
    }

    /// Brings an app's runs up to date: expirations due, and overruns past their grace period.
    /// Returns true when the app was terminated.
    mutating func settleRuns(_ id: AppID, _ now: Instant) -> Bool {
        guard let runs = apps[id]?.process?.runs else { return false }
        for run in runs {
            if let killAt = run.killAt, now >= killAt {
                let seconds = (now - run.startedAt).inSeconds
                terminate(id, .taskOverrun(identifier: run.request.identifier, seconds: seconds), .signal, now)
                return true
            }
            if !run.expirationSent, now >= run.expiresAt {
                if let progress = run.progress {
                    let silence = format((now - progress.reportedAt).inSeconds)
                    endContinued(id, run, because: "it reported no progress for \(silence) s", cause: .noProgress, now)
                } else {
                    expireRun(
                        id, run: run.id, because: "runtime of \(format((run.expiresAt - run.startedAt).inSeconds)) s is over",
                        cause: .runtime, now)
                }
            }
        }
        return false
    }

    /// The process is gone: every run it had is cut off and its request pending again.
    mutating func cutOffRuns(_ id: AppID, _ status: ExitStatus, _ now: Instant) {
        guard let runs = apps[id]?.process?.runs, !runs.isEmpty else { return }
        let reason = apps[id]?.process?.termination?.reason
        apps[id]?.process?.runs = []
        // Why the system ended it, where it did: explain's history then tells a run cut off by memory pressure or a
        // watchdog from a crash (SPEC SCH-8, MEM-1).
        let ended = reason.map { "the app was ended: \($0) (\(status))" } ?? "the app \(status)"
        for run in runs {
            endRun(id, run, .failed, now, cutOff: ended, outcome: outcomeOfCutOff(run, reason, now))
        }
    }

    /// A continued-processing run ended: its slot is free for the next queued request. It teaches the refresh policy
    /// nothing and spends no daily budget (the user asked for it), and a run cut off is not run again.
    mutating func endContinuedRun(_ id: AppID, _ run: TaskRun, _ progress: ContinuedProgress, _ result: TaskResult, _ now: Instant, cutOff: String?) {
        let seconds = format((now - run.startedAt).inSeconds)
        let label = runLabel(run)
        let outcome = result == .failed ? "failed" : "succeeded"
        let why = [run.endedBecause, cutOff].compactMap { $0 }.joined(separator: "; ")
        log(now, id, .taskDone, "\(label) \(outcome) after \(seconds) s at \(progress.description)\(why.isEmpty ? "" : " — \(why)")")
        emit(.continuedProgress(id, run: run.id, nil))
        scheduleAgain(id)
        touched.insert(id)
    }

    /// How the log names a run.
    func runLabel(_ run: TaskRun) -> String {
        switch run.request.kind {
        case .fetch: "background fetch"
        case .continued: "continued-processing task '\(run.request.identifier)' (\(QuotedText.quote(run.progress?.title ?? "")))"
        case .appRefresh, .processing: "\(run.request.kind.rawValue) task '\(run.request.identifier)'"
        }
    }
}
