/// Inputs about processes: launched, failed to launch, attached, detached, exited, adopted after a restart.
extension OffstageCore {
    /// Starts the app's process with `reason`, queueing did-finish-launching (and did-become-active in front).
    mutating func launch(_ id: AppID, _ reason: LaunchReason, _ now: Instant) {
        guard let entry = apps[id], entry.process == nil, !shuttingDown else { return }
        let foreground = reason.isForeground
        var process = AppProcess(
            launch: takeNumber(), reason: reason, phase: foreground ? .inactive : .background, startedAt: now,
            ledger: BackgroundTaskLedger(expirationWarning: configuration.warning))
        process.launchDeadline = now + configuration.launch
        process.queue = foreground ? [.didFinishLaunching(reason), .didBecomeActive] : [.didFinishLaunching(reason)]
        // The user's answers to its notifications follow the launch (SPEC NT-2).
        process.queue += notifications.takeResponses(id).map { .notificationResponse($0) }
        if !foreground { process.ledger.enterBackground(at: now, budget: configuration.budget) }
        apps[id]?.process = process
        modes.voip.relaunchDone(id)
        scheduleAgain(id)
        emit(.launch(id, LaunchPlan(launch: process.launch, reason: reason)))
        log(now, id, .state, foreground ? "launching (\(reason.rawValue))" : "launching into the background (\(reason.rawValue))",
            state: process.phase)
        touched.insert(id)
    }

    /// The shell started the process of launch number `launch`.
    public mutating func processStarted(_ id: AppID, launch: UInt64, pid: Int32, at now: Instant) -> [CoreAction] {
        guard var process = apps[id]?.process, process.launch == launch else { return finish(now) }
        process.pid = pid
        apps[id]?.process = process
        memory.processStarted(at: now, configuration.memory)
        log(now, id, .launch, "started as pid \(pid) (\(process.reason.rawValue))")
        if let termination = process.termination {
            // Termination was requested before the pid was known.
            emit(termination.stage == .killed ? .kill(id, pid: pid) : .terminate(id, pid: pid))
        }
        touched.insert(id)
        return finish(now)
    }

    /// The shell could not start the process of launch number `launch`.
    public mutating func launchFailed(_ id: AppID, launch: UInt64, message: String, at now: Instant) -> [CoreAction] {
        guard let process = apps[id]?.process, process.launch == launch else { return finish(now) }
        log(now, id, .launchFailed, message)
        apps[id]?.process?.termination = TerminationProgress(reason: .launchFailed(message), stage: .killed, escalateAt: nil)
        processGone(id, status: .exited(127), now)
        return finish(now)
    }

    /// The app's process exited (or was killed).
    ///
    /// - Parameter outOfMemory: The app's memory group counted an out-of-memory kill since the process started (SPEC
    ///   MEM-2). With a SIGKILL, or an adopted process's status the shell could not see, and a manifest limit, the
    ///   kernel ended it over that limit; a termination the core began keeps its own reason.
    public mutating func processExited(
        _ id: AppID, pid: Int32, status: ExitStatus, outOfMemory: Bool = false, at now: Instant
    ) -> [CoreAction] {
        guard let process = apps[id]?.process, process.pid == pid else { return finish(now) }
        processGone(id, status: status, outOfMemory: outOfMemory, now)
        return finish(now)
    }

    /// A process the previous daemon started was found gone at start, after that daemon had sent it SIGKILL for a reason
    /// it wrote down first (SPEC LC-8, MEM-1): ended for memory, over its limit, by a watchdog. It is recorded as if its
    /// exit had been seen — the app's last exit and the log say why — so a kill -9 of the daemon between the signal and
    /// the exit loses no record. The crash loop counts it as the exit would have (an app over its limit, a watchdog's kill).
    /// Nothing is decided here: ``adopt(_:vanished:at:)`` decides once every survivor is adopted.
    mutating func processVanished(_ id: AppID, endedFor reason: TerminationReason, _ now: Instant) {
        guard var entry = apps[id], entry.process == nil else { return }
        let record = TerminationRecord(at: now, reason: reason, status: .signaled(9))
        entry.durable.lastTermination = record
        let crashed = reason.isWatchdog || reason.isMemoryLimit
        if crashed {
            entry.durable.crashLoop.recordCrash(
                at: now, initial: configuration.crashLoopInitialDelay, maximum: configuration.crashLoopMaxDelay)
        }
        apps[id] = entry
        log(now, id, .exit, record.summary + "; its exit came while the daemon was down", state: .notRunning)
        emit(.saveApp(id))
        touched.insert(id)
    }

