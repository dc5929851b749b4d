import COffstageSystem
import Foundation
import Logging
import NIOCore
import NIOPosix
import OffstageCore
import OffstageProtocol
import ServiceLifecycle
import Synchronization

/// The daemon as a long-running service: opens the store, picks the freezer, re-adopts surviving apps, serves
/// Varlink, and on graceful shutdown ends its apps (decision 0004) before it stops listening.
public struct OffstageDaemonService: Service {
    let configuration: DaemonConfiguration
    let logger: Logger
    /// What the daemon counts; `io.offstage.Control.Metrics` and ``MetricsHTTPService`` expose it.
    public let metrics: DaemonMetrics
    /// Connects to the desktop's notification service; nil: notifications are shown on no desktop.
    let notificationDesktop: NotificationDesktopConnector?

    /// Creates the service. Without `metrics`, it records into a Prometheus registry of its own, made with the
    /// configuration's deadline tolerance. With `notificationDesktop`, delivered notifications are shown on the
    /// desktop session the daemon runs in, if any (SPEC NT-2).
    public init(
        configuration: DaemonConfiguration, logger: Logger, metrics: DaemonMetrics? = nil,
        notificationDesktop: NotificationDesktopConnector? = nil
    ) {
        self.configuration = configuration
        self.logger = logger
        self.notificationDesktop = notificationDesktop
        self.metrics = metrics ?? DaemonMetrics(
            deadlineTolerance: .seconds(double: configuration.daemon.deadlineTolerance))
    }

