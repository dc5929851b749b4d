import OffstageCore

/// What the model's shell knows about one process it started: what the process has been told and what it holds.
struct ModelProcess: Hashable, Sendable {
    /// The app it belongs to.
    let app: AppID
    /// Its pid.
    let pid: Int32
    /// How it reacts to signals.
    let trait: ProcessTrait
    /// Why it was launched.
    let reason: LaunchReason
    /// Its callback stream is connected.
    var attached = false
    /// Its process tree is frozen.
    var frozen = false
    /// It has died and the shell has not reported the exit yet.
    var death: ExitStatus?
    /// SIGTERM arrived while it was frozen: it dies when thawed.
    var sigtermPending = false
    /// did-finish-launching returned.
    var launchCompleted = false
    /// Callbacks delivered and not answered, oldest first.
    var outstanding: [Callback] = []
    /// Every callback id it received (a repeat of one runs no handler).
    var received: Set<CallbackID> = []
    /// The last callback it answered, for late and repeated replies.
    var lastAnswered: Callback?
    /// Background tasks it holds open.
    var openTasks: [BackgroundTaskID] = []
    /// Scheduled runs it was told to run and has not completed.
    var runs: [UInt64] = []
    /// Remote-notification handler runs it was handed and has not completed (SPEC NT-4).
    var pushRuns: [UInt64] = []
    /// Handle-events runs for its transfers it was handed and has not completed (SPEC TR-3).
    var transferRuns: [UInt64] = []
    /// Its termination began while it was suspended: it must get no callback and no thaw (SPEC LC-5).
    var terminatedWhileSuspended = false
    /// Expiration handlers delivered, per task and budget (SPEC BT-4: once per budget).
    var expirationsDelivered: Set<ExpirationKey> = []

    /// Creates the record of a process the shell just started.
    init(app: AppID, pid: Int32, trait: ProcessTrait, reason: LaunchReason) {
        self.app = app
        self.pid = pid
        self.trait = trait
        self.reason = reason
    }
}

/// A launch the core asked for that the shell has not started yet.
struct PendingLaunch: Hashable, Sendable {
    /// The app.
    var app: AppID
    /// The launch number.
    var launch: UInt64
    /// Why.
    var reason: LaunchReason
}

/// A shell for the model-based tests: it drives ``OffstageCore`` directly on virtual time, plays every app process
/// as the commands say, carries out the core's actions as the daemon would, and checks the invariants after every
/// input the core receives.
///
/// Unlike the simulator's scripted apps, the processes here do nothing by themselves: each handler returns, each
/// task begins or ends, each process attaches, crashes or exits only when a command says so, at whatever time the
/// commands have reached. That is what lets a sequence reach hung handlers, replies after a deadline, exits at any
/// moment and tasks that are never ended. Two things happen without a command, because a real shell does them at
/// once: a launch the core asked for starts (or fails) before time moves on, and a process that died of a signal is
/// reported before time moves on.
struct ModelShell {
    /// The core under test.
    private(set) var core: OffstageCore
    /// The virtual clock; it only moves forward.
    private(set) var now: Instant = ModelWorld.start
    /// Processes started and not yet reported as exited, by pid.
    var processes: [Int32: ModelProcess] = [:]
    /// Pids whose exits were reported: nothing may be sent to them again.
    private(set) var exitedPids: Set<Int32> = []
    /// Launches asked for and not started.
    private(set) var pendingLaunches: [PendingLaunch] = []
    /// Since when each process has been idle in the background, by pid (SPEC LC-4).
    private(set) var idleSince: [Int32: Instant] = [:]
    /// Per app: background launches in a row that ended abnormally (a crash, a failed start, a watchdog), and when
    /// the last one ended (SPEC LC-9). The user opening the app, or a clean exit, clears it.
    private(set) var crashes: [AppID: CrashStreak] = [:]
    /// The input being handled is a debug verb (run-task, fetch), which runs whatever holds the work back.
    private(set) var forcing = false
    /// When the latest app was ended for memory (SPEC MEM-1).
    private(set) var lastMemoryEnding: Instant?
    /// The invariants checked.
    let enabled: Set<Invariant>
    /// The first violation of an enabled invariant; once set, further commands do nothing.
    private(set) var violation: Violation?
    /// Inputs the core received.
    private(set) var inputs = 0
    /// What happened, for a failure report; nil unless tracing.
    private(set) var trace: [String]?
    /// How often each kind of action and event happened, so a test can show its sessions reach the states its
    /// invariants are about (`launch.refresh`, `deliver.willTerminate`, `freeze`, `log.watchdog` …).
    private(set) var coverage: [String: Int] = [:]

