import Foundation
import Logging
import NIOCore
import NIOPosix
import OffstageCore
import OffstageProtocol

/// The daemon's shell around the core: it turns IPC calls, process exits and the timer into core inputs,
/// and the core's actions into effects (spawn, freeze, signals, callbacks, store writes).
///
/// Everything happens on one event loop (decision 0001): each entry point runs there, calls one core method
/// and carries out the actions before the next input. The class is `@unchecked Sendable` because that loop,
/// not a lock, protects its state; every entry point asserts it is on the loop.
public final class DaemonEngine: @unchecked Sendable {
    let eventLoop: any EventLoop
    let configuration: DaemonConfiguration
    let paths: DaemonPaths
    let store: OffstageStore
    let control: any ProcessControl
    /// Why this freezer was chosen (shown by `offstage status`).
    let freezerReason: String
    let installer: BundleInstaller
    let logger: Logger
    /// What the shell counts and times (SPEC §11 observability).
    let metrics: DaemonMetrics
    /// Callbacks delivered and not yet answered, with when (monotonic) they went out, for their latency.
    var pendingCallbacks: [CallbackID: PendingCallback] = [:]
    /// Runs slow work (copying a bundle) off the loop.
    let threadPool: NIOThreadPool
    var watcher: ExitWatcher!
    /// The sockets VoIP apps handed off (SPEC MODE-2); nil until the service starts it.
    var handOffs: HandedOffChannels?
    /// Watches the paths of registered accessories (SPEC MODE-4).
    var accessoryPaths: AccessoryPathWatcher?
    /// The location source and its feed to the core (SPEC MODE-3); nil until the service starts it.
    var location: LocationService?
    /// The desktop notifications are shown on, and what it was shown (SPEC NT-2).
    var presentation = DesktopPresentation()
    /// Continued-processing tasks' progress notifications on that desktop (SPEC SCH-11).
    var progress = ProgressPresentation()
    /// The push gateway inside the daemon (SPEC NT-3); nil when it is off or not started yet.
    var pushGateway: EmbeddedPushGateway?
    /// The link to a multi-device gateway, when the device uses one instead (SPEC NT-5, decision 0035).
    var remotePush: RemotePushLink?
    /// What the push inbox read back at start, applied once the apps are recovered.
    var restoredPushes: (actions: [CoreAction], pending: [RemotePush]) = ([], [])
    /// Runs background transfers' attempts (SPEC §5); nil until the service starts it.
    var transfers: TransferRunner?
    /// The user's data controls in the kernel (SPEC SET-2): nftables rules on the apps' sockets, or advisory.
    let network: NetworkFilter
    /// Counts what each app used, when the core says its use changed (SPEC SET-3).
    let usage: UsageRecorder
    /// The apps' memory groups and limits (SPEC MEM-2).
    let memory: AppMemory
    /// Watches the machine's power, network, memory pressure and thermal state (SPEC SET-1, SCH-11); nil until the
    /// service starts it, or where the kernel's event sockets cannot be opened.
    var machineWatcher: MachineConditionsWatcher?
    /// What the transfer journal read back at start, applied with the recovery.
    var restoredTransfers: [CoreAction] = []

    var core: OffstageCore
    var groups: [AppID: AppGroup] = [:]
    /// The app each live pid belongs to (main processes only), so exits and calls map in O(1).
    var appsByPid: [Int32: AppID] = [:]
    /// Each app's callback stream.
    var streams: [AppID: AttachStream] = [:]
    /// Callers of `Uninstall` waiting for the app's process to end and the app to be forgotten.
    var uninstallWaiters: [AppID: [VarlinkResponder]] = [:]
    /// The app each connection was identified as (identity never changes for a connection).
    var identities: [VarlinkConnectionID: (pid: Int32, identity: CallerIdentity)] = [:]
    /// The event log on its way to the store and to `offstage log --follow`.
    let eventLog: EventLogWriter
    /// What each input changed, on its way to the store before the replies that acknowledge it.
    let durable: DurableWriter
    var actionQueue: [CoreAction] = []
    var applying = false
    var timer: Scheduled<Void>?
    var armedDeadline: Instant?
    var shutdownPromise: EventLoopPromise<Void>?
    /// Numbers below this are reserved in the store; see `reserveNumbers`.
    var numberLimit: UInt64
    static let numberBlock: UInt64 = 1 << 16
    /// Processes of the previous daemon that are still alive, and those that are gone.
    let survivors: [OffstageStore.ProcessRecord]
    let vanished: [OffstageStore.ProcessRecord]

