import OffstageCore

/// The core driven by a virtual clock, with simulated app processes that behave as scripted.
///
/// It is a shell like the daemon: it feeds the core inputs with `now`, carries out the core's actions on
/// simulated processes, and keeps one deadline. Everything is deterministic: the same script gives the same
/// trace, to the nanosecond.
public struct Simulation: Sendable {
    /// The core under test.
    public internal(set) var core: OffstageCore
    /// The virtual clock.
    public internal(set) var clock: VirtualClock
    /// Everything observable that happened, in order.
    public internal(set) var trace: [TraceRecord] = []
    /// The core's event log.
    public internal(set) var log: [LogEntry] = []
    /// Errors the core returned to simulated apps or users.
    public internal(set) var errors: [CoreError] = []

    var behaviors: [AppID: AppBehavior] = [:]
    var processes: [Int32: SimulatedProcess] = [:]
    var queue = EventQueue<ProcessEvent>()
    var nextPid: Int32 = 1000
    /// Which scripted task result each app returns next.
    var resultCursor: [AppID: Int] = [:]
    /// Sockets the simulated apps handed off, by token, and whether the shell watches each now (SPEC MODE-2).
    public internal(set) var sockets: [UInt64: SimulatedSocket] = [:]
    var nextSocketToken: UInt64 = 1
    /// Paths of the virtual device where an accessory is plugged in (SPEC MODE-4).
    public internal(set) var pluggedAccessories: Set<String> = []
    /// The accessories the core asked to watch, with their paths.
    public internal(set) var accessoryWatches: [AccessoryWatch: String] = [:]
    /// The accessory sessions the simulated apps handed off, by socket token.
    var accessorySessions: [UInt64: AccessoryWatch] = [:]
    /// The locations each app's code was given, in order (SPEC MODE-3).
    public internal(set) var deliveredLocations: [AppID: [LocationFix]] = [:]
    /// The notifications shown to the user, in order, each once (SPEC NT-2), as the daemon's desktop sink shows them.
    public internal(set) var shownNotifications: [DeliveredNotification] = []
    /// The notifications each app's will-present handler was given (SPEC NT-2).
    public internal(set) var willPresentNotifications: [AppID: [DeliveredNotification]] = [:]
    /// The responses each app's did-receive-response handler was given.
    public internal(set) var notificationResponses: [AppID: [NotificationResponse]] = [:]
    /// The pushes each app's remote-notification handler was given, in order (SPEC NT-4).
    public internal(set) var handledPushes: [AppID: [String]] = [:]
    /// How each push ended, by `apns-id` (SPEC NT-4: never without a record).
    public internal(set) var pushOutcomes: [String: PushOutcome] = [:]
    /// The pushes held over budget, as the store keeps them.
    public internal(set) var heldPushes: [String: RemotePush] = [:]
    /// Background transfers as the daemon's journal keeps them, by task id (SPEC TR-6).
    public internal(set) var transferJournal: [UInt64: TransferTask] = [:]
    /// The downloads handed over to their apps, in order.
    public internal(set) var handedOverTransfers: [UInt64] = []
    /// The finished tasks each app's session delegate heard of, in order (SPEC TR-3).
    public internal(set) var transferEventsHeard: [AppID: [UInt64]] = [:]
    /// The simulated network: bytes per second each running transfer moves.
    public var transferBandwidth: Double = 10_000_000
    /// The size of what each URL serves (1 MB when not given); a negative size makes the server answer 404.
    public var transferSizes: [String: Int64] = [:]
    /// What the server of each URL answers, before ``transferSizes``: a status, a body, or no connection.
    public var transferResponses: [String: SimulatedResponse] = [:]
    /// Whether an attempt to a URL with neither a response nor a size waits, in flight, until one is given
    /// (``answerWaitingTransfers(to:)``), as a request to a server that has not answered yet; otherwise the server
    /// sends 1 MB.
    public var unansweredTransfersWait = false
    /// How many bytes each upload's file holds, by the file's path in the request: what its time on the network is
    /// counted from (the size its URL's server answers, when not given).
    public var uploadSizes: [String: Int64] = [:]
    /// The attempt in flight of each running task.
    var transferAttempts: [UInt64: UInt64] = [:]
    /// Sessions and launch counts as the journal keeps them.
    public internal(set) var transferSessionJournal: [TransferSessionKey: TransferSession] = [:]
    public internal(set) var transferRelaunchJournal: [AppID: TransferRelaunches] = [:]
    /// The history of scheduled work, as the daemon's store keeps it (SPEC SCH-8).
    public internal(set) var historyArchive = HistoryArchive()
    /// The apps whose traffic the simulated device blocks, and why, as the core's network actions said (SPEC SET-2).
    public internal(set) var networkRestrictions: [AppID: NetworkRestriction] = [:]
    /// What each app used, as far as virtual time tells (runtime, wake-ups, transfer bytes; no counters).
    public internal(set) var usage = UsageLedger()
    /// The device's memory, once ``enableMemory(_:)`` models it (SPEC MEM-1).
    public internal(set) var virtualMemory: VirtualMemory?
    /// Apps whose code runs outside the simulation (``ExternalEvent``).
    public internal(set) var externalApps: Set<AppID> = []
    /// What happened to the external apps' processes and not yet taken by ``takeExternalEvents()``, in order.
    var external: [ExternalEvent] = []

