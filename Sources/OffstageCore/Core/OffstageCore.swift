/// The whole decision-making of Offstage: a pure, deterministic state machine.
///
/// The core does no I/O and never reads a clock. A shell (the daemon or the simulator) calls one mutating
/// method per input, passing the `now` it observed; each returns the ``CoreAction``s to carry out, in order.
/// After every call the shell arms one timer for ``nextDeadline`` and calls ``advance(to:)`` when it fires,
/// so nothing in the system polls.
public struct OffstageCore: Sendable {
    /// The numbers the core decides with.
    public private(set) var configuration: CoreConfiguration
    /// The device: foreground app, lock screen, interruption, device settings.
    public internal(set) var device: DeviceState
    /// Every installed app.
    public internal(set) var apps: [AppID: AppEntry] = [:]

    /// The next number for callbacks, background tasks and launches. Seeded by the shell so numbers do not
    /// repeat across daemon restarts (an app that reattaches must not confuse an old callback with a new one).
    var nextNumber: UInt64
    /// The first number this core handed out: a smaller one is the previous daemon's (numbers never repeat across
    /// restarts).
    let firstNumber: UInt64
    /// Actions produced by the current input.
    var outbox: [CoreAction] = []
    /// Apps touched by the current input; settled before the actions are handed back.
    var touched: Set<AppID> = []
    /// The earliest deadline of each app whose process has one (watchdogs, the callback in flight, the background
    /// budget, the suspension, scheduled runs, a termination's next stage), brought up to date at the end of every
    /// input for the apps it touched: the next deadline is found among these, not by looking at every installed app
    /// (SPEC §11 scale).
    var processDeadlines: [AppID: Instant] = [:]
    /// Apps settled during the current input, whose entry in ``processDeadlines`` is recomputed as it finishes.
    var deadlinesStale: Set<AppID> = []

    /// Decides when runnable background work runs (SPEC SCH-5).
    public internal(set) var policy: any SchedulingPolicy
    /// The policy's last plan for each request it did not run, for `explain` (SPEC SCH-8).
    public internal(set) var plan: [TaskKey: PlannedRun] = [:]
    /// Something the scheduler depends on changed: it decides again before the current input's actions go out.
    var schedulerDirty = false
    /// Apps with continued-processing work queued or running (SPEC SCH-11): the scheduler pass looks only at these.
    var continuedApps: Set<AppID> = []
    /// When the scheduler must decide again if nothing changes (a plan comes due or a time-based hold lifts).
    var schedulerDeadline: Instant?
    /// What the scheduler found for each app when it last looked (see ``AppSchedulingView``).
    var schedulingViews: [AppID: AppSchedulingView] = [:]
    /// Apps changed since the scheduler last looked at them.
    var schedulingStale: Set<AppID> = []
    /// What every view was computed with; nil before the first decision.
    var schedulingInputs: SchedulingInputs?
    /// The daemon is shutting down: nothing new is launched or started.
    public internal(set) var shuttingDown = false
    /// The long-running background modes, one component each (SPEC §7).
    public internal(set) var modes = BackgroundModes()
    /// Local notifications: pending, delivered, badges, categories (SPEC NT-1, NT-2).
    public internal(set) var notifications = NotificationSchedule()
    /// Background pushes held over budget, and each app's budget (SPEC NT-4).
    public internal(set) var pushes = PushInbox()
    /// Background transfers: sessions, tasks, what runs (SPEC §5).
    public internal(set) var transfers = TransferQueue()
    /// What the transfer queue last decided with.
    var transferInputs: TransferInputs?
    /// When an app's launch for its finished transfers, delayed, is due (SPEC TR-3).
    var transferRelaunchAt: Instant?
    /// Since when, and why, each pending request has waited: the open end of the history (SPEC SCH-8).
    public internal(set) var history = TaskHistory()
    /// Whose traffic the user's data controls block, as last handed to the shell (SPEC SET-2).
    public internal(set) var network = NetworkRules()
    /// What the restrictions were last decided with; nil before the first decision.
    var networkInputs: NetworkInputs?
    /// Apps whose traffic restriction and usage context are decided again at the end of the current input.
    var perAppStale: Set<AppID> = []
    /// What each app's use of the machine counts as now, as last handed to the shell (SPEC SET-3).
    public internal(set) var usage = UsageMeter()
    /// The answer to memory pressure under way (SPEC MEM-1).
    public internal(set) var memory = MemoryResponse()
    /// Bytes the daemon moved for apps' transfers during the current input.
    var transferredBytes: [AppID: TransferBytes] = [:]

