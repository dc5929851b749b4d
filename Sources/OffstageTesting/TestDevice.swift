import Foundation
@_spi(Testing) import Offstage
import OffstageCore
import OffstageProtocol
import OffstageSimulator
import Synchronization

/// A phone in a test: the real Offstage core — the same decisions, with the same defaults, as `offstaged` — on a
/// clock the test moves, and the app under test running its real delegate and handlers in the test's process.
///
/// ```swift
/// @Test @MainActor func refreshRunsWhileInTheBackground() async throws {
///     let device = await TestDevice()
///     let app = try device.install(infoPlist: infoPlistURL) { WeatherDelegate() }
///     try await device.open(app)
///     try await device.home()
///     try await device.advance(by: .seconds(24 * 3600))
///     #expect(app.callbacks.filter { $0 == .runTask("com.example.weather.refresh") }.count >= 2)
/// }
/// ```
///
/// Nothing sleeps and no daemon runs: a day of virtual time takes milliseconds. Callbacks are handed to the app on
/// the main actor, one at a time, as the SDK's main loop does; time moves on only once the app has answered every
/// callback it was given (within ``handlerTimeout`` of real time). What differs from a real device is written in
/// the README ("Testing your app's background behaviour").
///
/// The SDK is one per process, so one device runs at a time: creating a second waits until the first is gone.
@MainActor
public final class TestDevice {
    let host: KitHost
    /// The app whose code runs here, once installed.
    private(set) var app: TestApp?
    private var makeDelegate: (@MainActor (_ environment: [String: String]) -> any ApplicationDelegate)?
    /// The folder apps keep their data in, removed with the device.
    let folder: URL
    /// The installed app's bundle folder: where its resources are (``Offstage/Application/bundleURL``).
    private var bundle: URL
    /// The push gateway and the app server's key, once a test sent a push.
    var pushServerMade: KitPushServer?

    /// How long (real time) the app may take to answer a callback before the test fails: a delegate method or
    /// handler that never returns is reported, not waited for forever.
    public var handlerTimeout: Duration = .seconds(5)

    /// A device at `date` (by default Monday 2026-01-05 08:00 UTC) in `timeZone`, unlocked, on an unmetered network
    /// and battery at 80 %, with nothing installed.
    public convenience init(
        startingAt date: Date = Date(timeIntervalSince1970: 1_767_600_000), timeZone: TimeZone = TimeZone(identifier: "UTC")!
    ) async {
        await self.init(startingAt: date, timeZone: timeZone, core: CoreConfiguration())
    }

    private init(startingAt date: Date, timeZone: TimeZone, core: CoreConfiguration) async {
        await DeviceTurn.shared.take()
        MainSerialExecution.begin()
        var simulation = Simulation(
            configuration: core, clock: VirtualClock(start: Instant(secondsSinceEpoch: date.timeIntervalSince1970)))
        var settings = DeviceSettings()
        settings.timeZone = timeZone.identifier
        simulation.setDeviceSettings(settings)
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("offstage-testing-\(UUID().uuidString)")
        host = KitHost(simulation: simulation, folder: folder)
        bundle = folder.appendingPathComponent("bundle", isDirectory: true)
        read(MachineReading(batteryLevel: 80, charging: false, network: .unmetered))
    }

    /// A device whose system runs with the settings of an `offstaged` configuration file (`configuration`, its JSON
    /// text: `{"backgroundTaskBudget": 6, "refreshRuntime": 6}`), as a platform maker ships them; settings not given
    /// keep the defaults, and settings of the daemon's own (paths, sockets) are ignored here.
    ///
    /// - Throws: ``TestKitError/invalidArgument(_:)`` naming the setting that is wrong, as `offstaged --config` refuses it.
    public convenience init(
        configuration: String, startingAt date: Date = Date(timeIntervalSince1970: 1_767_600_000),
        timeZone: TimeZone = TimeZone(identifier: "UTC")!
    ) async throws {
        let core: CoreConfiguration
        do {
            core = try JSONDecoder().decode(CoreConfiguration.self, from: Data(configuration.utf8))
        } catch {
            throw TestKitError.invalidArgument("configuration: \(error)")
        }
        await self.init(startingAt: date, timeZone: timeZone, core: core)
    }

    isolated deinit {
        if host.with({ $0.current != nil }) { InProcessApp.end() }
        host.closeHandedOff()
        try? FileManager.default.removeItem(at: folder)
        MainSerialExecution.end()
        DeviceTurn.shared.give()
    }

    // MARK: Time

    /// The virtual now.
    public var now: Date { Date(timeIntervalSince1970: host.nowSeconds) }

