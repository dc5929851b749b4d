import OffstageCore

/// A simulated app process: what its SDK and code would do.
struct SimulatedProcess: Sendable {
    var app: AppID
    var pid: Int32
    var frozen = false
    var attached = false
    var launchCompleted = false
    var state: ApplicationState = .notRunning
    /// Open tasks with their names.
    var openTasks: [BackgroundTaskID: String] = [:]
    /// Events held while frozen, with the time that was left until each.
    var held: [(Duration, ProcessEvent)] = []
    /// Callbacks delivered and not yet returned, oldest first: like an app's main thread, the process runs one
    /// handler at a time, so a callback delivered behind another waits for it.
    var handling: [Callback] = []
    /// The audio session the app last activated, to play again after an interruption.
    var audio: AudioSessionRequest?
}

/// Something a simulated process does at a given time.
enum ProcessEvent: Sendable {
    case attach(pid: Int32)
    case callbackReturns(pid: Int32, Callback)
    case endTask(pid: Int32, name: String)
    case exit(pid: Int32, ExitStatus)
    case completeRun(pid: Int32, run: UInt64, result: TaskResult)
    case stopAudio(pid: Int32)
    case completePush(pid: Int32, run: UInt64, result: TaskResult)
    /// The app's handler of a session's events calls its completion handler.
    case completeTransferEvents(pid: Int32, run: UInt64)
    /// The simulated network finished moving the bytes of a transfer's attempt (not a process's event: pid 0).
    case transferAttemptEnds(task: UInt64, attempt: UInt64)
    /// The device's memory is accounted: the apps in front grow, the pressure is read (not a process's event: pid 0).
    case accountMemory

    var pid: Int32 {
        switch self {
        case .transferAttemptEnds, .accountMemory: 0
        case .completeTransferEvents(let pid, _): pid
        case .attach(let pid), .callbackReturns(let pid, _), .endTask(let pid, _), .exit(let pid, _),
            .completeRun(let pid, _, _), .stopAudio(let pid), .completePush(let pid, _, _):
            pid
        }
    }
}

extension Simulation {
    mutating func record(_ app: AppID, _ event: TraceRecord.Event) {
        trace.append(TraceRecord(at: now, app: app, event: event))
    }

    /// Carries out the core's actions on the simulated processes (public for tests that call the core directly).
    public mutating func perform(_ actions: [CoreAction]) {
        for action in actions {
            switch action {
            case .launch(let id, let plan):
                let pid = nextPid
                nextPid += 1
                processes[pid] = SimulatedProcess(app: id, pid: pid)
                record(id, .launched(plan.reason))
                memoryLaunched(pid, app: id)
                perform(core.processStarted(id, launch: plan.launch, pid: pid, at: now))
                if externalApps.contains(id) {
                    external.append(.launched(id, pid: pid, reason: plan.reason))
                } else {
                    queue.schedule(.attach(pid: pid), at: now + behavior(id).attachDelay)
                }
            case .deliver(let id, let pid, let callback) where externalApps.contains(id):
                record(id, .callback(callback.kind.name))
                external.append(.callback(id, pid: pid, callback))
            case .deliver(let id, let pid, let callback):
                deliver(callback, to: pid, app: id)
            case .freeze(let id, let pid):
                freeze(pid)
                record(id, .frozen)
            case .thaw(let id, let pid):
                thaw(pid)
                record(id, .thawed)
            case .terminate(let id, let pid):
                record(id, .sigterm)
                if !behavior(id).ignoresSIGTERM { exitNow(pid, .signaled(15)) }
            case .kill(let id, let pid):
                record(id, .sigkill)
                exitNow(pid, .signaled(9))
            case .log(let entry):
                log.append(entry)
            case .saveApp, .saveDevice, .forget:
                break
            case .continuedProgress:
                break  // no desktop: the simulation's user reads tasks and apps, as `offstage` does
            case .recordHistory(let record):
                historyArchive.apply(record)
            case .network(let change):
                for (id, restriction) in change.restrictions { networkRestrictions[id] = restriction }
            case .usage(let change):
                usage.apply(change)
            case .watchSocket(let id, let token, let armed):
                sockets[token] = SimulatedSocket(app: id, armed: armed)
            case .closeSocket(_, let token):
                sockets[token] = nil
                accessorySessions[token] = nil
            case .watchAccessory(let id, let name, let path):
                accessoryWatches[AccessoryWatch(app: id, name: name)] = path
                perform(core.accessoryPresence(id, name: name, connected: pluggedAccessories.contains(path), at: now))
            case .unwatchAccessory(let id, let name):
                accessoryWatches[AccessoryWatch(app: id, name: name)] = nil
            case .notification(let action):
                perform(action)
            case .push(let action):
                perform(action)
            case .transfer(let action):
                perform(action)
            }
        }
    }