    /// Creates a core.
    /// - Parameters:
    ///   - configuration: the numbers.
    ///   - device: the device state to start from (restored by the daemon after a restart).
    ///   - numberSeed: the first number to hand out for callbacks, tasks and launches.
    ///   - policy: decides when background work runs; Offstage's own ``AdaptivePolicy`` by default.
    public init(
        configuration: CoreConfiguration = .init(), device: DeviceState = .init(), numberSeed: UInt64 = 1,
        policy: any SchedulingPolicy = AdaptivePolicy()
    ) {
        self.configuration = configuration
        self.device = device
        self.nextNumber = max(1, numberSeed)
        self.firstNumber = max(1, numberSeed)
        self.policy = policy
        notifications.restoreTimeZone(device.settings.timeZone)
    }

    // MARK: Queries

    /// The status of one app.
    public func status(of id: AppID, at now: Instant) -> AppStatus? {
        status(of: id, at: now, endingOrder: apps[id]?.process == nil ? [] : memoryEndingOrder(at: now).map(\.app))
    }

    /// The status of every app, sorted by id.
    public func statuses(at now: Instant) -> [AppStatus] {
        let order = memoryEndingOrder(at: now).map(\.app)
        return apps.keys.sorted().compactMap { status(of: $0, at: now, endingOrder: order) }
    }

    private func status(of id: AppID, at now: Instant, endingOrder: [AppID]) -> AppStatus? {
        guard let entry = apps[id] else { return nil }
        let process = entry.process
        var remaining: Double?
        // Only a process that runs in the background spends its budget: a suspended one does not run at all.
        if let process, process.phase == .background {
            remaining = process.ledger.timeRemaining(at: now)
        }
        return AppStatus(
            id: id, state: entry.state, pid: process?.pid, backgroundTasks: process?.ledger.tasks.count ?? 0,
            backgroundTimeRemaining: remaining, launchReason: process?.reason,
            terminating: process?.termination.map { $0.reason.description },
            forceQuit: entry.durable.forceQuit, lastTermination: entry.durable.lastTermination,
            backgroundModes: entry.app.manifest.backgroundModes.sorted { $0.rawValue < $1.rawValue },
            exitsOnSuspend: exitsOnSuspend(entry), modeHolds: process?.frozen == false ? modeHolds(of: id, at: now) : [],
            memoryBand: memoryBand(of: id, at: now), memoryEndingRank: endingOrder.firstIndex(of: id).map { $0 + 1 },
            keptInMemory: entry.app.settings.keptInMemory,
            suspendedBecause: process?.frozen == true ? process?.suspendedBecause : nil,
            continued: continuedTasks(of: entry))
    }

    /// The durable state of an app, for the shell to persist after ``CoreAction/saveApp(_:)``.
    public func durableState(of id: AppID) -> AppDurableState? { apps[id]?.durable }

    /// Whether no app process is left (shutdown is complete when this holds).
    public var noProcessesLeft: Bool { apps.values.allSatisfy { $0.process == nil } }

    /// The next number the core will hand out (the shell persists a floor above it across restarts).
    public var upcomingNumber: UInt64 { nextNumber }

    /// The app whose current process has this pid.
    public func app(withPid pid: Int32) -> AppID? {
        apps.first { $0.value.process?.pid == pid }?.key
    }

    // MARK: Restoring after a restart