    /// Moves virtual time forward by `duration`: everything due meanwhile happens at its instant, and the app
    /// answers each callback before time moves on.
    ///
    /// - Throws: ``TestKitError/timeGoesForwardOnly(_:)`` for a negative duration (nothing happens), and what
    ///   ``runUntilIdle()`` throws.
    public func advance(by duration: Duration) async throws {
        guard duration >= .zero else { throw TestKitError.timeGoesForwardOnly(duration) }
        try await runUntilIdle()
        let end = host.with { $0.simulation.now } + duration
        while host.with({ $0.simulation.step(until: end) }) { try await runUntilIdle() }
        host.with { $0.simulation.run(until: end) }
    }

    /// Moves virtual time forward to `date`. See ``advance(by:)``.
    public func advance(to date: Date) async throws {
        let seconds = date.timeIntervalSince(now)
        guard seconds >= 0 else { throw TestKitError.timeGoesForwardOnly(.seconds(seconds)) }
        try await advance(by: .seconds(seconds))
    }

    /// Moves virtual time to the next thing due (a scheduled run, a deadline, a notification …) and lets it happen;
    /// returns when that was, or nil (and nothing moves) when nothing is due within `limit`.
    @discardableResult
    public func advanceToNextEvent(within limit: Duration = .seconds(366 * 86_400)) async throws -> Date? {
        try await runUntilIdle()
        let end = host.with { $0.simulation.now } + limit
        guard host.with({ $0.simulation.step(until: end) }) else { return nil }
        try await runUntilIdle()
        return now
    }

    /// Lets everything due now happen, without moving time: callbacks are handed to the app and answered, and work
    /// the app queued on the main actor runs.
    ///
    /// - Throws: ``TestKitError/handlerDidNotReturn(callback:after:)`` when the app does not answer a callback within
    ///   ``handlerTimeout``; what handing a callback to the SDK threw.
    public func runUntilIdle() async throws {
        var quiet = 0
        var waitingSince: ContinuousClock.Instant?
        var calls = host.with { $0.calls }
        for _ in 0..<Self.idleRounds {
            let events = host.with { $0.simulation.takeExternalEvents() }
            if !events.isEmpty {
                quiet = 0
                for event in events { try handle(event) }
                continue
            }
            // Bytes or a hang-up on a descriptor the app handed off, an accessory's path that appeared or went: watched
            // as the daemon watches them.
            if host.watchHandedOff() || host.watchAccessories() {
                quiet = 0
                continue
            }
            // What the app's calls made due now (a notification with no trigger) happens now, not when time next moves.
            if host.with({ $0.simulation.step(until: $0.simulation.now) }) {
                quiet = 0
                continue
            }
            // Work the app queued (a Task it started in a handler) runs on the main actor between callbacks.
            await Task.yield()
            let (awaited, callsNow) = host.with { ($0.awaited, $0.calls) }
            let unanswered = awaited + InProcessApp.workInFlight
            if unanswered.isEmpty {
                waitingSince = nil
                // Idle once a few rounds in a row brought neither an event nor a call of the app's.
                quiet = callsNow == calls ? quiet + 1 : 0
                calls = callsNow
                if quiet >= 4 { return }
                continue
            }
            quiet = 0
            let start = waitingSince ?? .now
            waitingSince = start
            if ContinuousClock.now - start > handlerTimeout {
                throw TestKitError.handlerDidNotReturn(callback: unanswered.joined(separator: ", "), after: handlerTimeout)
            }
            // An async handler (a notification delegate's, a task of the app's) runs on another executor.
            try await Task.sleep(for: .milliseconds(1))
        }
        throw TestKitError.neverIdle(rounds: Self.idleRounds)
    }

    /// How many rounds ``runUntilIdle()`` gives the app to fall quiet.
    static let idleRounds = 10_000

    // MARK: The user

    /// The user opens `app` (launching it if it is not running).
    public func open(_ app: TestApp) async throws {
        try await user { simulation throws(CoreError) in try simulation.open(app.appID) }
    }

    /// The user goes to the home screen.
    public func home() async throws { try await user { $0.home() } }

    /// The user locks the screen.
    public func lock() async throws { try await user { $0.lock() } }

    /// The user unlocks the screen: back to the app that was in front, or to the home screen.
    public func unlock(returningToApp: Bool = true) async throws {
        try await user { $0.unlock(returningToApp: returningToApp) }
    }

    /// An interruption (an incoming call, an alarm) covers the app in front: it resigns active.
    /// ``endInterruption(accepted:)`` ends it.
    public func interrupt() async throws {
        try await user { simulation throws(CoreError) in try simulation.interrupt(nil) }
    }

    /// The interruption ends: dismissed, the app becomes active again; accepted (the call was taken), the app goes to
    /// the background.
    ///
    /// - Throws: ``TestKitError/invalidArgument(_:)`` when no interruption is in progress (nothing changes).
    public func endInterruption(accepted: Bool = false) async throws {
        guard host.with({ $0.simulation.core.device.interruption != nil }) else {
            throw TestKitError.invalidArgument("no interruption is in progress: begin one with interrupt() first")
        }
        try await user { simulation throws(CoreError) in try simulation.interrupt(accepted ? .accept : .dismiss) }
    }

