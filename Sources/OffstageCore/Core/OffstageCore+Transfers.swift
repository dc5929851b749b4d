/// Background transfers (SPEC §5): apps open sessions and create tasks; the ``TransferQueue`` decides what runs, the
/// shell moves the bytes and reports back. When all of a session's tasks have finished and the app is not running,
/// it is launched into the background (reason `transfer-events`) — or resumed — to hear of them, at most as often as
/// the doubling relaunch delay allows (TR-3). A force-quit cancels the app's transfers (TR-2).
extension OffstageCore {
    /// The transfer numbers.
    public var transferLimits: TransferLimits { configuration.transfers }

    // MARK: The app's calls

    /// The app opens (or reconfigures) its background session `identifier`.
    public mutating func openTransferSession(
        _ id: AppID, pid: Int32, identifier: String, configuration sessionConfiguration: TransferSessionConfiguration, at now: Instant
    ) throws(CoreError) -> [CoreAction] {
        _ = try runningProcess(id, pid: pid)
        try Self.checkSessionIdentifier(identifier)
        let key = TransferSessionKey(app: id, identifier: identifier)
        perform(transfers.open(key, sessionConfiguration))
        apps[id]?.process?.transferSessionsOpen.insert(identifier)
        return finish(now)
    }

    /// The app creates a task in its session `session`. Checks the request; the task is journaled by the returned
    /// actions (the shell writes them before it answers the app, SPEC TR-6).
    public mutating func createTransfer(
        _ id: AppID, pid: Int32, session: String, request: TransferRequest, at now: Instant
    ) throws(CoreError) -> (task: TransferTask, actions: [CoreAction]) {
        _ = try runningProcess(id, pid: pid)
        let key = TransferSessionKey(app: id, identifier: session)
        guard transfers.sessions[key] != nil else { throw Self.unknownSession(key) }
        var request = request
        try checkTransferRequest(&request, now)
        guard transfers.unfinishedCount(of: id) < transferLimits.maximumTasksPerApp else {
            throw CoreError(
                .tooManyPendingRequests, "'\(id)' already has \(transferLimits.maximumTasksPerApp) unfinished transfers",
                fix: "wait for some to finish or cancel them; the limit is the setting transfers.maximumTasksPerApp")
        }
        let task = TransferTask(id: takeNumber(), app: id, session: session, request: request, at: now)
        perform(transfers.add(task))
        log(now, id, .transfer, "transfer \(task.id) created in session '\(session)': \(request.kind.rawValue) \(request.url)")
        return (task, finish(now))
    }

    /// The tasks of the app's session, finished ones first being the events the app has not acknowledged. Fetching
    /// them ends the wait for the app to hear of them.
    public mutating func fetchTransferEvents(
        _ id: AppID, pid: Int32, session: String, at now: Instant
    ) throws(CoreError) -> (tasks: [TransferTask], actions: [CoreAction]) {
        _ = try runningProcess(id, pid: pid)
        let key = TransferSessionKey(app: id, identifier: session)
        guard transfers.sessions[key] != nil else { throw Self.unknownSession(key) }
        perform(transfers.eventsFetched(key))
        return (transfers.tasks(in: key), finish(now))
    }

    /// The app handled these finished tasks' events (its delegate returned): they are forgotten, with the files it did
    /// not move away. Ids of unfinished tasks, and unknown ids, are ignored.
    public mutating func acknowledgeTransfers(
        _ id: AppID, pid: Int32, session: String, ids: [UInt64], at now: Instant
    ) throws(CoreError) -> [CoreAction] {
        _ = try runningProcess(id, pid: pid)
        let key = TransferSessionKey(app: id, identifier: session)
        guard transfers.sessions[key] != nil else { throw Self.unknownSession(key) }
        let (actions, forgotten) = transfers.acknowledge(key, ids)
        perform(actions)
        if !forgotten.isEmpty {
            log(now, id, .transfer, "events of transfer \(forgotten.map(String.init).joined(separator: ", ")) handled by the app")
        }
        return finish(now)
    }