    mutating func processGone(_ id: AppID, status: ExitStatus, outOfMemory: Bool = false, _ now: Instant) {
        cutOffRuns(id, status, now)
        cutOffPushRuns(id, status, now)
        cutOffTransferRuns(id)
        guard var entry = apps[id], let process = entry.process else { return }
        let reason = process.termination?.reason ?? (outOfMemory ? limitKill(id, status) : nil)
        entry.durable.lastTermination = TerminationRecord(at: now, reason: reason, status: status)
        // A watchdog's kill is the app's failure as much as a crash, and a launch that fails, or an app over its
        // memory limit, is throttled the same way, so a hung or broken app is not relaunched in a tight loop (SPEC LC-9).
        var crashed = reason.map(\.isWatchdog) ?? true
        if case .launchFailed = reason { crashed = true }
        if reason?.isMemoryLimit == true { crashed = true }
        if crashed, status.isAbnormal, !process.reason.isForeground {
            entry.durable.crashLoop.recordCrash(
                at: now, initial: configuration.crashLoopInitialDelay, maximum: configuration.crashLoopMaxDelay)
        } else if reason == nil && !status.isAbnormal {
            entry.durable.crashLoop.reset()
        }
        entry.process = nil
        apps[id] = entry
        // A VoIP app ended for memory comes back once memory is no longer short, not into the same shortage (SPEC MEM-1).
        var relaunch = voipRelaunch(entry, status, now)
        if case .memoryPressure = reason, relaunch != nil, memory.episode != nil {
            memory.episode?.relaunchWhenRelieved.insert(id)
            relaunch = nil
        }
        perform(modes.processEnded(id, relaunch: relaunch), now)
        // Notifications it was given in front and never answered go to the user instead of being lost.
        perform(notifications.handToUser(id, limits: notificationLimits))
        let record = entry.durable.lastTermination!
        log(now, id, .exit, record.summary, state: .notRunning)
        if device.foregroundApp == id && !entry.pendingOpen {
            device.foregroundApp = nil
            emit(.saveDevice)
        }
        if device.interruption?.covering == id { device.interruption?.covering = nil }
        if entry.uninstalling {
            scheduleAgain(id)
            forgetUninstalled(id, entry, "uninstalled", now)
            return
        }
        emit(.saveApp(id))
        scheduleAgain(id)
        if entry.pendingOpen {
            apps[id]?.pendingOpen = false
            if device.foregroundApp == id { launch(id, .user, now) }
            deliverHeldResponses(id)
        }
    }

    /// The shell could not freeze the app's process tree (it thawed it again): the app is killed rather than
    /// left running unsuspended in the background.
    public mutating func freezeFailed(_ id: AppID, pid: Int32, message: String, at now: Instant) -> [CoreAction] {
        guard let process = apps[id]?.process, process.pid == pid, process.frozen else { return finish(now) }
        apps[id]?.process?.frozen = false
        terminate(id, .freezeFailed(message), .immediate, now)
        return finish(now)
    }

    /// The app's SDK attached its callback stream. `pid` comes from the connection's peer credentials.
    public mutating func attached(
        _ id: AppID, pid: Int32, report: AttachReport, at now: Instant
    ) throws(CoreError) -> [CoreAction] {
        let entry = try entry(id)
        guard let process = entry.process else {
            startedByHand(id, pid: pid, report: report, now)
            return finish(now)
        }
        guard process.pid == pid else {
            let running = process.pid.map { "as pid \($0)" } ?? "(starting)"
            throw CoreError(
                .alreadyRunning, "'\(id)' is already running \(running); pid \(pid) cannot attach as it",
                fix: "quit the other instance (`offstage force-quit \(id)`) before starting one by hand")
        }
        if process.reattachDeadline != nil {
            reconcile(id, report: report, now)
        } else {
            reconnect(id, now)
        }
        return finish(now)
    }