    /// The user force-quits `app` from the app switcher.
    public func forceQuit(_ app: TestApp) async throws {
        try await user { simulation throws(CoreError) in try simulation.forceQuit(app.appID) }
    }

    /// Does what the user did, then lets what it set off happen.
    func user(_ action: (inout Simulation) throws(CoreError) -> Void) async throws {
        try host.with { state in try refusing { try action(&state.simulation) } }
        try await runUntilIdle()
    }

    // MARK: Observing

    /// Lines the kit wants the test's author to read: calls of the app's it does not answer yet, callbacks that
    /// reached a process no longer running.
    public var warnings: [String] { host.with { $0.warnings } }

    /// The system's event log, oldest first, one line each (`com.example.app: task 3 'save' began`).
    public var log: [String] {
        host.with { $0.simulation.log.map { "\($0.app.map { "\($0.rawValue): " } ?? "")\($0.message)" } }
    }

    // MARK: The app's process

    /// Carries out what the core did to the app's process.
    private func handle(_ event: Simulation.ExternalEvent) throws {
        switch event {
        case .launched(let id, let pid, let reason):
            guard let app, app.appID == id, let makeDelegate else { return }
            let data = app.dataDirectory
            try? FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
            let multitasking = host.with { state in
                state.current = (id, pid)
                state.unanswered = [:]
                return state.simulation.core.device.settings.multitaskingSupported
            }
            let (host, environment) = (host, environment(of: id, data: data, reason: reason.rawValue))
            InProcessApp.start(
                daemon: host,
                app: AppInterface.AppInfo(
                    id: id.rawValue, pid: pid, multitaskingSupported: multitasking, dataDirectory: data.path),
                bundle: bundle, now: { host.nowSeconds }, delegate: { makeDelegate(environment) })
            app.launched(Offstage.LaunchReason(rawValue: reason.rawValue) ?? .user)
            try host.with { state in try refusing { try state.simulation.externalAttached(pid) } }
        case .callback(_, let pid, let callback):
            guard host.with({ $0.current?.pid == pid }), let app else {
                host.with { $0.warnings.append("callback \(callback.kind.name) for a process no longer running dropped") }
                return
            }
            app.received(AppCallback(callback))
            host.with { $0.unanswered[callback.id.rawValue] = callback.kind.name }
            let message = try VarlinkCodec.encodeReply(
                AppInterface.AttachReply(callback: AppInterface.CallbackMessage(callback)), continues: true)
            try InProcessApp.deliver(message)
        case .exited(_, let pid, let status):
            let wasCurrent = host.with { state in
                guard state.current?.pid == pid else { return false }
                state.current = nil
                state.unanswered = [:]
                return true
            }
            if wasCurrent { InProcessApp.end() }
            app?.exited(status.description)
        case .transferHandedOver(let task, let body):
            host.handOver(task, body: body)
        case .transferRemoved(let task):
            host.removeFiles(of: task)
        }
    }

    /// The variables the daemon gives a process of app `id` it launches for `reason`: the manifest's
    /// `OffstageLinux.Environment`, then the app's identity and folders (no socket: calls reach the kit in-process).
    private func environment(of id: AppID, data: URL, reason: String) -> [String: String] {
        var environment = host.with { $0.simulation.core.apps[id]?.app.manifest.linux.environment } ?? [:]
        environment["OFFSTAGE_APP_ID"] = id.rawValue
        environment["OFFSTAGE_LAUNCH_REASON"] = reason
        environment["OFFSTAGE_DATA_DIR"] = data.path
        environment["OFFSTAGE_BUNDLE_DIR"] = bundle.path
        return environment
    }

    /// Installs the app under test; `delegate` makes the delegate of each process the system starts, from the
    /// process's environment.
    func install(
        _ manifest: Manifest, bundle: URL?,
        delegate: @escaping @MainActor (_ environment: [String: String]) -> any ApplicationDelegate
    ) throws -> TestApp {
        if let app, app.appID != manifest.id {
            throw TestKitError.invalidArgument(
                "'\(manifest.id)': the device already runs '\(app.id)'; the SDK is one per process, so a test device "
                    + "runs one app's code (use a device per app)")
        }
        let bundle = bundle ?? folder.appendingPathComponent("bundle", isDirectory: true)
        try host.with { state in try refusing { try state.simulation.installExternal(manifest, bundlePath: bundle.path) } }
        makeDelegate = delegate
        self.bundle = bundle
        let installed = app ?? TestApp(id: manifest.id, device: self)
        app = installed
        return installed
    }
}