    private var step = 0
    private var nextPid: Int32 = 1000
    private var nextTaskName = 0
    /// Handed-off sockets and accessory sessions by token: their app, and whether the shell watches them now (SPEC
    /// MODE-2, MODE-4).
    var sockets: [UInt64: (app: AppID, armed: Bool)] = [:]
    var nextSocketToken: UInt64 = 1
    /// The accessories the shell watches, those plugged in and the sessions handed off (SPEC MODE-4).
    var accessories = ModelAccessories()
    /// What the daemon's store would hold of the notifications, from the actions alone (SPEC NT-2).
    private(set) var notificationStore = NotificationStoreModel()
    /// Every delivery key fired so far (SPEC NT-2: each at most once).
    private(set) var firedNotifications: Set<DeliveryKey> = []
    /// What the daemon's store would hold of the pushes, and the handler runs and wakes seen (SPEC NT-4, NT-5).
    var pushes = ModelPushes()
    /// What the daemon's transfer journal and engine would hold, and what the apps were handed (SPEC TR-1..6).
    var transfersModel = ModelTransfers()
    /// The apps whose traffic the shell blocks, built from the network actions alone (SPEC SET-2).
    var networkRules: [AppID: NetworkRestriction] = [:]
    /// Each app's usage context, from the usage actions so far.
    var usageContexts: [AppID: UsageContext] = [:]

    /// A core with the default configuration and policy, the device unlocked at the home screen, no app installed.
    init(enabled: Set<Invariant>, tracing: Bool = false) {
        core = OffstageCore(configuration: CoreConfiguration(), numberSeed: 1)
        self.enabled = enabled
        trace = tracing ? [] : nil
    }

    /// Replays `commands` from the start; the result holds the first violation, if any.
    static func replay(_ commands: [ModelCommand], enabled: Set<Invariant>, tracing: Bool = false) -> ModelShell {
        var shell = ModelShell(enabled: enabled, tracing: tracing)
        for command in commands {
            shell.apply(command)
            if shell.violation != nil { break }
        }
        return shell
    }

    /// The process of a slot's app that the shell knows (the newest, if the core lost track of an older one).
    func process(of slot: Int) -> ModelProcess? {
        let id = ModelWorld.app(slot)
        return processes.values.filter { $0.app == id }.max { $0.pid < $1.pid }
    }