    /// The app's callback stream closed while its process lives on (it will reattach).
    public mutating func detached(_ id: AppID, pid: Int32, at now: Instant) -> [CoreAction] {
        guard var process = apps[id]?.process, process.pid == pid, process.attached else { return finish(now) }
        process.attached = false
        // It may or may not have arrived. It stays in flight, as the app's answer comes over its request connection,
        // and is sent again with the same id on reattach: the SDK drops repeats by id, so no handler runs twice.
        if process.inFlight != nil { process.resendInFlight = true }
        apps[id]?.process = process
        log(now, id, .detach, "callback stream closed")
        touched.insert(id)
        return finish(now)
    }

    /// After a daemon restart: the app's process `pid` is still alive. It is thawed (it may have been frozen
    /// by the previous daemon) and must reattach within `reattachTimeout`.
    public mutating func adopt(_ id: AppID, pid: Int32, at now: Instant) -> [CoreAction] {
        adopt([(id, pid)], at: now)
    }

    /// Re-adopts every app found alive after a daemon restart (SPEC LC-8), all of them before anything is decided:
    /// a decision taken between two adoptions (a session's events due, a queued request, a due refresh) would launch
    /// an app whose process is alive but not adopted yet — a second instance, which the first then collides with.
    /// `vanished` are the processes found gone that the previous daemon had sent SIGKILL, with the reason it wrote down
    /// first: each is recorded as ended for it (``processVanished(_:endedFor:_:)``).
    public mutating func adopt(
        _ survivors: [(app: AppID, pid: Int32)], vanished: [(app: AppID, reason: TerminationReason)] = [], at now: Instant
    ) -> [CoreAction] {
        for (id, reason) in vanished { processVanished(id, endedFor: reason, now) }
        for (id, pid) in survivors where apps[id] != nil && apps[id]?.process == nil {
            adoptProcess(id, pid: pid, now)
            emit(.thaw(id, pid: pid))
            log(now, id, .attach, "found alive as pid \(pid) after a daemon restart; waiting for it to reattach")
        }
        // A daemon that starts while memory is short (the level set by hand is kept across a restart) answers it: no
        // change of the level would start the answer otherwise (SPEC MEM-1).
        respondToMemoryPressure(now)
        return finish(now)
    }

    mutating func adoptProcess(_ id: AppID, pid: Int32, _ now: Instant) {
        var process = AppProcess(
            launch: takeNumber(), reason: .user, phase: .background, startedAt: now,
            ledger: BackgroundTaskLedger(expirationWarning: configuration.warning))
        process.pid = pid
        process.launchCompleted = true
        process.reattachDeadline = now + configuration.reattach
        apps[id]?.process = process
        // It was running before the restart: its first usage context is no wake-up.
        usage.adopted.insert(id)
        touched.insert(id)
    }

    mutating func reconnect(_ id: AppID, _ now: Instant) {
        guard var process = apps[id]?.process else { return }
        if process.inFlight != nil { process.resendInFlight = true }
        process.attached = true
        apps[id]?.process = process
        log(now, id, .attach, "attached (pid \(process.pid ?? 0))")
        touched.insert(id)
    }