    /// Creates a simulation.
    /// - Parameters:
    ///   - configuration: the core's settings.
    ///   - clock: where virtual time starts.
    ///   - policy: the scheduling policy under test (Offstage's own by default).
    public init(
        configuration: CoreConfiguration = .init(), clock: VirtualClock = .init(),
        policy: any SchedulingPolicy = AdaptivePolicy()
    ) {
        self.core = OffstageCore(configuration: configuration, policy: policy)
        self.clock = clock
    }

    /// The current virtual time.
    public var now: Instant { clock.now }

    // MARK: Setup and user actions

    /// Installs (or upgrades) an app with a scripted behaviour. An install the core refuses (the app's uninstall is
    /// still finishing) changes nothing and is recorded in the log as a warning, as the daemon's caller would see it.
    public mutating func install(_ manifest: Manifest, behavior: AppBehavior = .init()) {
        let app = InstalledApp(manifest: manifest, bundlePath: "/sim/\(manifest.id)", installedAt: now)
        do {
            let (_, actions) = try core.install(app, at: now)
            behaviors[manifest.id] = behavior
            perform(actions)
        } catch {
            log.append(LogEntry(at: now, app: manifest.id, kind: .warning, message: "install refused: \(error)"))
        }
    }

    /// Installs an app that already has pending requests, as if it had run before: the same path a restarted
    /// daemon takes when it reads apps back from its store (SPEC SCH-10).
    /// - Parameter installedAt: when the app was installed (now by default; earlier for an app the user has had for a
    ///   while).
    public mutating func install(
        _ manifest: Manifest, behavior: AppBehavior = .init(), settings: AppSettings = .init(),
        installedAt: Instant? = nil, pending: [TaskBehavior.Submission]
    ) {
        behaviors[manifest.id] = behavior
        let app = InstalledApp(
            manifest: manifest, bundlePath: "/sim/\(manifest.id)", installedAt: installedAt ?? now, settings: settings)
        var durable = AppDurableState()
        for submission in pending { durable.schedule.requests[submission.identifier] = submission.request(at: now) }
        core.restore(app, durable: durable)
        perform(core.advance(to: now))
    }

    /// Changes an installed app's behaviour (takes effect for callbacks from now on).
    public mutating func setBehavior(_ behavior: AppBehavior, for id: AppID) { behaviors[id] = behavior }