    /// The app's handler of a session's events called its completion handler (run `run` of the `transferEvents`
    /// callback): it may be suspended again. Completing a run that has ended is harmless and logged; a number that is
    /// not one of this process's runs is refused (`noSuchTask`).
    public mutating func completeTransferEvents(_ id: AppID, pid: Int32, run runID: UInt64, at now: Instant) throws(CoreError) -> [CoreAction] {
        _ = try runningProcess(id, pid: pid)
        guard let index = apps[id]?.process?.transferRuns.firstIndex(where: { $0.id == runID }),
            let run = apps[id]?.process?.transferRuns.remove(at: index)
        else {
            try requireEndedRun(id, runID, "session-events")
            log(now, id, .warning, "completion of finished transfer-events run \(runID) ignored")
            return finish(now)
        }
        log(now, id, .transfer, "events of session '\(run.session)' handled after \(format((now - run.startedAt).inSeconds)) s")
        touched.insert(id)
        return finish(now)
    }

    /// Cancels, pauses or resumes a task: `app` is the caller's app (an app acts only on its own tasks), nil for the
    /// user (`offstage transfers`).
    public mutating func changeTransfer(_ taskID: UInt64, _ change: TransferChange, app: AppID?, at now: Instant) throws(CoreError) -> [CoreAction] {
        guard let task = transfers.tasks[taskID], app == nil || task.app == app else {
            throw CoreError(
                .noSuchTask, "no transfer \(taskID)\(app.map { " of '\($0)'" } ?? "")",
                fix: app == nil ? "list them with `offstage transfers`" : "use the id the task was created with")
        }
        let who = app == nil ? "by hand" : "by the app"
        switch change {
        case .cancel:
            guard !task.state.isFinished else {
                throw CoreError(.invalidArgument, "transfer \(taskID) has already \(task.state.rawValue)", fix: "nothing to cancel")
            }
            let (actions, _) = transfers.fail(taskID, TransferFailure(.cancelled, "cancelled \(who)"), at: now)
            perform(actions)
            log(now, task.app, .transfer, "transfer \(taskID) cancelled \(who)")
        case .pause:
            guard task.state == .waiting || task.state == .running else {
                throw CoreError(.invalidArgument, "transfer \(taskID) is \(task.state.rawValue), not waiting or running", fix: "pause a waiting or running transfer")
            }
            perform(transfers.pause(taskID))
            log(now, task.app, .transfer, "transfer \(taskID) paused \(who)")
        case .resume:
            guard task.state == .paused else {
                throw CoreError(.invalidArgument, "transfer \(taskID) is \(task.state.rawValue), not paused", fix: "resume a paused transfer")
            }
            perform(transfers.resume(taskID))
            log(now, task.app, .transfer, "transfer \(taskID) resumed \(who)")
        }
        return finish(now)
    }

    // MARK: The shell's reports

    /// Puts back the journaled transfers, after ``restore(_:durable:)`` of every app; those of apps no longer
    /// installed are forgotten. Tasks that were running resume from their checkpoints.
    public mutating func restoreTransfers(
        tasks restored: [TransferTask], sessions: [TransferSession], relaunches: [AppID: TransferRelaunches]
    ) -> [CoreAction] {
        var actions = transfers.restore(
            tasks: restored.filter { apps[$0.app] != nil }, sessions: sessions.filter { apps[$0.key.app] != nil },
            relaunches: relaunches.filter { apps[$0.key] != nil })
        for task in restored where apps[task.app] == nil { actions.append(.delete(task)) }
        for session in sessions where apps[session.key.app] == nil { actions.append(.deleteSession(session.key)) }
        return actions.map { .transfer($0) }
    }