    /// Adds an installed app read back from the store, without producing actions. Runs that had started when it was
    /// saved were cut off by the restart: their requests are pending again (SPEC SCH-10).
    public mutating func restore(_ app: InstalledApp, durable: AppDurableState) {
        var durable = durable
        for (identifier, request) in durable.schedule.started where durable.schedule.requests[identifier] == nil {
            if request.kind != .fetch { durable.schedule.requests[identifier] = request }
        }
        durable.schedule.started = [:]
        if durable.schedule.requests.values.contains(where: { $0.kind == .continued }) { continuedApps.insert(app.id) }
        durable.schedule.usage.start(at: app.installedAt)
        apps[app.id] = AppEntry(app: app, durable: durable)
        modes.location.restore(app.id, durable.significantLocationChange)
        modes.accessories.restore(app.id, durable.accessories, declared: app.manifest.backgroundModes)
        apps[app.id]?.durable.accessories = modes.accessories.registrations(of: app.id)
        scheduleAgain(app.id)
        perAppStale.insert(app.id)
    }

    // MARK: Helpers shared by the extensions

    mutating func takeNumber() -> UInt64 {
        defer { nextNumber += 1 }
        return nextNumber
    }

    mutating func emit(_ action: CoreAction) { outbox.append(action) }

    /// Something the scheduler reads of `id` changed: it looks at that app again before the input's actions go out.
    mutating func scheduleAgain(_ id: AppID) {
        schedulerDirty = true
        schedulingStale.insert(id)
        // Its process may have changed too (it exited, or a run started): its deadlines are read again, and whether
        // its traffic is restricted.
        deadlinesStale.insert(id)
        perAppStale.insert(id)
    }

    mutating func log(
        _ now: Instant, _ app: AppID?, _ kind: LogEntry.Kind, _ message: String, state: ApplicationState? = nil
    ) {
        emit(.log(LogEntry(at: now, app: app, kind: kind, message: message, state: state)))
    }

    /// Settles every touched app, lets the scheduler decide if anything it depends on changed, and hands back the
    /// actions of the current input.
    mutating func finish(_ now: Instant) -> [CoreAction] {
        // Whatever the input, an app due to be ended for memory is ended before the rest settles (SPEC MEM-1).
        endForMemoryIfDue(now)
        // Starting runs touches apps, and settling them (a freeze) can change what the scheduler sees: a few
        // rounds reach a fixed point; the bound only guards against a bug turning into a hang.
        for _ in 0..<4 {
            // In app order, not the set's (which differs from process to process): the same inputs give the same
            // actions in the same order, so a simulation or a model-based test replays exactly.
            while !touched.isEmpty {
                let batch = touched.sorted()
                touched.removeAll(keepingCapacity: true)
                for id in batch {
                    settle(id, now)
                    // Whatever touched the app may have changed what its requests wait for, and its deadlines.
                    schedulingStale.insert(id)
                    deadlinesStale.insert(id)
                    perAppStale.insert(id)
                }
            }
            // Transfers may launch or resume apps: those are settled in the next round.
            decideTransfers(now)
            if !touched.isEmpty { continue }
            let due = schedulerDeadline.map { $0 <= now } ?? false
            guard schedulerDirty || due else { break }
            runScheduler(now)
        }
        // After every round, so each app's deadlines are read from its final state.
        deadlinesStale.formUnion(touched)
        for id in deadlinesStale { refreshProcessDeadline(id) }
        deadlinesStale.removeAll(keepingCapacity: true)
        decidePerApp(now)
        flushHistory()
        // The caller takes the buffer. Emptied keeping its capacity, the outbox would get a new one as large: after a
        // burst of 64,000 notifications firing, tens of megabytes held for nothing.
        let actions = outbox
        outbox = []
        return actions
    }

    func exitsOnSuspend(_ entry: AppEntry) -> Bool {
        entry.app.manifest.exitsOnSuspend || !device.settings.multitaskingSupported
    }

    func entry(_ id: AppID) throws(CoreError) -> AppEntry {
        guard let entry = apps[id] else { throw .notInstalled(id) }
        return entry
    }
}