    struct AttachStream {
        let pid: Int32
        let connection: VarlinkConnectionID
        let responder: VarlinkResponder
    }

    struct PendingCallback {
        let app: AppID
        let label: CallbackLabel
        let deliveredAt: Int64
    }


    init(
        configuration: DaemonConfiguration, eventLoop: any EventLoop, store: OffstageStore,
        control: any ProcessControl, freezerReason: String, threadPool: NIOThreadPool, logger: Logger,
        metrics: DaemonMetrics, notifications: NotificationsReading? = nil, network: NetworkFilter? = nil,
        memory: AppMemory? = nil
    ) throws {
        self.network = network ?? NetworkFilter(
            advisory: "the daemon was started without a network filter", fix: "start it as offstaged does", logger: logger,
            metrics: metrics)
        self.memory = memory ?? AppMemory(watchedBecause: "the daemon was started without a memory service", logger: logger)
        self.usage = try UsageRecorder(
            settings: configuration.daemon.usage, network: self.network, control: control, store: store, logger: logger,
            reader: AppResourceReader(memory: self.memory.cgroups))
        self.metrics = metrics
        self.threadPool = threadPool
        eventLog = EventLogWriter(store: store, eventLoop: eventLoop, threadPool: threadPool, logger: logger)
        durable = DurableWriter(store: store, eventLoop: eventLoop, threadPool: threadPool, logger: logger)
        self.configuration = configuration
        self.eventLoop = eventLoop
        self.paths = DaemonPaths(root: configuration.stateDirectory)
        self.store = store
        self.control = control
        self.freezerReason = freezerReason
        self.installer = BundleInstaller(bundlesDirectory: paths.bundles)
        self.logger = logger
        // Waits and runs the previous daemon left open end where it was last known alive (decision 0044).
        let interrupted = try store.closeInterruptedHistory()
        if interrupted > 0 {
            logger.info("closed history records the previous daemon left open", metadata: ["offstage.count": "\(interrupted)"])
        }
        var device = try store.loadDevice() ?? DeviceState()
        device.interruption = nil
        // Processes the previous daemon started: alive ones are re-adopted in `start()`, others recorded as gone.
        let apps = try store.loadApps()
        let installed = Set(apps.map(\.0.id))
        let records = try store.loadProcesses()
        let procfs = ProcFS()
        let alive = records.filter { installed.contains($0.app) && procfs.isAlive(pid: $0.pid, startTime: $0.startTime) }
        survivors = alive
        vanished = records.filter { record in !alive.contains(record) }
        if let front = device.foregroundApp, !alive.contains(where: { $0.app == front }) {
            device.foregroundApp = nil
        }
        // Numbers (callbacks, tasks) never repeat across restarts: the store keeps a floor above every number
        // handed out, reserved a block at a time so the hot path never writes it.
        let seed = try store.meta("numberFloor").flatMap { UInt64($0) } ?? 1
        numberLimit = seed + Self.numberBlock
        try store.setMeta("numberFloor", String(numberLimit))
        var coreConfiguration = configuration.core
        if coreConfiguration.utcOffsetSeconds == nil {
            // Hours of the day and daily budgets follow the machine's time zone unless the configuration says otherwise.
            coreConfiguration.utcOffsetSeconds = TimeZone.current.secondsFromGMT()
        }
        core = OffstageCore(
            configuration: coreConfiguration, device: device, numberSeed: seed, policy: configuration.daemon.policy)
        for (app, durable) in apps { core.restore(app, durable: durable) }
        try restoreNotifications(notifications)
        restoredPushes = try readPushInbox()
        restoredTransfers = try readTransferJournal()
        sweepLeftovers(installed: apps.map(\.0))
    }

    /// Removes what a crash left behind: bundle copies no installed app refers to (an install, upgrade or uninstall
    /// cut short), and the data and output of apps no longer installed (an uninstall cut short after its store
    /// write). Uninstalls still pending keep theirs until ``OffstageCore/recover(at:)`` finishes them.
    func sweepLeftovers(installed: [InstalledApp]) {
        let removed = installer.sweep(keeping: Set(installed.map(\.bundlePath)))
        let ids = Set(installed.map(\.id.rawValue))
        let fileManager = FileManager.default
        var stale: [String] = removed.map { "bundles/" + $0 }
        for name in (try? fileManager.contentsOfDirectory(atPath: paths.root + "/data")) ?? [] where !ids.contains(name) {
            try? fileManager.removeItem(atPath: paths.root + "/data/" + name)
            stale.append("data/" + name)
        }
        for name in (try? fileManager.contentsOfDirectory(atPath: paths.root + "/logs")) ?? []
        where name.hasSuffix(".log") && !ids.contains(String(name.dropLast(4))) {
            try? fileManager.removeItem(atPath: paths.root + "/logs/" + name)
            stale.append("logs/" + name)
        }
        guard !stale.isEmpty else { return }
        logger.notice("removed what an interrupted install or uninstall left behind", metadata: ["offstage.paths": "\(stale)"])
    }