    /// Carries out one command.
    mutating func apply(_ command: ModelCommand) {
        guard violation == nil else { return }
        // A new watch reports at once, once the input that asked for it is done (as the daemon's watcher does).
        defer {
            reportOwedPresence()
            settleEngine()
        }
        step += 1
        trace?.append("\(step). t=\(formatSeconds((now - ModelWorld.start).inSeconds)) \(command)")
        let slot = command.slot ?? 0
        let id = ModelWorld.app(slot)
        switch command {
        case .install(_, let variant):
            // While an uninstall finishes, the core refuses the install (decision 0016): a refusal, nothing changed.
            let app = InstalledApp(manifest: variant.manifest(id), bundlePath: "/model/\(id)", installedAt: now)
            feed { core, now throws(CoreError) in try core.install(app, at: now).1 }
        case .uninstall:
            feed { core, now throws(CoreError) in try core.uninstall(id, at: now) }
        case .open:
            let process = core.apps[id]?.process
            let inFront = core.device.foregroundApp == id && process != nil && process?.termination == nil
            // The user opening the app ends a crash loop (SPEC LC-9), as it lifts a force-quit (LC-6).
            if feed({ core, now throws(CoreError) in try core.open(id, at: now) }), !inFront {
                crashes[id] = nil
                transfersModel.launches[id] = nil
            }
        case .home:
            feed { core, now throws(CoreError) in core.home(at: now) }
        case .lock:
            feed { core, now throws(CoreError) in core.lock(at: now) }
        case .unlock(let back):
            feed { core, now throws(CoreError) in core.unlock(returningToApp: back, at: now) }
        case .interrupt(let resolution):
            feed { core, now throws(CoreError) in try core.interrupt(resolution, at: now) }
        case .forceQuit:
            forceQuit(id)
        case .device(let key, let on):
            let settings = key.apply(on, to: core.device.settings)
            feed { core, now throws(CoreError) in core.setDeviceSettings(settings, at: now) }
        case .appSetting(_, let key, let on):
            guard let current = core.apps[id]?.app.settings else { return }
            let settings = key.apply(on, to: current)
            feed { core, now throws(CoreError) in try core.setAppSettings(settings, for: id, at: now) }
        case .conditions(let overrides):
            feed { core, now throws(CoreError) in try core.setConditionOverrides(overrides, at: now) }
        case .memoryReading(let level):
            feed { core, now in core.memoryPressureRead(level, at: now) }
        case .memoryWarning:
            feed { core, now throws(CoreError) in try core.simulateMemoryWarning(id, at: now).actions }
        case .runTask(_, let kind):
            forcing = true
            defer { forcing = false }
            feed { core, now throws(CoreError) in
                kind == .fetch
                    ? try core.fetchNow(id, at: now)
                    : try core.runTaskNow(id, identifier: ModelWorld.identifier(kind), at: now)
            }
        case .expireTask(_, let kind):
            feed { core, now throws(CoreError) in
                try core.expireTaskNow(id, identifier: ModelWorld.identifier(kind), at: now)
            }
        case .spawn(_, let trait):
            guard let index = pendingLaunches.firstIndex(where: { $0.app == id }) else { return }
            start(pendingLaunches.remove(at: index), trait)
        case .attach:
            attach(slot)
        case .detach:
            guard let process = process(of: slot), process.death == nil, !process.frozen, process.attached else {
                return
            }
            // What was sent has arrived and its handler runs on; its answer goes over the request connection, so it
            // may still reach the core. The core sends an unanswered one again, with the same id, on reattach.
            processes[process.pid]?.attached = false
            feed { core, now throws(CoreError) in core.detached(id, pid: process.pid, at: now) }
        case .reply:
            reply(slot)
        case .replyAgain:
            guard let process = running(slot), let callback = process.lastAnswered else { return }
            feed { core, now throws(CoreError) in
                core.callbackCompleted(id, pid: process.pid, callback: callback.id, at: now)
            }
        case .beginTask:
            beginTask(slot)
        case .endTask(_, let index):
            guard let process = running(slot) else { return }
            var task = BackgroundTaskID(999_999)  // never handed out: ending it must be harmless (SPEC BT-1)
            if !process.openTasks.isEmpty {
                task = processes[process.pid]!.openTasks.remove(at: index % process.openTasks.count)
            }
            feed { core, now throws(CoreError) in
                try core.endBackgroundTask(id, pid: process.pid, task: task, at: now).1
            }
        case .complete(_, let index, let result):
            guard let process = running(slot) else { return }
            var run: UInt64 = 999_999  // never handed out: completing it must be harmless
            if !process.runs.isEmpty { run = processes[process.pid]!.runs.remove(at: index % process.runs.count) }
            feed { core, now throws(CoreError) in
                try core.completeTask(id, pid: process.pid, run: run, result: result, at: now)
            }
        case .submit(_, let kind, let after, let network, let power):
            guard let process = running(slot) else { return }
            let request = TaskRequest(
                identifier: ModelWorld.identifier(kind), kind: kind, earliestBegin: after.map { now + .seconds($0) },
                requiresNetwork: network, requiresExternalPower: power, submittedAt: now)
            feed { core, now throws(CoreError) in try core.submitTask(id, pid: process.pid, request: request, at: now) }
        case .cancel(_, let kind):
            guard let process = running(slot) else { return }
            feed { core, now throws(CoreError) in
                try core.cancelTask(id, pid: process.pid, identifier: ModelWorld.identifier(kind), at: now).1
            }
        case .cancelAll:
            guard let process = running(slot) else { return }
            feed { core, now throws(CoreError) in try core.cancelAllTasks(id, pid: process.pid, at: now) }
        case .fetchInterval(_, let interval):
            guard let process = running(slot) else { return }
            feed { core, now throws(CoreError) in try core.setFetchInterval(id, pid: process.pid, interval, at: now) }
        case .audio(_, let playing):
            guard let process = running(slot) else { return }
            if playing {
                let session = AudioSessionRequest(category: .playback, active: true)
                feed { core, now throws(CoreError) in try core.setAudioSession(id, pid: process.pid, session, at: now).actions }
            }
            feed { core, now throws(CoreError) in try core.setAudioPlaying(id, pid: process.pid, playing: playing, at: now) }
        case .audioInterruption(let began):
            feed { core, now throws(CoreError) in try core.audioInterruption(began: began, at: now) }
        case .keepAlive(_, let seconds):
            guard let process = running(slot) else { return }
            feed { core, now throws(CoreError) in
                try core.setKeepAliveTimeout(id, pid: process.pid, seconds: Double(seconds), at: now)
            }
        case .handOff:
            guard let process = running(slot) else { return }
            let token = nextSocketToken
            nextSocketToken += 1
            feed { core, now throws(CoreError) in try core.socketHandedOff(id, pid: process.pid, token: token, at: now) }
        case .socketData(_, let closed):
            // A watched socket reports once (epoll's one-shot), as the daemon's watcher does.
            let voip = sockets.filter { $0.value.app == id && accessories.sessions[$0.key] == nil }.keys.min()
            guard let token = voip, sockets[token]?.armed == true else { return }
            sockets[token]?.armed = false
            feed { core, now throws(CoreError) in core.voipSocketEvent(id, token: token, closed: closed, at: now) }
        case .registerAccessory, .openSession, .plug, .accessoryData, .simulateAccessory:
            applyAccessory(command, slot: slot)
        case .notify, .unnotify, .notificationCategories, .tapNotification, .answerWillPresent, .timeZone,
            .notificationsAllowed:
            applyNotification(command, slot: slot)
        case .push, .completePush:
            applyPush(command, slot: slot)
        case .openTransferSession, .createTransfer, .transferProgress, .endAttempt, .handleTransferEvents,
            .completeTransferEvents, .changeTransfer, .submitContinued, .reportContinued, .cancelContinued:
            applyTransfer(command, slot: slot)
        case .restart:
            restartDaemon()
        case .systemEvent(let event):
            feed { core, now throws(CoreError) in core.systemEvent(event, at: now).actions }
        case .exit(_, let status):
            guard let process = process(of: slot), process.death == nil else { return }
            processes[process.pid]?.death = status
            reportExit(process.pid)
        case .reap:
            guard let process = process(of: slot), process.death != nil else { return }
            reportExit(process.pid)
        case .advance(let ms):
            advance(to: now + .milliseconds(ms))
        case .fireTimer:
            settleProcesses()
            guard violation == nil, let next = core.nextDeadline else { return }
            if next > now { now = next }
            feed(timer: true) { core, now throws(CoreError) in core.advance(to: now) }
            settleProcesses()
        }
    }

