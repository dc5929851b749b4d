import OffstageCore
import OffstageSimulator
import Testing

/// A VoIP app: registers a keep-alive handler and hands off its signalling socket as it launches.
private let phone = AppBehavior().on("didFinishLaunching", .setKeepAlive(seconds: 600), .handOffSocket)

/// Apps A and B with the `voip` mode (or the modes given) and the behaviours given.
private func voipSimulation(
    a: AppBehavior = phone, aModes: Set<BackgroundMode> = [.voip], b: AppBehavior = .init(),
    bModes: Set<BackgroundMode> = [], configuration: CoreConfiguration = .init()
) -> Simulation {
    var simulation = Simulation(configuration: configuration)
    simulation.install(manifest(appA, modes: aModes), behavior: a)
    simulation.install(manifest(appB, modes: bModes), behavior: b)
    return simulation
}

extension Simulation {
    /// Opens the app, lets it launch, goes home and lets it be suspended.
    mutating func openThenSuspend(_ id: AppID) throws {
        try openAndSettle(id)
        home()
        run(for: .seconds(2))
    }

    /// The times, from `start`, of the app's callbacks named `name`.
    func times(of name: String, for id: AppID, from start: Instant) -> [Double] {
        trace(of: id).filter { $0.event == .callback(name) && $0.at >= start }.map { ($0.at - start).inSeconds }
    }
}

@Suite("VoIP apps (SPEC MODE-2)")
struct VoIPModeTests {
    @Test("MODE-2: the keep-alive handler runs in the background before each timeout, and the app is suspended again")
    func keepAliveRunsBeforeEachTimeout() throws {
        var sim = voipSimulation()
        try sim.openThenSuspend(appA)
        sim.lock()
        #expect(sim.state(of: appA) == .suspended)
        let registered = try #require(sim.core.modes.voip.keepAlives[appA]).expiresAt - .seconds(600)
        sim.run(for: .seconds(1_300))
        // At the latest start, 30 s (the handler's time) before each timeout; the next timeout counts from the run.
        let runs = sim.times(of: "keepAlive", for: appA, from: registered)
        #expect(runs.count == 2)
        #expect(approximately(runs.first, 570, within: 0.01) && approximately(runs.last, 1_140, within: 0.01), "\(runs)")
        #expect(sim.state(of: appA) == .suspended)
        #expect(sim.log.contains { $0.kind == .wakeup && $0.message.contains("keep-alive handler of \(appA)") })
    }

    @Test("MODE-2: a timeout under 600 s, or a keep-alive without the `voip` mode, is refused and changes nothing")
    func badKeepAlives() throws {
        var sim = voipSimulation(a: AppBehavior().on("didFinishLaunching", .setKeepAlive(seconds: 599)))
        try sim.openAndSettle(appA)
        #expect(sim.errors.map(\.code) == [.invalidArgument])
        #expect(sim.errors.first?.fix.contains("at least 600 s") == true)
        #expect(sim.core.modes.voip.keepAlives.isEmpty)

        var undeclared = voipSimulation(aModes: [])
        try undeclared.openAndSettle(appA)
        #expect(undeclared.errors.map(\.code) == [.notPermitted, .notPermitted], "keep-alive and socket both refused")
        #expect(undeclared.errors.allSatisfy { $0.fix.contains("add 'voip' to UIBackgroundModes") })
        #expect(undeclared.core.modes.voip.keepAlives.isEmpty && undeclared.sockets.isEmpty)
    }