    /// A process the daemon did not start attached: it is managed like any other from now on (SPEC LC-8).
    mutating func startedByHand(_ id: AppID, pid: Int32, report: AttachReport, _ now: Instant) {
        if report.launchCompleted {
            // A live app the daemon lost track of: treat it as adopted and reconcile with what it reports.
            adoptProcess(id, pid: pid, now)
            reconcile(id, report: report, now)
            return
        }
        let foreground = !device.locked
        if foreground, let current = device.foregroundApp, current != id { sendToBackground(current, now) }
        var process = AppProcess(
            launch: takeNumber(), reason: .user, phase: foreground ? .inactive : .background, startedAt: now,
            ledger: BackgroundTaskLedger(expirationWarning: configuration.warning))
        process.pid = pid
        process.attached = true
        process.launchDeadline = now + configuration.launch
        process.queue = foreground ? [.didFinishLaunching(.user), .didBecomeActive] : [.didFinishLaunching(.user)]
        if !foreground { process.ledger.enterBackground(at: now, budget: configuration.budget) }
        apps[id]?.process = process
        if foreground {
            device.foregroundApp = id
            emit(.saveDevice)
        }
        log(now, id, .attach, "pid \(pid) started by hand attached", state: process.phase)
        touched.insert(id)
        if !foreground, let entry = apps[id], exitsOnSuspend(entry) {
            // Started by hand behind the lock screen, it would run in the background, which it never does (SPEC LC-7).
            terminate(id, .exitsOnSuspend, .signal, now)
        }
    }

    /// Matches an adopted app's report with the daemon's view after a restart.
    mutating func reconcile(_ id: AppID, report: AttachReport, _ now: Instant) {
        guard var process = apps[id]?.process else { return }
        process.attached = true
        process.reattachDeadline = nil
        for task in report.openTasks where task.id.isValid {
            process.ledger.begin(task.id, name: task.name, at: now)
            nextNumber = max(nextNumber, task.id.rawValue + 1)
        }
        // Runs it completed before this report, which the SDK read before, are over (SPEC SCH-11).
        let known = Set(process.runs.map(\.id)).union(process.completedBeforeReport)
        process.completedBeforeReport = []
        process.runs += adoptContinued(id, report.continuedTasks.filter { !known.contains($0.run) }, now)
        for run in process.runs where !process.recentRuns.contains(run.id) { process.started(run: run.id) }
        if !report.launchCompleted {
            process.launchCompleted = false
            process.launchDeadline = now + configuration.launch
            process.queue.insert(.didFinishLaunching(process.reason), at: 0)
        }
        let inFront = device.foregroundApp == id && !device.locked
        var queue: [CallbackKind] = []
        if inFront {
            switch report.state {
            case .active: process.phase = .active
            case .inactive: queue = [.didBecomeActive]; process.phase = .inactive
            default: queue = [.willEnterForeground, .didBecomeActive]; process.phase = .inactive
            }
        } else {
            if device.foregroundApp == id {
                device.foregroundApp = nil
                emit(.saveDevice)
            }
            if let entry = apps[id], exitsOnSuspend(entry) {
                // Out of the foreground an app that exits on suspend ends, as it would on home (SPEC LC-7).
                process.phase = .inactive
                process.queue += report.state == .active ? [.willResignActive] : []
                apps[id]?.process = process
                log(now, id, .attach, "reattached after a daemon restart (\(report.state.rawValue))", state: process.phase)
                terminate(id, .exitsOnSuspend, .graceful, now)
                return
            }
            switch report.state {
            case .active: queue = [.willResignActive, .didEnterBackground]
            case .inactive: queue = [.didEnterBackground]
            default: break
            }
            process.phase = .background
            process.ledger.enterBackground(at: now, budget: configuration.budget)
        }
        process.queue += queue
        apps[id]?.process = process
        log(now, id, .attach, "reattached after a daemon restart (\(report.state.rawValue))", state: process.phase)
        touched.insert(id)
    }
}

extension OffstageCore {
    /// The reason of a process the kernel ended for memory (SPEC MEM-2): the limit in force for it (its manifest's, or
    /// out of front the background limit), when the process died of SIGKILL (the OOM killer's signal) or of something
    /// the shell could not see; nil for any other exit, which stays a crash.
    func limitKill(_ id: AppID, _ status: ExitStatus) -> TerminationReason? {
        switch status {
        case .signaled(9), .unknown: memoryLimit(of: id)?.reason
        case .signaled, .exited: nil
        }
    }
}