    // MARK: Inputs

    /// Hands the core one input at `now`, carries out its actions, and checks every invariant. Returns whether the
    /// core accepted the input.
    /// `update` records in the shell what the input gave the app (a task it began) before the invariants are checked.
    @discardableResult
    mutating func feed(
        timer: Bool = false, _ input: (inout OffstageCore, Instant) throws(CoreError) -> [CoreAction],
        update: (inout ModelShell) -> Void = { _ in }
    ) -> Bool {
        guard violation == nil else { return false }
        inputs += 1
        // LC-5: which processes are suspended, and not being terminated, as the input arrives.
        let suspended = Set(
            core.apps.values.compactMap { entry -> Int32? in
                guard let process = entry.process, process.frozen, process.termination == nil else { return nil }
                return process.pid
            })
        var actions: [CoreAction] = []
        var accepted = true
        let front = core.device.foregroundApp
        let activeInFront = appsActiveInFront()
        let continuedBefore = continuedSnapshot()
        do throws(CoreError) {
            actions = try input(&core, now)
        } catch {
            accepted = false
            trace?.append("   refused: \(error.code.rawValue): \(error.message)")
        }
        // The user bringing an app to the front ends its crash loop (SPEC LC-9) and its transfer relaunch back-off
        // (TR-3), however it came to the front (opened, unlocked back to it, an interruption ended).
        if let app = core.device.foregroundApp, app != front {
            crashes[app] = nil
            transfersModel.launches[app] = nil
        }
        for entry in core.apps.values {
            guard let process = entry.process, let pid = process.pid, suspended.contains(pid),
                process.termination != nil
            else { continue }
            processes[pid]?.terminatedWhileSuspended = true
        }
        perform(actions)
        update(&self)
        trackPushRuns(activeInFrontBefore: activeInFront)
        updateIdle()
        for (invariant, message) in CoreInvariants.check(observation(firedTimer: timer)) {
            record(invariant, message)
        }
        checkTransfers(continuedBefore: continuedBefore)
        return accepted
    }