    public func run() async throws {
        let paths = DaemonPaths(root: configuration.stateDirectory)
        try FileManager.default.createDirectory(atPath: paths.root, withIntermediateDirectories: true)
        let metrics = metrics
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let server = VarlinkServer(
            configuration: .init(
                socketPath: configuration.socketPath, version: offstageVersion,
                maximumMessageSize: configuration.daemon.maximumMessageSize, metrics: metrics),
            eventLoop: loop)
        // Listening before anything is loaded: after a restart the apps that outlived the previous daemon connect at
        // once and wait in the socket while their state is read back (with 1,000 apps, most of the start), instead
        // of being refused and retrying on their own schedule. Nothing is read from them before `server.start()`.
        try server.listen()
        let engine: DaemonEngine
        let store: OffstageStore
        let control: any ProcessControl
        var network: NetworkFilter?
        var memory: AppMemory?
        let threadPool = NIOThreadPool(numberOfThreads: 1)
        do {
            store = try OffstageStore(
                path: paths.store, eventLogCapacity: configuration.daemon.eventLogCapacity,
                historyBounds: configuration.daemon.historyBounds, metrics: metrics)
            // With many notifications reading them back is most of a restart: it goes on beside the rest.
            let notifications = NotificationsReading(store)
            let freezerReason: String
            (control, freezerReason) = try Self.processControl(configuration, logger: logger)
            logger.info("freezer: \(control.kind.rawValue) (\(freezerReason))")
            network = configuration.daemon.dataControls
                ? NetworkFilter.start(
                    instanceName: Self.instanceName(for: configuration.stateDirectory), control: control, logger: logger,
                    metrics: metrics)
                : NetworkFilter(
                    advisory: "turned off in the configuration (dataControls)", fix: "set dataControls to true",
                    logger: logger, metrics: metrics)
            memory = AppMemory(
                instanceName: Self.instanceName(for: configuration.stateDirectory),
                useController: configuration.daemon.memoryController, budgetMB: configuration.daemon.memoryBudgetMB,
                pressure: configuration.daemon.machinePressure, logger: logger)
            logger.info(
                "memory limits: \(memory!.limitsState) \(memory!.limitsDetail(watchInterval: configuration.daemon.memoryWatchInterval))")
            if let problem = memory!.budgetProblem {
                logger.warning("the app memory budget is not in force: \(problem)")
            } else if memory!.budget != nil {
                logger.info("app memory budget: \(memory!.budgetDetail)")
            }
            threadPool.start()
            engine = try await loop.submit { [control, store, network, memory] in
                try DaemonEngine(
                    configuration: configuration, eventLoop: loop, store: store, control: control,
                    freezerReason: freezerReason, threadPool: threadPool, logger: logger, metrics: metrics,
                    notifications: notifications, network: network, memory: memory)
            }.get()
        } catch {
            // The socket goes with the daemon that could not start: clients waiting on it see it close; its table
            // and memory groups go from the kernel.
            network?.stop()
            memory?.removeAll()
            try? await server.close()
            throw error
        }
        let watcher = try ExitWatcher(mode: .reapAllChildren) { pid, status in
            loop.execute { engine.processExited(pid: pid, status: status) }
        }
        server.register(AppService(engine: engine))
        server.register(ControlService(engine: engine))
        server.register(ModesService(engine: engine))
        server.register(ModesControlService(engine: engine))
        server.register(NotificationsService(engine: engine))
        server.register(NotificationsControlService(engine: engine))
        server.register(PushService(engine: engine))
        server.register(PushControlService(engine: engine))
        server.register(TransfersService(engine: engine))
        server.register(TransfersControlService(engine: engine))
        server.onConnectionClosed { context in loop.execute { engine.connectionClosed(context) } }
        // Answers go out once what they acknowledge is on the disk (persist, then acknowledge).
        server.holdFinalReplies { engine.durableWrite }
        let handOffs: HandedOffChannels
        let accessoryPaths: AccessoryPathWatcher
        do {
            handOffs = try HandedOffChannels(path: ModesInterface.handOffSocketPath(forMain: configuration.socketPath), engine: engine)
        } catch {
            watcher.shutdown()
            try? await server.close()
            engine.removeKernelState()
            throw error
        }
        do {
            accessoryPaths = try AccessoryPathWatcher { key, present in
                loop.execute { engine.accessoryPresence(key, present: present) }
            }
        } catch {
            handOffs.stop()
            watcher.shutdown()
            try? await server.close()
            engine.removeKernelState()
            throw error
        }
        let location = LocationService(engine: engine, settings: configuration.daemon.location)
        // The push gateway listens once the engine has read its inbox back: a push accepted now reaches a core
        // that knows what the previous daemon held (SPEC NT-5).
        let pushGateway: EmbeddedPushGateway?
        let remotePush: RemotePushLink?
        do {
            // A device linked to a multi-device gateway takes its pushes from there and runs none of its own.
            remotePush = try configuration.daemon.push.remote.map { remote in
                try RemotePushLink(
                    settings: remote, store: store, logger: logger,
                    deliver: { push in loop.execute { engine.pushAccepted(push) } })
            }
            pushGateway = try configuration.daemon.push.enabled && remotePush == nil
                ? EmbeddedPushGateway(
                    settings: configuration.daemon.push, store: store, logger: logger,
                    deliver: { push in loop.execute { engine.pushAccepted(push) } })
                : nil
        } catch {
            handOffs.stop()
            accessoryPaths.stop()
            watcher.shutdown()
            try? await server.close()
            engine.removeKernelState()
            throw error
        }
        // Background transfers' attempts run on threads of their own; their reports come back to the loop.
        let transfers = TransferRunner(
            root: configuration.stateDirectory, loop: loop,
            connectionsPerHost: configuration.core.transfers.maximumRunning,
            checkpointBytes: configuration.daemon.transferCheckpointBytes, logger: logger,
            report: { report in loop.execute { engine.transferReported(report) } })
        let (desktop, noDesktop) = connectDesktop { event in loop.execute { engine.desktopEvent(event) } }
        try await loop.submit {
            engine.useDesktop(desktop, unavailable: noDesktop)
            engine.watcher = watcher
            engine.handOffs = handOffs
            engine.accessoryPaths = accessoryPaths
            engine.location = location
            engine.pushGateway = pushGateway
            engine.remotePush = remotePush
            engine.transfers = transfers
            engine.start()
        }.get()
        if let remotePush {
            remotePush.start()
            logger.notice("taking pushes from the gateway at \(remotePush.address) as device \(remotePush.settings.device)")
        }
        var runningGateway = pushGateway
        if let pushGateway {
            do {
                try await pushGateway.start()
                logger.notice("push gateway (APNs provider API, Web Push) listening on \(pushGateway.address)")
            } catch {
                // The rest of the daemon runs on: apps are told the gateway is unavailable when they register.
                logger.error(
                    "the push gateway cannot listen on \(configuration.daemon.push.listen): \(error); running without it (set push.listen to a free HOST:PORT)")
                await pushGateway.shutdown()
                runningGateway = nil
                try? await loop.submit { engine.pushGateway = nil }.get()
            }
        }
        location.startDefault()
        let conditions = Self.watchMachine(
            engine: engine, loop: loop, pressure: configuration.daemon.machinePressure,
            networkManager: configuration.daemon.networkManager, logger: logger)
        let clock = Self.watchClock(engine: engine, loop: loop, logger: logger)
        try await server.start()
        logger.notice("offstaged \(offstageVersion) listening on \(configuration.socketPath)")
        // Reading the store back filled SQLite's page caches and left freed memory between what stays (with 64,000
        // notifications, megabytes: SPEC §11, 64 MB): both given back, now that the daemon answers.
        store.releaseMemory()
        offstage_heap_trim()

        do {
            try await gracefulShutdown()
        } catch {
            // Cancelled rather than asked to stop: still end the apps below.
        }
        logger.notice("stopping: ending apps")
        // No push is accepted that the daemon could no longer hand in; those in flight finish first.
        if let runningGateway { await runningGateway.shutdown() }
        if let remotePush { await remotePush.stop() }
        try? await loop.flatSubmit { engine.shutdown() }.get()
        // Transfers stop where they are: their last checkpoints are journaled and they resume at the next start.
        await transfers.shutdown()
        try? await server.close()
        handOffs.stop()
        accessoryPaths.stop()
        location.stop()
        conditions?.shutdown()
        conditions?.reader.networkManager?.stop()
        clock?.stop()
        watcher.shutdown()
        // What the apps used up to now is counted while their counters still exist (SPEC SET-3).
        engine.usage.stop(at: DaemonEngine.wallClock())
        // Nothing of the daemon is left in the kernel (SPEC SET-2).
        engine.removeKernelState()
        // The log writer's last entries (the apps' exits) are on the disk before its thread stops.
        _ = try? await loop.flatSubmit { engine.readLog(app: nil, limit: 0) }.get()
        try? await threadPool.shutdownGracefully()
        try? await group.shutdownGracefully()
        logger.notice("stopped")
    }