    /// The wall clock: the only place the daemon reads time for the core.
    static func wallClock() -> Instant {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Instant(nanosecondsSinceEpoch: Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec))
    }

    var now: Instant { Self.wallClock() }

    // MARK: Start-up

    /// Re-adopts apps that outlived the previous daemon (SPEC LC-8) and arms the timer. On the event loop.
    func start() {
        eventLoop.preconditionInEventLoop()
        // Transfers the previous daemon journaled come first: those that were running are journaled waiting, to resume
        // from their checkpoints, before any input (an adoption, a recovery) can start them again; applied later, that
        // older row would be written over the newer one of the attempt already started (or over an uninstall's delete).
        apply(restoredTransfers)
        restoredTransfers = []
        for record in vanished {
            // Forgotten with the state that records its end, in one transaction (below, after the adoptions).
            durable.endedProcesses.append((record.app, record.pid))
            // One the previous daemon had sent SIGKILL for a reason is recorded as ended for it, with the adoptions.
            if record.ending == nil {
                eventLog.pending.append(
                    LogEntry(at: now, app: record.app, kind: .exit, message: "exited while the daemon was down", state: .notRunning))
            }
        }
        for record in survivors {
            // Alive, it was never signalled (or survived it): this daemon decides afresh.
            if record.ending != nil { try? store.setProcessEnding(of: record.app, pid: record.pid, nil) }
            do {
                _ = try group(for: record.app)
                memory.adopted(record.app)
                try watcher.watch(pid: record.pid, startTime: record.startTime)
            } catch {
                logger.warning(
                    "cannot watch an adopted process", metadata: ["offstage.pid": "\(record.pid)", "offstage.error": "\(error)"])
            }
            appsByPid[record.pid] = record.app
        }
        // All at once: a decision between two adoptions could launch a survivor not adopted yet a second time.
        let endings = vanished.compactMap { record in record.ending.map { (app: record.app, reason: $0) } }
        apply(core.adopt(survivors.map { ($0.app, $0.pid) }, vanished: endings, at: now))
        watchMemoryLimits()
        // Before anything fires: calendar notifications follow the machine's time zone if it changed meanwhile.
        followMachineTimeZone(postEventIfSame: false)
        // Uninstalls acknowledged before the restart are finished; pending work read back from the store is
        // decided now, not at the first input.
        apply(core.recover(at: now))
        // Pushes the previous daemon accepted: held ones are back, cut-off handlers recorded, the rest handed in now.
        apply(restoredPushes.actions)
        for push in restoredPushes.pending { apply(core.pushArrived(push, at: now)) }
        restoredPushes = ([], [])
        // Registered accessories are watched from the start: a connection may launch an app that is not running.
        apply(core.watchAccessories(at: now))
        // VoIP apps run from the start (SPEC MODE-2): those not found alive are launched into the background.
        apply(core.launchAtBoot(at: now))
    }

    // MARK: Applying actions

    /// Carries out `actions`, and those of every core input they cause, in order; then hands the state they changed
    /// (one transaction) and the log entries to the writer thread, and re-arms the timer. The caller's reply waits
    /// for the state to be written (persist, then acknowledge) but the event loop does not.
    func apply(_ actions: [CoreAction]) {
        eventLoop.preconditionInEventLoop()
        // Not applying, the queue is empty: it takes the caller's buffer rather than a copy (a burst of notifications
        // firing after downtime is hundreds of thousands of actions).
        // An app the input brings to the front has its network before it is thawed and told so (SPEC SET-2): the
        // lifts of the input's rules go first; its new restrictions are applied later, off the loop.
        for case .network(let change) in actions { network.liftNow(change) }
        if actionQueue.isEmpty {
            actionQueue = actions
        } else {
            actionQueue.append(contentsOf: actions)
        }
        guard !applying else { return }
        applying = true
        var index = 0
        while index < actionQueue.count {
            if case .notification = actionQueue[index] {
                index = performNotificationRun(from: index)
                continue
            }
            let action = actionQueue[index]
            index += 1
            perform(action)
        }
        actionQueue.removeAll(keepingCapacityUpTo: Self.keptCapacity)
        applying = false
        reserveNumbers()
        durable.saveState(core)
        durable.saveHistory(at: now)
        eventLog.flush()
        rearm()
        machineWatcher?.readPressure(pressureWanted)
        followMemoryLimits()
    }

    /// Moves the stored floor up a block before the core's numbers reach it.
    func reserveNumbers() {
        guard core.upcomingNumber + Self.numberBlock / 2 >= numberLimit else { return }
        numberLimit = core.upcomingNumber + Self.numberBlock
        let limit = numberLimit
        persist { try store.setMeta("numberFloor", String(limit)) }
    }

    // MARK: The one timer

    /// Arms one scheduled task for the core's next deadline, or none (no deadline, no wake-up).
    func rearm() {
        let next = core.nextDeadline
        guard next != armedDeadline else { return }
        timer?.cancel()
        timer = nil
        armedDeadline = next
        guard let next else { return }
        let delay = next - now
        let nanoseconds = max(0, delay.nanoseconds)
        timer = eventLoop.scheduleTask(in: .nanoseconds(nanoseconds)) { [self] in
            timer = nil
            armedDeadline = nil
            let firedAt = now
            // Against the wall clock, the deadline's own clock: how late the core's due work starts.
            metrics.timerFired(latenessNanoseconds: (firedAt - next).nanoseconds)
            // The response to memory pressure may end an app now: recorded with its memory (SPEC MEM-1).
            if core.memory.episode != nil { noteAppMemory() }
            apply(core.advance(to: firedAt))
        }
    }

    // MARK: Groups

    func group(for id: AppID) throws -> AppGroup {
        if let group = groups[id] { return group }
        let group = try control.makeGroup(forApp: id.rawValue)
        groups[id] = group
        // Its rules exist before any of its processes runs (SPEC SET-2), and its counters start there (SPEC SET-3).
        network.register(id, group, restriction: core.network.restricted[id])
        usage.registered(id, group)
        return group
    }

    // MARK: Process exits

    /// A watched process exited (called on the loop).
    func processExited(pid: Int32, status: ExitStatus) {
        eventLoop.preconditionInEventLoop()
        guard let id = appsByPid.removeValue(forKey: pid) else { return }
        // Its row goes with the app's state that records the exit, in one transaction at the end of this input: a kill -9
        // between a delete and a later save would leave the next daemon neither the process nor its end (SPEC LC-8, MEM-1).
        durable.endedProcesses.append((id, pid))
        // Callbacks the process never answered have no latency; they are not kept waiting for one.
        if !pendingCallbacks.isEmpty { pendingCallbacks = pendingCallbacks.filter { $0.value.app != id } }
        // Whatever the app left behind in its group goes with it.
        if let group = groups[id] { try? control.kill(group, leader: pid) }
        if let stream = streams[id], stream.pid == pid {
            streams[id] = nil
            stream.responder.fail(VarlinkError("io.offstage.App.Terminated", parameters: [:]))
        }
        // The kernel's word, which the core weighs with the exit status and the app's limit (SPEC MEM-2).
        apply(core.processExited(id, pid: pid, status: status, outOfMemory: memory.endedForMemory(id), at: now))
        watchMemoryLimits()
        readMemoryAfterExit()
        checkShutdown()
    }
}

extension DaemonEngine {
    /// The latest durable write, until it completes: final replies wait for it (persist, then acknowledge).
    var durableWrite: EventLoopFuture<Void>? { durable.latest }

    /// Hands the input's log entries to the log writer.
    func flushLog() { eventLog.flush() }

    /// Reads the log after every entry handed to the writer so far.
    func readLog(app: AppID?, limit: Int) -> EventLoopFuture<[(Int64, LogEntry)]> { eventLog.read(app: app, limit: limit) }

    /// The most elements a queue emptied after every input keeps room for. A burst (64,000 notifications firing at
    /// once after downtime, SPEC §11) fills a queue with hundreds of thousands: room kept for them would hold tens of
    /// megabytes for the daemon's life.
    static let keptCapacity = 4_096
}

extension Array {
    /// Removes every element, keeping the room for them unless it is for more than `limit`.
    mutating func removeAll(keepingCapacityUpTo limit: Int) {
        removeAll(keepingCapacity: capacity <= limit)
    }
}