    /// Carries out the core's actions in order, checking each against the processes as they are.
    mutating func perform(_ actions: [CoreAction]) {
        for action in actions {
            if let line = Self.describe(action) { trace?.append("   " + line) }
            let seen = observation(firedTimer: false, derived: false)
            for (invariant, message) in CoreInvariants.check(action, seen, processes: processes, exitedPids: exitedPids)
            {
                record(invariant, message)
            }
            count(action)
            switch action {
            case .launch(let id, let plan):
                pendingLaunches.append(PendingLaunch(app: id, launch: plan.launch, reason: plan.reason))
                if plan.reason.isForeground { crashes[id] = nil }
                if plan.reason == .transferEvents { checkTransferLaunch(id) }
            case .deliver(_, let pid, let callback):
                // Persist, then act: the push is marked handed before its callback goes out (decision 0033).
                if case .remoteNotification(let call) = callback.kind { _ = pushes.hand(call.push, run: call.run) }
                guard var process = processes[pid], process.death == nil else { continue }
                // A callback sent again keeps its id: the SDK answers it without running the handler a second time.
                if !process.outstanding.contains(where: { $0.id == callback.id }) {
                    process.outstanding.append(callback)
                }
                guard process.received.insert(callback.id).inserted else {
                    processes[pid] = process
                    continue
                }
                switch callback.kind {
                case .runTask(let run, _, _, _), .performFetch(let run):
                    process.runs.append(run)
                case .remoteNotification(let call):
                    process.pushRuns.append(call.run)
                case .transferEvents(_, let run?):
                    process.transferRuns.append(run)
                case .backgroundTasksExpiring(let tasks):
                    if let end = core.apps[process.app]?.process?.ledger.budgetEnd {
                        for task in tasks {
                            process.expirationsDelivered.insert(ExpirationKey(task: task, budgetEnd: end))
                        }
                    }
                default:
                    break
                }
                processes[pid] = process
            case .freeze(_, let pid):
                processes[pid]?.frozen = true
            case .thaw(_, let pid):
                guard var process = processes[pid] else { continue }
                process.frozen = false
                if process.sigtermPending, process.death == nil { process.death = .signaled(15) }
                processes[pid] = process
            case .terminate(_, let pid):
                guard var process = processes[pid], process.death == nil, process.trait != .ignoresSIGTERM else {
                    continue
                }
                // A frozen process cannot run its signal handling: SIGTERM takes effect when it is thawed.
                if process.frozen { process.sigtermPending = true } else { process.death = .signaled(15) }
                processes[pid] = process
            case .kill(_, let pid):
                if processes[pid]?.death == nil { processes[pid]?.death = .signaled(9) }
            case .watchSocket(let id, let token, let armed):
                sockets[token] = (id, armed)
            case .closeSocket(_, let token):
                sockets[token] = nil
                accessories.sessions[token] = nil
            case .watchAccessory(let id, let name, let path):
                accessories.watch(AccessoryKey(app: id, name: name), at: path)
            case .unwatchAccessory(let id, let name):
                accessories.watches[AccessoryKey(app: id, name: name)] = nil
            case .forget(let id, _):
                // Uninstalled: an app installed again under the id starts with no crash history (SPEC MAN-3, LC-9),
                // and with a full push budget (SPEC NT-4).
                crashes[id] = nil
                pushes.wakes[id] = nil
                transfersModel.launches[id] = nil
                transfersModel.known = transfersModel.known.filter { $0.value != id }
            case .push(let action):
                _ = pushes.apply(action)  // what it breaks, the check of the action above has recorded
            case .transfer(let action):
                performTransfer(action)
            case .continuedProgress:
                break  // what the user sees; the invariants read the runs themselves
            case .notification(let action):
                var pushAlert = false
                if case .fire(let key, _, _) = action { pushAlert = pushes.isAlert(key) }
                // What it breaks, the check of the action above has recorded.
                _ = notificationStore.apply(action, pushAlert: pushAlert)
                if case .fire(let key, _, _) = action { firedNotifications.insert(key) }
            case .network(let change):
                for (id, restriction) in change.restrictions { networkRules[id] = restriction }
            case .usage(let change):
                for (id, context) in change.contexts { usageContexts[id] = context }
            case .log(let entry) where entry.kind == .kill && entry.message.hasPrefix("ended for memory"):
                checkMemoryEnding(entry)
            case .log, .saveApp, .saveDevice, .recordHistory:
                break
            }
        }
    }

    /// An app ended for memory (SPEC MEM-1): only while memory is short, and one per interval at most.
    mutating func checkMemoryEnding(_ entry: LogEntry) {
        let level = core.conditions(at: now).memoryPressure
        if level == .normal {
            record(.memoryResponse, "\(entry.app.map(\.description) ?? "?") was ended for memory while pressure is normal")
        }
        let interval = Duration.seconds(double: core.configuration.memory.endingInterval)
        if let last = lastMemoryEnding, now - last < interval {
            record(
                .memoryResponse,
                "\(entry.app.map(\.description) ?? "?") was ended for memory \((now - last).inSeconds) s after the last one")
        }
        lastMemoryEnding = now
    }

    /// What the invariants read now.
    /// What the invariants read now. `derived`: also what the core recomputes from scratch to compare with what it keeps
    /// (stale scheduling views and deadlines, the memory order) and the apps playing audio; the checks of a single action
    /// read none of it, and leave it out (it is most of an observation's cost).
    func observation(firedTimer: Bool, derived: Bool = true) -> ModelObservation {
        var seen = ModelObservation(
            now: now, apps: core.apps, device: core.device, configuration: core.configuration,
            nextDeadline: core.nextDeadline, processes: processes, pendingLaunches: pendingLaunches,
            idleSince: idleSince, crashes: crashes, forcing: forcing, firedTimer: firedTimer,
            accessoryWatches: accessories.watches,
            notifications: core.notifications, notificationStore: notificationStore,
            firedNotifications: firedNotifications, pushInbox: core.pushes, pushLimits: core.pushLimits,
            pushStore: pushes, networkRules: networkRules, usageContexts: usageContexts)
        guard derived else { return seen }
        seen.staleSchedulingViews = core.schedulingViewsOutOfDate(at: now)
        seen.staleDeadlines = core.processDeadlinesOutOfDate()
        seen.userAudio = Set(core.apps.keys.filter { id in
            core.modes.audio.session(of: id).map { $0.active && $0.playing && $0.startedByUser } ?? false
        })
        seen.memoryOrder = core.memoryEndingOrder(at: now)
        return seen
    }