    /// Feeds the machine's power and network to the core now and whenever the kernel reports a change (SPEC SET-1),
    /// and its memory pressure and thermal state at the configured interval while the core depends on them (SPEC MEM-1,
    /// SCH-11; see ``MachineConditionsWatcher/readPressure(_:)``). Where the kernel's
    /// event sockets cannot be opened, the reading is taken once and a warning logged.
    static func watchMachine(
        engine: DaemonEngine, loop: any EventLoop, pressure: MachinePressureSettings, networkManager useNetworkManager: Bool,
        logger: Logger
    ) -> MachineConditionsWatcher? {
        let apply: @Sendable (MachineReading) -> Void = { reading in
            loop.execute { engine.machineRead(reading) }
        }
        // NetworkManager's changes reach the watcher once it exists; the first reading reads the value itself.
        let watching = Mutex<MachineConditionsWatcher?>(nil)
        let (networkManager, problem) = Self.connectNetworkManager(useNetworkManager, logger: logger) {
            watching.withLock { $0 }?.rereadNow()
        }
        let reader = MachineConditionsReader(
            pressure: pressure, budget: engine.memory.budget, networkManager: networkManager, problem: problem)
        logger.info("the network's kind comes from \(reader.networkSource)")
        let wakeUps = pressureWakeUps(pressure, memory: engine.memory, logger: logger)
        logPressureSources(reader, pressure, wakeUps: wakeUps, logger: logger)
        do {
            let watcher = try MachineConditionsWatcher(
                reader: reader, pressurePollInterval: pressure.pollInterval, wakeUps: wakeUps, onChange: apply)
            watching.withLock { $0 = watcher }
            apply(watcher.current)
            loop.execute {
                engine.machineWatcher = watcher
                watcher.readPressure(engine.pressureWanted)
            }
            return watcher
        } catch {
            logger.warning("not watching power and network: \(error); read once at start")
            apply(reader.read())
            return nil
        }
    }