    func behavior(_ id: AppID) -> AppBehavior { behaviors[id] ?? AppBehavior() }

    mutating func schedule(_ event: ProcessEvent, after delay: Duration) {
        guard let process = processes[event.pid] else { return }
        if process.frozen {
            processes[event.pid]?.held.append((delay, event))
        } else {
            queue.schedule(event, at: now + delay)
        }
    }

    mutating func deliver(_ callback: Callback, to pid: Int32, app id: AppID) {
        guard let process = processes[pid] else { return }
        // The same callback again (after a reconnect) is dropped by id, as the SDK does.
        guard !process.handling.contains(where: { $0.id == callback.id }) else { return }
        processes[pid]?.handling.append(callback)
        if process.handling.isEmpty { runCallback(callback, pid: pid, app: id) }
    }

    /// Runs the handler of `callback`, the oldest the process has not returned from.
    mutating func runCallback(_ callback: Callback, pid: Int32, app id: AppID) {
        let name = callback.kind.name
        record(id, .callback(name))
        let behavior = behavior(id)
        var duration = behavior.handlerDuration
        var hangs = false
        switch callback.kind {
        case .didFinishLaunching:
            processes[pid]?.state = .background
            launchFinished(pid, app: id)
        case .didBecomeActive: processes[pid]?.state = .active
        case .willResignActive: processes[pid]?.state = .inactive
        case .didEnterBackground: processes[pid]?.state = .background
        case .willEnterForeground: processes[pid]?.state = .inactive
        case .willTerminate: break
        case .backgroundTasksExpiring(let ids) where behavior.endsTasksOnExpiration:
            for task in ids { if let taskName = processes[pid]?.openTasks[task] { endTask(pid, taskName) } }
        case .backgroundTasksExpiring: break
        case .runTask(let run, _, _, _), .performFetch(let run): startHandler(run, pid: pid, app: id)
        case .taskExpiring(let run): taskExpiring(run, pid: pid, app: id)
        case .memoryWarning: memoryWarned(pid, app: id)
        case .keepAlive, .voipSocket, .systemEvent, .locationError, .accessory: break
        case .notificationWillPresent(let record): willPresent(record, pid: pid, app: id)
        case .notificationResponse(let response): notificationResponses[id, default: []].append(response)
        case .remoteNotification(let call): startPushHandler(call, pid: pid, app: id)
        case .transferEvents(let session, let run): handleTransferEvents(session, run: run, pid: pid, app: id)
        case .locations(let fixes): deliveredLocations[id, default: []] += fixes
        case .audioInterruption(let event):
            if !event.began, event.shouldResume, behavior.resumesAudioAfterInterruption,
                let request = processes[pid]?.audio
            {
                playAudio(request, pid: pid, app: id)
            }
        }
        if case .willEnterForeground = callback.kind, behavior.endsTasksOnWillEnterForeground {
            for taskName in processes[pid]?.openTasks.values.sorted() ?? [] { endTask(pid, taskName) }
        }
        for step in behavior.steps[name] ?? [] {
            switch step {
            case .beginTask(let taskName, let endAfter):
                let (task, actions) = (try? core.beginBackgroundTask(id, pid: pid, name: taskName, at: now)) ?? (.invalid, [])
                perform(actions)
                if task.isValid {
                    processes[pid]?.openTasks[task] = taskName
                    record(id, .taskBegan(taskName, task))
                    if let endAfter { schedule(.endTask(pid: pid, name: taskName), after: endAfter) }
                }
            case .takes(let time): duration = time
            case .hang: hangs = true
            case .exit(let code, let after): schedule(.exit(pid: pid, .exited(code)), after: after)
            case .playAudio(let category, let mixes, let stopAfter):
                playAudio(AudioSessionRequest(category: category, mixWithOthers: mixes, active: true), pid: pid, app: id)
                if let stopAfter { schedule(.stopAudio(pid: pid), after: stopAfter) }
            case .stopAudio:
                setPlaying(false, pid: pid, app: id)
            case .setKeepAlive(let seconds):
                setKeepAlive(seconds, pid: pid, app: id)
            case .handOffSocket:
                handOffSocket(pid: pid, app: id)
            case .startUpdatingLocation, .stopUpdatingLocation, .startMonitoringSignificantChanges,
                .stopMonitoringSignificantChanges:
                locationStep(step, pid: pid, app: id)
            case .registerAccessory, .openAccessorySession:
                accessoryStep(step, pid: pid, app: id)
            }
        }
        if !hangs { schedule(.callbackReturns(pid: pid, callback), after: duration) }
    }