    /// An attempt moved bytes (a checkpoint), or began again from zero (`restarted` says why).
    public mutating func transferProgress(
        _ taskID: UInt64, attempt: UInt64, bytesDone: Int64, bytesExpected: Int64?, validator: TransferValidator?,
        restarted: String? = nil, at now: Instant
    ) -> [CoreAction] {
        let before = transfers.tasks[taskID]?.bytesDone
        let actions = transfers.progress(taskID, attempt: attempt, bytesDone: bytesDone, bytesExpected: bytesExpected, validator: validator, at: now)
        guard let task = transfers.tasks[taskID], !actions.isEmpty else { return finish(now) }
        if let before { countTransferred(task.app, task.request.kind, bytes: task.bytesDone - before) }
        outbox.append(contentsOf: actions.map { .transfer($0) })
        if let restarted { log(now, task.app, .transfer, "transfer \(taskID) starts again from zero: \(restarted)") }
        signalProgress(task, now)
        return finish(now)
    }

    /// An attempt ended.
    public mutating func transferEnded(_ taskID: UInt64, attempt: UInt64, _ result: TransferAttemptResult, at now: Instant) -> [CoreAction] {
        let before = transfers.tasks[taskID]?.bytesDone
        let (actions, finished) = transfers.ended(taskID, attempt: attempt, result, at: now, transferLimits)
        if let before, let task = finished ?? transfers.tasks[taskID] {
            countTransferred(task.app, task.request.kind, bytes: task.bytesDone - before)
        }
        perform(actions)
        if let task = transfers.tasks[taskID], !actions.isEmpty {
            switch result {
            case .transient(let message, _), .file(let message):
                log(now, task.app, .transfer, "transfer \(taskID) failed (\(message)); tries again at \(task.retryAt?.clockTime ?? "?")")
            case .cancelled:
                break
            default:
                if let finished { transferFinished(finished, now) }
            }
        }
        return finish(now)
    }

    // MARK: Inside the core

    /// Carries out the queue's actions.
    mutating func perform(_ actions: [TransferAction]) {
        for action in actions { emit(.transfer(action)) }
    }

    /// A task finished: logged, and the app hears of it if it has the session open right now.
    mutating func transferFinished(_ task: TransferTask, _ now: Instant) {
        let how = task.state == .completed
            ? "completed (\(task.bytesDone) bytes\(task.httpStatus.map { ", HTTP \($0)" } ?? ""))"
            : "failed: \(task.failure?.message ?? "?")"
        log(now, task.app, .transfer, "transfer \(task.id) \(how)")
        signalProgress(task, now, force: true)
    }

    /// Tells a running app that has the session open that its tasks moved on: a finished task (`force`) whenever the
    /// app runs, progress only while it is in front and at most once a second per session — in the background a
    /// callback a second would keep it from ever being suspended, and the platform gives no progress there either.
    mutating func signalProgress(_ task: TransferTask, _ now: Instant, force: Bool = false) {
        guard let process = apps[task.app]?.process, process.transferSessionsOpen.contains(task.session),
            process.attached, !process.frozen, process.termination == nil, force || process.phase.isForeground
        else { return }
        let kind = CallbackKind.transferEvents(session: task.session, run: nil)
        guard !process.queue.contains(kind) else { return }
        if !force, let last = process.transferSignals[task.session], now - last < .seconds(1) { return }
        apps[task.app]?.process?.transferSignals[task.session] = now
        enqueue(task.app, kind)
    }

    /// What holds a task back at `now`, from its app's settings, the device's conditions and the task's own times;
    /// empty when it may run (it may still wait for a slot).
    public func transferHolds(_ task: TransferTask, at now: Instant) -> [Hold] {
        guard let entry = apps[task.app] else { return [] }
        return transferHolds(task, entry, conditions(at: now), now)
    }

    /// Why a waiting task does not run, for people: each condition that holds it back, or the slots others have.
    public func transferWaitingFor(_ task: TransferTask, at now: Instant) -> [String] {
        guard task.state == .waiting else { return [] }
        let holds = transferHolds(task, at: now)
        if !holds.isEmpty { return holds.map(\.description) }
        let running = transfers.tasks.values.filter { $0.state == .running }
        let ofApp = running.filter { $0.app == task.app }.count
        if ofApp >= transferLimits.maximumRunningPerApp { return ["the app has \(ofApp) transfers running, its most at once"] }
        return ["\(running.count) transfers are running, of \(transferLimits.maximumRunning) at once; it runs when a slot is free"]
    }