    mutating func record(_ invariant: Invariant, _ message: String) {
        guard violation == nil, enabled.contains(invariant) else { return }
        violation = Violation(
            invariant: invariant, message: message, step: step, seconds: (now - ModelWorld.start).inSeconds)
        trace?.append("   VIOLATION \(violation!)")
    }

    /// The daemon restarted with a new core: every process the shell knew ended with the old one (their pids are
    /// never used again), and no launch is pending.
    mutating func replaceCore(_ fresh: OffstageCore) {
        exitedPids.formUnion(processes.keys)
        processes = [:]
        pendingLaunches = []
        idleSince = [:]
        // The new daemon replaces its table: no rule is left from the old one.
        networkRules = [:]
        usageContexts = [:]
        core = fresh
    }

    // MARK: The processes

    /// The process of a slot, if it is alive and can run code (not frozen).
    func running(_ slot: Int) -> ModelProcess? {
        guard let process = process(of: slot), process.death == nil, !process.frozen else { return nil }
        return process
    }

    private mutating func start(_ launch: PendingLaunch, _ trait: ProcessTrait) {
        if trait == .failsToStart {
            if !launch.reason.isForeground { crashes[launch.app, default: CrashStreak()].record(now) }
            feed { core, now throws(CoreError) in
                core.launchFailed(launch.app, launch: launch.launch, message: "exec failed (model)", at: now)
            }
            return
        }
        let pid = nextPid
        nextPid += 1
        processes[pid] = ModelProcess(app: launch.app, pid: pid, trait: trait, reason: launch.reason)
        feed { core, now throws(CoreError) in core.processStarted(launch.app, launch: launch.launch, pid: pid, at: now)
        }
    }

    private mutating func attach(_ slot: Int) {
        guard let process = running(slot), !process.attached else { return }
        processes[process.pid]?.attached = true
        let report =
            process.launchCompleted
            ? AttachReport(
                launchCompleted: true, state: .background,
                openTasks: process.openTasks.map { AttachReport.ReportedTask(id: $0, name: "") })
            : AttachReport.fresh
        let id = process.app
        var refused = false
        feed { core, now throws(CoreError) in
            do throws(CoreError) {
                return try core.attached(id, pid: process.pid, report: report, at: now)
            } catch {
                refused = true
                throw error
            }
        }
        if refused { processes[process.pid]?.attached = false }
    }

    private mutating func reply(_ slot: Int) {
        guard let process = running(slot), let callback = process.outstanding.first else { return }
        processes[process.pid]?.outstanding.removeFirst()
        processes[process.pid]?.lastAnswered = callback
        if case .didFinishLaunching = callback.kind { processes[process.pid]?.launchCompleted = true }
        let id = process.app
        feed { core, now throws(CoreError) in
            core.callbackCompleted(id, pid: process.pid, callback: callback.id, at: now)
        }
        // The SDK exits the process once will-terminate has returned.
        if case .willTerminate = callback.kind, processes[process.pid]?.death == nil {
            processes[process.pid]?.death = .exited(0)
            reportExit(process.pid)
        }
    }

    private mutating func beginTask(_ slot: Int) {
        guard let process = running(slot) else { return }
        nextTaskName += 1
        let name = "task\(nextTaskName)"
        var task = BackgroundTaskID.invalid
        feed(
            { core, now throws(CoreError) in
                let (begun, actions) = try core.beginBackgroundTask(process.app, pid: process.pid, name: name, at: now)
                task = begun
                return actions
            },
            update: { shell in
                if task.isValid, shell.processes[process.pid]?.death == nil {
                    shell.processes[process.pid]?.openTasks.append(task)
                }
            })
    }

    private mutating func forceQuit(_ id: AppID) {
        let pid = core.apps[id]?.process?.pid
        let hadProcess = core.apps[id]?.process != nil
        feed { core, now throws(CoreError) in try core.forceQuit(id, at: now) }
        // LC-6: killed at once, whatever its state.
        if hadProcess, let process = core.apps[id]?.process, process.pid == pid, process.termination?.stage != .killed {
            record(.forceQuitNotLaunched, "\(id) was force-quit and its process is not killed at once")
        }
    }