    mutating func endTask(_ pid: Int32, _ name: String) {
        guard let process = processes[pid], let task = process.openTasks.first(where: { $0.value == name })?.key
        else { return }
        processes[pid]?.openTasks[task] = nil
        record(process.app, .taskEnded(name))
        do throws(CoreError) {
            perform(try core.endBackgroundTask(process.app, pid: pid, task: task, at: now).1)
        } catch {
            errors.append(error)
        }
    }

    mutating func handle(_ event: ProcessEvent) {
        if case .transferAttemptEnds(let task, let attempt) = event { return transferAttemptEnds(task, attempt: attempt) }
        if case .accountMemory = event { return accountMemory() }
        guard let process = processes[event.pid] else { return }
        switch event {
        case .attach(let pid):
            processes[pid]?.attached = true
            do throws(CoreError) {
                perform(try core.attached(process.app, pid: pid, report: .fresh, at: now))
            } catch {
                errors.append(error)
            }
        case .callbackReturns(let pid, let callback):
            processes[pid]?.handling.removeAll { $0.id == callback.id }
            record(process.app, .callbackReturned(callback.kind.name))
            // The next callback already delivered runs now; one the answer brings is started by `deliver`.
            if let next = processes[pid]?.handling.first { runCallback(next, pid: pid, app: process.app) }
            perform(core.callbackCompleted(process.app, pid: pid, callback: callback.id, at: now))
            if case .willTerminate = callback.kind, behavior(process.app).exitsAfterWillTerminate {
                exitNow(pid, .exited(0))
            }
        case .endTask(let pid, let name):
            endTask(pid, name)
        case .exit(let pid, let status):
            exitNow(pid, status)
        case .completeRun(let pid, let run, let result):
            completeRun(run, result, pid: pid, app: process.app)
        case .stopAudio(let pid):
            setPlaying(false, pid: pid, app: process.app)
        case .completePush(let pid, let run, let result):
            completePush(run, result, pid: pid, app: process.app)
        case .completeTransferEvents(let pid, let run):
            completeTransferEvents(run, pid: pid, app: process.app)
        case .transferAttemptEnds, .accountMemory:
            break
        }
    }

    mutating func exitNow(_ pid: Int32, _ status: ExitStatus, outOfMemory: Bool = false) {
        guard let process = processes[pid] else { return }
        processes[pid] = nil
        queue.removeAll { $0.pid == pid }
        record(process.app, .exited(status))
        if externalApps.contains(process.app) { external.append(.exited(process.app, pid: pid, status)) }
        perform(core.processExited(process.app, pid: pid, status: status, outOfMemory: outOfMemory, at: now))
        memoryExited(pid)
    }

    mutating func freeze(_ pid: Int32) {
        guard processes[pid] != nil else { return }
        processes[pid]?.frozen = true
        let pending = queue.filter { $0.pid == pid }
        queue.removeAll { $0.pid == pid }
        let current = now
        processes[pid]?.held = pending.map { ($0.0 - current, $0.1) }
    }

    mutating func thaw(_ pid: Int32) {
        guard let process = processes[pid] else { return }
        processes[pid]?.frozen = false
        processes[pid]?.held = []
        for (remaining, event) in process.held { queue.schedule(event, at: now + remaining) }
    }
}