    /// The user opens an app.
    public mutating func open(_ id: AppID) throws(CoreError) { perform(try core.open(id, at: now)) }
    /// The user goes home.
    public mutating func home() { perform(core.home(at: now)) }
    /// The user locks the screen.
    public mutating func lock() { perform(core.lock(at: now)) }
    /// The user unlocks the screen (back to the app in front when it was locked, or to the home screen).
    public mutating func unlock(returningToApp: Bool = true) {
        perform(core.unlock(returningToApp: returningToApp, at: now))
    }
    /// An interruption begins or ends.
    public mutating func interrupt(_ resolution: OffstageCore.InterruptionResolution?) throws(CoreError) {
        perform(try core.interrupt(resolution, at: now))
    }
    /// The user force-quits an app.
    public mutating func forceQuit(_ id: AppID) throws(CoreError) { perform(try core.forceQuit(id, at: now)) }
    /// The user uninstalls an app.
    public mutating func uninstall(_ id: AppID) throws(CoreError) { perform(try core.uninstall(id, at: now)) }
    /// Changes device settings.
    public mutating func setDeviceSettings(_ settings: DeviceSettings) {
        perform(core.setDeviceSettings(settings, at: now))
    }
    /// The daemon shuts down.
    public mutating func shutdown() { perform(core.shutdown(at: now)) }

    // MARK: Running

    /// Runs every event up to `duration` from now, in time order.
    public mutating func run(for duration: Duration) { run(until: now + duration) }

    /// Runs every event up to `end`, in time order, then leaves the clock at `end`.
    public mutating func run(until end: Instant) {
        while step(until: end) {}
        clock.advance(to: end)
    }

    /// When the next event is due (the core's deadline or a simulated process's), if any.
    public var nextEventTime: Instant? { [core.nextDeadline, queue.nextTime].compactMap { $0 }.min() }

    /// Moves the clock to the next event, if it is due by `end`, and runs every event due then; false when none is
    /// (the clock then stays where it is).
    public mutating func step(until end: Instant) -> Bool {
        guard let next = nextEventTime, next <= end else { return false }
        clock.advance(to: max(next, now))
        while let (_, event) = queue.popDue(at: now) { handle(event) }
        if let deadline = core.nextDeadline, deadline <= now { perform(core.advance(to: now)) }
        return true
    }

    // MARK: Observing

    /// The app's state.
    public func state(of id: AppID) -> ApplicationState { core.apps[id]?.state ?? .notRunning }

    /// The app's status as the CLI shows it.
    public func status(of id: AppID) -> AppStatus? { core.status(of: id, at: now) }

    /// The trace of one app.
    public func trace(of id: AppID) -> [TraceRecord] { trace.filter { $0.app == id } }

    /// The callbacks one app received, in order, by wire name.
    public func callbacks(of id: AppID) -> [String] {
        trace(of: id).compactMap { if case .callback(let name) = $0.event { name } else { nil } }
    }

    /// The first time `event` happened to `id`, if it did.
    public func firstTime(of event: TraceRecord.Event, for id: AppID) -> Instant? {
        trace.first { $0.app == id && $0.event == event }?.at
    }

    /// The background tasks the simulated app holds open.
    public func openTasks(of id: AppID) -> [BackgroundTaskID] {
        processes.values.first { $0.app == id }.map { Array($0.openTasks.keys).sorted() } ?? []
    }
}

extension Simulation {
    /// The app's code begins a background task outside any callback (for example in the foreground).
    public mutating func beginBackgroundTask(_ id: AppID, name: String) -> BackgroundTaskID {
        guard let process = processes.values.first(where: { $0.app == id }) else { return .invalid }
        do throws(CoreError) {
            let (task, actions) = try core.beginBackgroundTask(id, pid: process.pid, name: name, at: now)
            perform(actions)
            if task.isValid {
                processes[process.pid]?.openTasks[task] = name
                record(id, .taskBegan(name, task))
            }
            return task
        } catch {
            errors.append(error)
            return .invalid
        }
    }

    /// The app's code ends a background task it began by name.
    public mutating func endBackgroundTask(_ id: AppID, name: String) {
        guard let process = processes.values.first(where: { $0.app == id }) else { return }
        endTask(process.pid, name)
    }
}