    private mutating func reportExit(_ pid: Int32) {
        guard let process = processes[pid], let status = process.death else { return }
        // LC-9: the app's own failures count, ends the user or the system asked for do not.
        let termination = core.apps[process.app]?.process.flatMap { $0.pid == pid ? $0.termination : nil }
        if let reason = termination?.reason, !CrashStreak.isMisbehaviour(reason) {
            // Force-quit, upgrade, uninstall, exits-on-suspend: not the app's failure.
        } else if status.isAbnormal {
            if !process.reason.isForeground { crashes[process.app, default: CrashStreak()].record(now) }
        } else if termination == nil {
            crashes[process.app] = nil
        }
        processes[pid] = nil
        exitedPids.insert(pid)
        idleSince[pid] = nil
        feed { core, now throws(CoreError) in core.processExited(process.app, pid: pid, status: status, at: now) }
    }

    /// What a real shell does at once: starts the launches the core asked for and reports processes that died.
    private mutating func settleProcesses() {
        while violation == nil, !pendingLaunches.isEmpty {
            start(pendingLaunches.removeFirst(), .normal)
        }
        for pid in processes.keys.sorted() where violation == nil && processes[pid]?.death != nil {
            reportExit(pid)
        }
    }

    /// Moves time to `target`, firing the core's timer at exactly each deadline on the way.
    private mutating func advance(to target: Instant) {
        settleProcesses()
        var firingsNow = 0
        while violation == nil, let next = core.nextDeadline, next <= target {
            if next > now {
                now = next
                firingsNow = 0
            }
            firingsNow += 1
            if firingsNow > 16 {
                record(.deadlineNotInPast, "the timer fired 16 times at one instant without its deadline moving")
                return
            }
            feed(timer: true) { core, now throws(CoreError) in core.advance(to: now) }
            settleProcesses()
        }
        if now < target { now = target }
        updateIdle()
    }

    /// Tracks since when each process has been idle in the background, from what the shell knows of it: attached,
    /// launched, no callback unanswered, no task open, no run in its hands, and the core not terminating it. A mode
    /// that holds the app (audio playing, a VoIP socket being handled) keeps it running: when a mode may hold an app
    /// is the mode's own tests' business; here the lifecycle must honour the hold, and suspend once it ends.
    private mutating func updateIdle() {
        for (pid, process) in processes {
            let core = self.core.apps[process.app]?.process
            let idle =
                process.death == nil && !process.frozen && process.attached && process.launchCompleted
                && process.outstanding.isEmpty && process.openTasks.isEmpty && process.runs.isEmpty
                && process.pushRuns.isEmpty && core?.pushRuns.isEmpty != false && core?.transferRuns.isEmpty != false
                && core?.pid == pid && core?.phase == .background && core?.termination == nil
                && !self.core.modeHolds(of: process.app, at: now).contains { $0.verdict == .holds }
            if !idle {
                idleSince[pid] = nil
            } else if idleSince[pid] == nil {
                idleSince[pid] = now
            }
        }
    }

    // MARK: Tracing

    private mutating func count(_ action: CoreAction) {
        let key: String
        switch action {
        case .launch(_, let plan): key = "launch.\(plan.reason.rawValue)"
        case .deliver(_, _, let callback): key = "deliver.\(callback.kind.name)"
        case .freeze: key = "freeze"
        case .thaw: key = "thaw"
        case .terminate: key = "terminate"
        case .kill: key = "kill"
        case .forget: key = "forget"
        case .watchSocket(_, _, let armed): key = armed ? "watchSocket.armed" : "watchSocket.disarmed"
        case .closeSocket: key = "closeSocket"
        case .watchAccessory: key = "watchAccessory"
        case .unwatchAccessory: key = "unwatchAccessory"
        case .log(let entry):
            switch entry.kind {
            case .watchdog, .taskRun, .taskDone, .taskExpire, .wakeup, .launchFailed: key = "log.\(entry.kind.rawValue)"
            case .kill where entry.message.hasPrefix("ended for memory"): key = "memory.ended"
            case .device where entry.message.hasPrefix("memory pressure relieved"): key = "memory.relieved"
            default: return
            }
        case .saveApp, .saveDevice: return
        case .recordHistory(.wait): key = "history.wait"
        case .recordHistory(.run(let run)): key = run.outcome.map { "history.run.\($0.rawValue)" } ?? "history.run.started"
        case .continuedProgress(_, _, let view):
            guard let view else {
                key = "continued.over"
                break
            }
            key = view.endedBecause?.contains("pressure") == true ? "continued.pressure" : "continued.\(view.state.rawValue)"
        case .notification(let action): key = "notification.\(action.kindName)"
        case .push(.hold): key = "push.hold"
        case .push(.finish(_, _, let outcome)): key = "push.\(outcome.name)"
        case .transfer(let action): key = "transfer.\(Self.transferKind(action))"
        case .network(let change):
            for restriction in change.restrictions.values {
                coverage["network.\(restriction?.rawValue ?? "allowed")", default: 0] += 1
            }
            return
        case .usage(let change):
            for context in change.contexts.values {
                let kind = context.map { $0.foreground ? "foreground" : $0.backgroundRunning ? ($0.wakeUp ? "wake-up" : "background") : "suspended" }
                coverage["usage.\(kind ?? "ended")", default: 0] += 1
            }
            return
        }
        coverage[key, default: 0] += 1
    }