    /// NetworkManager's metered hint on the system bus (`DBUS_SYSTEM_BUS_ADDRESS`, else the standard socket), or why
    /// there is none: turned off, or no bus to reach (NetworkManager missing from a reachable bus is no problem: its
    /// value is then unknown until it appears).
    static func connectNetworkManager(
        _ wanted: Bool, logger: Logger, onChange: @escaping @Sendable () -> Void
    ) -> (NetworkManagerMetered?, String?) {
        guard wanted else { return (nil, "NetworkManager turned off in the configuration (networkManager)") }
        let environment = ProcessInfo.processInfo.environment["DBUS_SYSTEM_BUS_ADDRESS"] ?? ""
        let address = environment.isEmpty ? NetworkManagerMetered.defaultSystemBus : environment
        do {
            return (try NetworkManagerMetered(address: address, onChange: onChange), nil)
        } catch {
            logger.info("not reading NetworkManager's metered hint: \(error)")
            return (nil, "no system bus to ask NetworkManager on: \(error)")
        }
    }

    /// Posts the clock being set and the time zone changing to the apps as system events (SPEC LC-4); the device's
    /// time zone follows the machine's (SPEC NT-1). Where the kernel's notifications cannot be had, a warning says so
    /// and the CLI's `system-event` remains.
    static func watchClock(engine: DaemonEngine, loop: any EventLoop, logger: Logger) -> SystemClockWatcher? {
        do {
            return try SystemClockWatcher { event in
                loop.execute {
                    if event == .timeZoneChange {
                        engine.followMachineTimeZone(postEventIfSame: true)
                    } else {
                        engine.apply(engine.core.systemEvent(event, at: engine.now).actions)
                    }
                }
            }
        } catch {
            logger.warning("not watching the clock and the time zone: \(error)")
            return nil
        }
    }

    /// The desktop delivered notifications are shown on (SPEC NT-2), or why there is none.
    func connectDesktop(
        events: @escaping @Sendable (NotificationDesktopEvent) -> Void
    ) -> ((any NotificationDesktop)?, String) {
        guard configuration.daemon.desktopNotifications else {
            return (nil, "turned off in the configuration (desktopNotifications)")
        }
        guard let address = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty else {
            return (nil, "no desktop session (DBUS_SESSION_BUS_ADDRESS is not set)")
        }
        guard let notificationDesktop else { return (nil, "no desktop notification client in this daemon") }
        do {
            return (try notificationDesktop(address, events), "")
        } catch {
            return (nil, "cannot connect to the session bus: \(error)")
        }
    }

    /// The freezer the configuration asks for, or the best this machine allows, with the reason.
    static func processControl(
        _ configuration: DaemonConfiguration, logger: Logger
    ) throws -> (any ProcessControl, String) {
        let instance = instanceName(for: configuration.stateDirectory)
        let timeout = Duration.seconds(double: configuration.daemon.freezeTimeout)
        if let kind = FreezerKind(rawValue: configuration.daemon.freezer) {
            return (try ProcessControlFactory.make(kind, instanceName: instance, freezeTimeout: timeout), "chosen in the configuration")
        }
        var reasons: [String] = []
        let control = ProcessControlFactory.best(instanceName: instance, freezeTimeout: timeout) { reasons.append($0) }
        return (control, reasons.isEmpty ? "the best available" : reasons.joined(separator: "; "))
    }

    /// A short stable name for this state folder, so two daemons never share cgroups: theirs are under
    /// `offstage.<name>` at each cgroup mount.
    public static func instanceName(for stateDirectory: String) -> String {
        let path = URL(fileURLWithPath: stateDirectory).standardizedFileURL.path
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in path.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }
}

extension DaemonEngine {
    /// Ends every app (will-terminate for running ones, SIGKILL for suspended ones) and completes when none is
    /// left or the shutdown timeout passes.
    func shutdown() -> EventLoopFuture<Void> {
        eventLoop.preconditionInEventLoop()
        let promise = eventLoop.makePromise(of: Void.self)
        shutdownPromise = promise
        apply(core.shutdown(at: now))
        checkShutdown()
        let timeout = Int64(configuration.daemon.shutdownTimeout * 1e9)
        eventLoop.scheduleTask(in: .nanoseconds(timeout)) { [self] in
            guard let promise = shutdownPromise else { return }
            shutdownPromise = nil
            logger.warning("shutdown timeout: apps still running are left to the kernel")
            promise.succeed()
        }
        return promise.futureResult
    }

    func checkShutdown() {
        guard let promise = shutdownPromise, core.noProcessesLeft else { return }
        shutdownPromise = nil
        flushLog()
        promise.succeed()
    }
}