    func transferHolds(_ task: TransferTask, _ entry: AppEntry, _ conditions: DeviceConditions, _ now: Instant) -> [Hold] {
        let session = transfers.sessions[TransferSessionKey(app: task.app, identifier: task.session)]?.configuration ?? .init()
        return Self.transferHolds(task, entry, session, conditions, dataSaver: device.settings.dataSaver, now)
    }

    static func transferHolds(
        _ task: TransferTask, _ entry: AppEntry, _ session: TransferSessionConfiguration, _ conditions: DeviceConditions,
        dataSaver: Bool, _ now: Instant
    ) -> [Hold] {
        var holds: [Hold] = []
        let settings = entry.app.settings
        let inFront = entry.process?.phase.isForeground == true
        if !inFront && !settings.backgroundActivity { holds.append(.backgroundActivityOff) }
        if let earliest = task.request.earliestBegin, earliest > now { holds.append(.earliestBegin(earliest)) }
        if let retry = task.retryAt, retry > now { holds.append(.retryBackoff(until: retry)) }
        switch conditions.network {
        case .none: holds.append(.noNetwork)
        case .metered:
            if !session.allowsMeteredNetwork { holds.append(.meteredNotAllowed) }
            if !inFront && !settings.backgroundData { holds.append(.backgroundDataRestricted) }
            if !inFront && dataSaver && !settings.unrestrictedData { holds.append(.dataSaver) }
        case .unmetered: break
        }
        if (task.request.discretionary || session.discretionary) && !inFront {
            if conditions.network == .metered { holds.append(.unmeteredNetworkWanted) }
            if !conditions.charging { holds.append(.externalPower) }
            if conditions.lowPowerMode { holds.append(.lowPowerMode) }
        }
        return holds
    }

    /// Decides what runs, when anything it depends on changed; then wakes apps for the events of finished sessions.
    mutating func decideTransfers(_ now: Instant) {
        let conditions = conditions(at: now)
        let inputs = TransferInputs(conditions: conditions, foreground: device.foregroundApp, dataSaver: device.settings.dataSaver)
        if inputs != transferInputs {
            transferInputs = inputs
            transfers.dirty = true
        }
        let due = transfers.nextLift.map { $0 <= now } ?? false
        let relaunchDue = transferRelaunchAt.map { $0 <= now } ?? false
        guard transfers.dirty || due || relaunchDue else { return }
        if transfers.dirty || due {
            // What the holds are read from, copied out of `self` (the queue changes while it asks).
            let (apps, sessions, stopping, dataSaver) = (apps, transfers.sessions, shuttingDown, device.settings.dataSaver)
            let (actions, timedOut) = transfers.decide(at: now, transferLimits, foreground: device.foregroundApp) { task in
                guard !stopping, let entry = apps[task.app] else { return [.terminating] }
                let session = sessions[TransferSessionKey(app: task.app, identifier: task.session)]?.configuration ?? .init()
                return Self.transferHolds(task, entry, session, conditions, dataSaver: dataSaver, now)
            }
            perform(actions)
            for task in timedOut { transferFinished(task, now) }
        }
        wakeForTransferEvents(now)
    }