    private static func transferKind(_ action: TransferAction) -> String {
        switch action {
        case .save(let task): "save.\(task.state.rawValue)"
        case .delete: "delete"
        case .saveSession: "saveSession"
        case .deleteSession: "deleteSession"
        case .saveRelaunches: "saveRelaunches"
        case .start: "start"
        case .stop: "stop"
        case .handOver: "handOver"
        }
    }

    private static func describe(_ action: CoreAction) -> String? {
        switch action {
        case .launch(let id, let plan): "→ launch \(id) #\(plan.launch) (\(plan.reason.rawValue))"
        case .deliver(let id, let pid, let callback): "→ deliver \(callback.kind) #\(callback.id) to \(id) pid \(pid)"
        case .freeze(let id, let pid): "→ freeze \(id) pid \(pid)"
        case .thaw(let id, let pid): "→ thaw \(id) pid \(pid)"
        case .terminate(let id, let pid): "→ SIGTERM \(id) pid \(pid)"
        case .kill(let id, let pid): "→ SIGKILL \(id) pid \(pid)"
        case .forget(let id, _): "→ forget \(id)"
        case .watchSocket(let id, let token, let armed): "→ \(armed ? "watch" : "unwatch") socket \(token) of \(id)"
        case .closeSocket(let id, let token): "→ close socket \(token) of \(id)"
        case .watchAccessory(let id, let name, let path): "→ watch accessory \(name) of \(id) at \(path)"
        case .unwatchAccessory(let id, let name): "→ unwatch accessory \(name) of \(id)"
        case .log(let entry): "  · \(entry.app.map { "\($0): " } ?? "")\(entry.message)"
        case .saveApp, .saveDevice, .recordHistory: nil
        case .notification(let action): "→ notification \(action.kindName)"
        case .push(let action): "→ push \(action)"
        case .transfer(let action): "→ transfer \(action)"
        case .continuedProgress(let id, let run, let view): "→ progress of run \(run) of \(id): \(view?.description ?? "over")"
        case .network(let change):
            "→ network " + change.restrictions.keys.sorted().map { "\($0) \(change.restrictions[$0]!?.rawValue ?? "allowed")" }
                .joined(separator: ", ")
        case .usage(let change):
            "→ usage " + change.contexts.keys.sorted().map { id in
                let context = change.contexts[id]!
                return "\(id) " + (context.map { "fg \($0.foreground) bg-running \($0.backgroundRunning) day \($0.day)" } ?? "ended")
            }.joined(separator: ", ")
        }
    }
}

/// Background launches of one app in a row that ended abnormally (SPEC LC-9).
struct CrashStreak: Hashable, Sendable {
    /// How many in a row.
    var count = 0
    /// When the last one ended.
    var lastEnd = ModelWorld.start

    /// One more ended abnormally at `now`.
    mutating func record(_ now: Instant) {
        count += 1
        lastEnd = now
    }

    /// The shortest wait before the next background launch: growing delays, never a tight loop.
    func delay(_ configuration: CoreConfiguration) -> Double {
        min(configuration.crashLoopInitialDelay * Double(1 << min(count - 1, 30)), configuration.crashLoopMaxDelay)
    }

    /// Whether the system ended the app for the app's own misbehaviour (a watchdog), rather than for the user or for
    /// its own reasons (force-quit, upgrade, uninstall, shutdown, exits-on-suspend).
    static func isMisbehaviour(_ reason: TerminationReason) -> Bool {
        switch reason {
        case .launchTimeout, .callbackTimeout, .backgroundTaskOverrun, .taskOverrun, .didNotReattach, .launchFailed,
            .remoteNotificationOverrun, .memoryLimitExceeded, .backgroundMemoryLimitExceeded:
            true
        case .exitsOnSuspend, .multitaskingOff, .forceQuit, .uninstalled, .upgraded, .shutdown, .freezeFailed, .memoryPressure:
            false
        }
    }
}