    @Test(
        "MODE-2, §11: a keep-alive timeout that is huge, negative, NaN or a date is refused by name; nothing changes",
        arguments: [1e308, -1e308, 253_402_300_800, .nan, .infinity, -.infinity, 3.2e9])
    func outOfRangeKeepAlives(seconds: Double) throws {
        var sim = voipSimulation(a: AppBehavior().on("didFinishLaunching", .setKeepAlive(seconds: seconds)))
        try sim.openAndSettle(appA)
        let error = try #require(sim.errors.first)
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains("seconds is") || error.message.contains("too short"), "\(error)")
        #expect(error.fix.contains("600"), "the fix names the range: \(error.fix)")
        #expect(sim.core.modes.voip.keepAlives.isEmpty)
        #expect(sim.state(of: appA) == .active, "the app goes on")
    }

    @Test("MODE-2: the longest keep-alive timeout, a century, is accepted and its deadline is a real instant")
    func longestKeepAlive() throws {
        var sim = voipSimulation(a: AppBehavior().on("didFinishLaunching", .setKeepAlive(seconds: CheckedNumber.longestDuration)))
        try sim.openAndSettle(appA)
        #expect(sim.errors.isEmpty)
        let keepAlive = try #require(sim.core.modes.voip.keepAlives[appA])
        #expect(keepAlive.interval == .seconds(double: CheckedNumber.longestDuration))
        #expect(keepAlive.expiresAt > sim.now + .seconds(99 * 365 * 86_400))
    }

    @Test("MODE-2, SCH-7: a keep-alive whose window is open joins another app's wake-up instead of waking the device again")
    func keepAlivesShareWakeUps() throws {
        let late = AppBehavior().on("didFinishLaunching", .setKeepAlive(seconds: 600))
        var sim = voipSimulation(b: late, bModes: [.voip])
        try sim.openThenSuspend(appA)
        sim.run(for: .seconds(60))
        try sim.openThenSuspend(appB)
        sim.lock()
        let start = sim.now
        sim.run(for: .seconds(700))
        let a = sim.times(of: "keepAlive", for: appA, from: start)
        let b = sim.times(of: "keepAlive", for: appB, from: start)
        #expect(a.count == 1 && b.count == 1)
        #expect(a == b, "B's handler, due 62 s later, ran in A's wake-up")
        #expect(sim.log.filter { $0.kind == .wakeup && $0.at >= start }.count == 1)
    }

    @Test("MODE-2: a keep-alive handler that hangs is terminated after 30 s, with the reason recorded")
    func hangingKeepAliveIsTerminated() throws {
        var sim = voipSimulation(a: phone.on("keepAlive", .hang))
        try sim.openThenSuspend(appA)
        let started = try #require(sim.core.modes.voip.keepAlives[appA]).expiresAt - .seconds(30)
        sim.run(for: .seconds(700))
        let killed = try #require(sim.firstTime(of: .sigterm, for: appA))
        #expect(approximately((killed - started).inSeconds, 30, within: 0.01))
        #expect(sim.status(of: appA)?.lastTermination?.summary.contains("keep-alive") == true)
    }

    @Test("MODE-2: data on the handed-off socket wakes the suspended app, which has 10 s to handle it")
    func socketDataWakesTheApp() throws {
        var sim = voipSimulation()
        try sim.openAndSettle(appA)
        #expect(sim.sockets.values.map(\.armed) == [false], "not watched while the app runs")
        sim.socketData(for: appA)
        #expect(!sim.callbacks(of: appA).contains("voipSocket"), "a running app reads its socket itself")
        sim.home()
        sim.run(for: .seconds(2))
        #expect(sim.state(of: appA) == .suspended)
        #expect(sim.sockets.values.map(\.armed) == [true], "watched while suspended")
        let arrived = sim.now
        sim.socketData(for: appA)
        #expect(sim.sockets.values.map(\.armed) == [false])
        sim.run(for: .seconds(5))
        #expect(sim.events(of: appA, since: arrived) == [.thawed, .callback("voipSocket")])
        #expect(sim.status(of: appA)?.activeModes == [.voip])
        sim.run(for: .seconds(7))
        #expect(sim.state(of: appA) == .suspended)
        let frozen = try #require(sim.trace(of: appA).last { $0.event == .frozen }?.at)
        #expect(approximately((frozen - arrived).inSeconds, 11, within: 0.01), "10 s to handle it, then the suspend delay")
        #expect(sim.sockets.values.map(\.armed) == [true])
    }

    @Test("MODE-2: the peer hanging up wakes the app too, and the socket is closed")
    func peerHangUp() throws {
        var sim = voipSimulation()
        try sim.openThenSuspend(appA)
        sim.socketData(for: appA, closed: true)
        sim.run(for: .seconds(1))
        #expect(sim.trace(of: appA).contains { $0.event == .callback("voipSocket") })
        #expect(sim.sockets.isEmpty && sim.core.modes.voip.sockets.isEmpty)
    }

    @Test("MODE-2, LC-9: a VoIP app that exits abnormally is launched again, throttled; force-quit is not")
    func relaunchAfterCrash() throws {
        var sim = voipSimulation(a: phone.on("keepAlive", .exit(code: 3, after: .milliseconds(10))))
        try sim.openThenSuspend(appA)
        sim.run(for: .seconds(600))
        let relaunches = sim.trace(of: appA).filter { $0.event == .launched(.voip) }
        #expect(relaunches.count == 1)
        let exited = try #require(sim.trace(of: appA).first { if case .exited = $0.event { true } else { false } }?.at)
        #expect(approximately(relaunches.first.map { ($0.at - exited).inSeconds }, 1, within: 0.01), "the first crash-loop delay")

        try sim.forceQuit(appA)
        sim.run(for: .seconds(60))
        #expect(sim.state(of: appA) == .notRunning)
        #expect(sim.trace(of: appA).filter { $0.event == .launched(.voip) }.count == 1)
    }

    @Test("MODE-2: at boot every VoIP app is launched into the background, except one the user force-quit")
    func launchedAtBoot() throws {
        var sim = voipSimulation(b: phone, bModes: [.voip])
        try sim.openAndSettle(appB)
        try sim.forceQuit(appB)
        sim.run(for: .seconds(1))
        sim.boot()
        sim.run(for: .seconds(2))
        #expect(sim.trace(of: appA).map(\.event).prefix(2) == [.launched(.boot), .callback("didFinishLaunching")])
        #expect(!sim.callbacks(of: appA).contains("didBecomeActive"))
        #expect(sim.state(of: appA) == .suspended)
        #expect(sim.state(of: appB) == .notRunning)
        #expect(!sim.trace(of: appB).contains { $0.event == .launched(.boot) })
    }

    @Test("LC-7, MODE-2: with multitasking off, a VoIP app is neither launched at boot nor relaunched after a crash")
    func noBackgroundLaunchWithoutMultitasking() throws {
        var settings = DeviceSettings()
        settings.multitaskingSupported = false
        var sim = voipSimulation(a: phone.on("didBecomeActive", .exit(code: 3, after: .milliseconds(10))))
        sim.setDeviceSettings(settings)
        sim.boot()
        sim.run(for: .seconds(1))
        #expect(sim.state(of: appA) == .notRunning)
        try sim.openAndSettle(appA)
        sim.run(for: .seconds(60))
        #expect(!sim.trace(of: appA).contains { $0.event == .launched(.voip) || $0.event == .launched(.boot) })
    }
}