    /// Launches or resumes the apps whose sessions finished (SPEC TR-3), and notes when a delayed launch is due.
    mutating func wakeForTransferEvents(_ now: Instant) {
        transferRelaunchAt = nil
        guard !shuttingDown else { return }
        for key in transfers.sessionsWithEventsDue() {
            guard let entry = apps[key.app], !entry.uninstalling, !entry.durable.forceQuit else { continue }
            if let process = entry.process {
                guard process.termination == nil else { continue }
                if process.transferSessionsOpen.contains(key.identifier), !process.frozen, process.attached {
                    // Running with the session open: its delegate hears of them directly.
                    perform(transfers.eventsSignalled(key))
                    enqueue(key.app, .transferEvents(session: key.identifier, run: nil))
                    continue
                }
                guard entry.app.settings.backgroundActivity || process.phase.isForeground else { continue }
                perform(transfers.eventsSignalled(key))
                let how = process.frozen ? "resumed" : "running"
                if process.frozen { wakeInBackground(key.app, now) }
                startTransferEventsRun(key, how, now)
                continue
            }
            guard entry.app.settings.backgroundActivity, !exitsOnSuspend(entry) else { continue }
            if let notBefore = entry.durable.crashLoop.notBefore, now < notBefore {
                considerTransferRelaunch(notBefore)
                continue
            }
            let limits = transferLimits
            if let notBefore = transfers.relaunches[key.app]?.notBefore(base: limits.relaunchDelay, cap: limits.maximumRelaunchDelay),
                now < notBefore
            {
                considerTransferRelaunch(notBefore)
                continue
            }
            perform(transfers.eventsSignalled(key))
            perform(transfers.relaunched(key.app, at: now))
            launch(key.app, .transferEvents, now)
            startTransferEventsRun(key, "launched into the background", now)
        }
    }

    private mutating func considerTransferRelaunch(_ at: Instant) {
        if transferRelaunchAt == nil || at < transferRelaunchAt! { transferRelaunchAt = at }
    }

    /// Calls the app's handler of the session's events; it has ``TransferLimits/eventsHandlerTime`` to call its
    /// completion handler.
    mutating func startTransferEventsRun(_ key: TransferSessionKey, _ how: String, _ now: Instant) {
        let run = TransferEventsRun(
            id: takeNumber(), session: key.identifier, startedAt: now, deadline: now + .seconds(double: transferLimits.eventsHandlerTime))
        apps[key.app]?.process?.transferRuns.append(run)
        apps[key.app]?.process?.started(run: run.id)
        enqueue(key.app, .transferEvents(session: key.identifier, run: run.id))
        log(now, key.app, .transfer, "session '\(key.identifier)' finished: handle-events-for-background-session called (\(how))")
        scheduleAgain(key.app)
        touched.insert(key.app)
    }

    /// Ends handler runs that overran: the app is not terminated (the platform suspends it), but it is no longer kept
    /// running for them.
    mutating func settleTransferRuns(_ id: AppID, _ now: Instant) {
        guard let runs = apps[id]?.process?.transferRuns, runs.contains(where: { now >= $0.deadline }) else { return }
        for run in runs where now >= run.deadline {
            log(now, id, .warning, "the handler of session '\(run.session)' events did not call its completion handler within \(format(transferLimits.eventsHandlerTime)) s; the app may be suspended")
        }
        apps[id]?.process?.transferRuns.removeAll { now >= $0.deadline }
    }

    /// The process is gone: a session whose events it had not fetched is due again.
    mutating func cutOffTransferRuns(_ id: AppID) {
        guard let process = apps[id]?.process else { return }
        for session in Set(process.transferRuns.map(\.session)).union(process.transferSessionsOpen).sorted() {
            let key = TransferSessionKey(app: id, identifier: session)
            if transfers.sessions[key]?.eventsSignalled == true { perform(transfers.eventsFetched(key)) }
        }
        transfers.dirty = true
    }

    /// The user force-quit the app: its unfinished transfers are cancelled (SPEC TR-2); it hears of them when it next
    /// opens the session.
    mutating func cancelTransfersOnForceQuit(_ id: AppID, _ now: Instant) {
        var cancelled: [UInt64] = []
        for task in transfers.tasks(of: id) where !task.state.isFinished {
            let (actions, _) = transfers.fail(task.id, TransferFailure(.forceQuit, "the user force-quit the app"), at: now)
            perform(actions)
            cancelled.append(task.id)
        }
        if !cancelled.isEmpty {
            log(now, id, .transfer, "transfers \(cancelled.map(String.init).joined(separator: ", ")) cancelled: the user force-quit the app")
        }
    }
}
