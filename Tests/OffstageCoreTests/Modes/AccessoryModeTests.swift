import OffstageCore
import OffstageSimulator
import Testing

/// Accessory apps (SPEC MODE-4): what an app may register, and how a suspended app is woken when its accessory
/// connects, disconnects or sends data. Launching, restarts and the debug verb are in AccessoryLaunchTests.swift.
@Suite("Accessories (SPEC MODE-4)")
struct AccessoryModeTests {
    @Test("MODE-6: registering an accessory whose mode is not declared is refused (NotPermitted); nothing changes")
    func undeclaredModeIsRefused() throws {
        let registers = AppBehavior().on(
            "didFinishLaunching", .registerAccessory(name: "scanner", path: scannerPath, mode: .externalAccessory))
        // Declaring another accessory mode does not do: the registration names its own.
        var sim = accessorySimulation(a: registers, aModes: [.bluetoothCentral])
        try sim.openAndSettle(appA)
        #expect(sim.errors.map(\.code) == [.notPermitted])
        #expect(sim.errors.first?.fix.contains("add 'external-accessory' to UIBackgroundModes") == true)
        #expect(sim.accessoryWatches.isEmpty && sim.core.modes.accessories.links.isEmpty)
        #expect(sim.core.durableState(of: appA)?.accessories == [])
        // The same request by hand: no watch, no save, the core as it was.
        let before = sim.core.modes
        var core = sim.core
        let registration = AccessoryRegistration(name: "scanner", path: scannerPath, mode: .externalAccessory)
        #expect(throws: CoreError.self) {
            try core.registerAccessory(appA, pid: sim.pid(of: appA), registration, present: true, at: sim.now)
        }
        #expect(core.modes == before && core.durableState(of: appA) == sim.core.durableState(of: appA))
        #expect(sim.logLines(of: appA, .warning).contains { $0.contains("accessory registration refused") })
    }

    @Test("MODE-4: a bad name, path or mode is refused (InvalidArgument) with its fix; nothing changes")
    func badRegistrationsAreRefused() throws {
        var sim = accessorySimulation(a: AppBehavior(), aModes: [.externalAccessory, .audio])
        try sim.openAndSettle(appA)
        let bad: [(AccessoryRegistration, String)] = [
            (.init(name: "", path: scannerPath, mode: .externalAccessory), "letters, digits"),
            (.init(name: "bar code", path: scannerPath, mode: .externalAccessory), "letters, digits"),
            (.init(name: "a/b", path: scannerPath, mode: .externalAccessory), "letters, digits"),
            (.init(name: String(repeating: "n", count: 65), path: scannerPath, mode: .externalAccessory), "1 to 64"),
            (.init(name: "scanner", path: "dev/ttyACM0", mode: .externalAccessory), "absolute path"),
            (.init(name: "scanner", path: "/dev/../etc/passwd", mode: .externalAccessory), "without '..'"),
            (.init(name: "scanner", path: "/dev/tty\u{0}ACM0", mode: .externalAccessory), "absolute path"),
            (.init(name: "scanner", path: "/" + String(repeating: "p", count: 4_095), mode: .bluetoothCentral), "/dev"),
            // A declared mode that is not an accessory mode is still not one.
            (.init(name: "scanner", path: scannerPath, mode: .audio), "external-accessory, bluetooth-central"),
        ]
        for (registration, fix) in bad {
            let error = sim.register(appA, registration)
            #expect(error?.code == .invalidArgument, "\(registration)")
            #expect(error?.fix.contains(fix) == true, "\(error?.fix ?? "accepted")")
        }
        #expect(sim.accessoryWatches.isEmpty && sim.core.modes.accessories.links.isEmpty)
        #expect(sim.core.durableState(of: appA)?.accessories == [])
        // The longest name and a stable udev link are fine.
        let good = AccessoryRegistration(
            name: String(repeating: "n", count: 64), path: "/dev/serial/by-id/usb-Acme_Scanner_01-if00",
            mode: .externalAccessory)
        #expect(throws: Never.self) { try good.validated() }
    }

    @Test("MODE-4: an app registers at most maximumAccessoriesPerApp accessories; replacing one still works")
    func perAppLimit() throws {
        var configuration = CoreConfiguration()
        configuration.maximumAccessoriesPerApp = 2
        var sim = accessorySimulation(a: AppBehavior(), configuration: configuration)
        try sim.openAndSettle(appA)
        for name in ["one", "two"] {
            #expect(sim.register(appA, .init(name: name, path: "/dev/\(name)", mode: .externalAccessory)) == nil)
        }
        let third = sim.register(appA, .init(name: "three", path: "/dev/three", mode: .externalAccessory))
        #expect(third?.code == .invalidArgument)
        #expect(third?.message.contains("already registered 2 accessories") == true)
        #expect(sim.core.durableState(of: appA)?.accessories.map(\.name) == ["one", "two"])
        #expect(sim.watchedPath(appA, "three") == nil)
        // At the limit, a new path for a registered name is a replacement, not one more.
        #expect(sim.register(appA, .init(name: "two", path: "/dev/two-b", mode: .externalAccessory)) == nil)
        #expect(sim.watchedPath(appA, "two") == "/dev/two-b")
    }

    @Test("MODE-4: registering the same accessory again changes nothing; a new path replaces its watch and session")
    func reRegistering() throws {
        var sim = accessorySimulation()
        try sim.openAndSettle(appA)
        let token = try #require(sim.sessionToken(of: appA))
        let same = AccessoryRegistration(name: "scanner", path: scannerPath, mode: .externalAccessory)
        let pid = sim.pid(of: appA)
        let again = try sim.actions { core, now in
            try core.registerAccessory(appA, pid: pid, same, present: false, at: now)
        }
        #expect(again.accessoryShellActions.isEmpty && !again.saves(appA))
        #expect(sim.link(appA)?.session?.token == token, "the session is kept")

        let moved = AccessoryRegistration(name: "scanner", path: "/dev/ttyACM1", mode: .externalAccessory)
        let replaced = try sim.actions { core, now in
            try core.registerAccessory(appA, pid: pid, moved, present: false, at: now)
        }
        #expect(
            replaced.accessoryShellActions == [
                .closeSocket(appA, token: token), .unwatchAccessory(appA, name: "scanner"),
                .watchAccessory(appA, name: "scanner", path: "/dev/ttyACM1"),
            ])
        #expect(replaced.saves(appA))
        #expect(sim.watchedPath(appA, "scanner") == "/dev/ttyACM1" && sim.sockets.isEmpty)
        #expect(sim.core.durableState(of: appA)?.accessories == [moved])
    }

    @Test("MODE-4: a suspended app is thawed and told when its accessory connects, sends data and disconnects")
    func eventsWakeTheSuspendedApp() throws {
        var sim = accessorySimulation()
        try sim.openAndSettle(appA)
        #expect(sim.sockets.values.map(\.armed) == [false], "a running app reads its session itself")
        sim.accessorySendsData(at: scannerPath)
        #expect(!sim.callbacks(of: appA).contains("accessory"))
        sim.home()
        sim.run(for: .seconds(2))
        #expect(sim.state(of: appA) == .suspended)
        #expect(sim.sockets.values.map(\.armed) == [true], "watched while suspended")

        for (event, act) in [
            (AccessoryEvent.connected, { (sim: inout Simulation) in sim.plugAccessory(at: scannerPath) }),
            (.data, { (sim: inout Simulation) in sim.accessorySendsData(at: scannerPath) }),
            (.disconnected, { (sim: inout Simulation) in sim.unplugAccessory(at: scannerPath) }),
        ] {
            let arrived = sim.now
            act(&sim)
            // Told at once, in the same input that thawed it.
            let told = sim.core.apps[appA]?.process?.inFlight?.kind
            #expect(told == .accessory(name: "scanner", event: event), "\(event): \(String(describing: told))")
            sim.run(for: .seconds(5))
            #expect(sim.events(of: appA, since: arrived) == [.thawed, .callback("accessory")], "\(event)")
            #expect(sim.state(of: appA) == .background, "\(event): still handling it")
            sim.run(for: .seconds(7))
            #expect(sim.state(of: appA) == .suspended, "\(event)")
            let frozen = try #require(sim.trace(of: appA).last { $0.event == .frozen }?.at)
            #expect(
                approximately((frozen - arrived).inSeconds, 11, within: 0.01), "10 s to handle it, then suspend delay")
        }
        #expect(sim.link(appA)?.session == nil && sim.sockets.isEmpty, "the session closed with the accessory")
        #expect(sim.link(appA)?.connected == false)
    }

    @Test("MODE-4, BT-2: a background task begun while handling the event keeps the app running past the 10 s")
    func backgroundTaskBuysMoreTime() throws {
        var sim = accessorySimulation(a: scannerApp.on("accessory", .beginTask(name: "upload", endAfter: .seconds(25))))
        try sim.openThenSuspend(appA)
        // Long after the budget of its last trip to the background ended: the wake-up gives a fresh one.
        sim.run(for: .seconds(600))
        let arrived = sim.now
        sim.plugAccessory(at: scannerPath)
        let began = sim.trace(of: appA).last.map { if case .taskBegan("upload", _) = $0.event { true } else { false } }
        #expect(began == true, "the task was granted")
        sim.run(for: .seconds(15))
        #expect(sim.state(of: appA) == .background, "the task runs on after the 10 s")
        sim.run(for: .seconds(15))
        #expect(sim.state(of: appA) == .suspended)
        let frozen = try #require(sim.trace(of: appA).last { $0.event == .frozen }?.at)
        #expect(
            approximately((frozen - arrived).inSeconds, 26, within: 0.05), "the task's 25 s, then the suspend delay")
    }

    @Test("LC-4: `offstage apps` shows the accessory hold while the app handles an event, and nothing after")
    func holdWhileHandling() throws {
        var sim = accessorySimulation()
        try sim.openThenSuspend(appA)
        #expect(sim.core.modeHolds(of: appA, at: sim.now).isEmpty)
        sim.plugAccessory(at: scannerPath)
        sim.run(for: .seconds(1))
        let holds = sim.core.modeHolds(of: appA, at: sim.now)
        #expect(holds.map(\.mode) == [.externalAccessory] && holds.map(\.verdict) == [.holds])
        #expect(holds.first?.reason.contains("handling accessory 'scanner' (connected) until") == true)
        #expect(sim.status(of: appA)?.activeModes == [.externalAccessory])
        sim.run(for: .seconds(11))
        #expect(sim.state(of: appA) == .suspended)
        #expect(sim.core.modeHolds(of: appA, at: sim.now).isEmpty && sim.status(of: appA)?.activeModes == [])
        #expect(sim.core.modes.accessories.handling[appA] == nil, "the window is dropped once it ended")
    }

    @Test("SET-2: with background activity off a suspended app is not thawed; it hears the event when it next runs")
    func backgroundActivityOffWhileSuspended() throws {
        var sim = accessorySimulation()
        try sim.openThenSuspend(appA)
        var settings = AppSettings()
        settings.backgroundActivity = false
        try sim.setAppSettings(settings, for: appA)
        let arrived = sim.now
        sim.plugAccessory(at: scannerPath)
        sim.accessorySendsData(at: scannerPath)
        sim.run(for: .seconds(30))
        #expect(sim.events(of: appA, since: arrived).isEmpty, "nothing of the app ran")
        #expect(sim.state(of: appA) == .suspended && sim.core.modes.accessories.handling[appA] == nil)
        #expect(sim.sockets.values.map(\.armed) == [false], "the one-shot watch fired; the app reads the rest itself")
        let opened = sim.now
        try sim.openAndSettle(appA)
        #expect(sim.events(of: appA, since: opened).filter { $0 == .callback("accessory") }.count == 2)
    }

    @Test("LC-4: while the app cannot run, a flapping accessory leaves only its latest state and one data callback")
    func flappingAccessoryCoalesces() throws {
        var sim = accessorySimulation()
        try sim.openThenSuspend(appA)
        var settings = AppSettings()
        settings.backgroundActivity = false
        try sim.setAppSettings(settings, for: appA)
        for _ in 0..<50 {
            sim.plugAccessory(at: scannerPath)
            sim.unplugAccessory(at: scannerPath)
        }
        sim.plugAccessory(at: scannerPath)
        for _ in 0..<3 {
            _ = try sim.actions { core, now in try core.simulateAccessoryEvent(appA, name: "scanner", .data, at: now) }
        }
        let queued = try #require(sim.core.apps[appA]?.process?.queue).filter {
            if case .accessory = $0 { true } else { false }
        }
        #expect(queued == [.accessory(name: "scanner", event: .connected), .accessory(name: "scanner", event: .data)])
        let opened = sim.now
        try sim.openAndSettle(appA)
        #expect(sim.events(of: appA, since: opened).filter { $0 == .callback("accessory") }.count == 2)
    }

    @Test("MODE-4: the accessory hanging up on its session is a disconnection: the app is woken, the session closed")
    func hangUpIsADisconnection() throws {
        var sim = accessorySimulation()
        sim.plugAccessory(at: scannerPath)
        try sim.openThenSuspend(appA)
        let token = try #require(sim.sessionToken(of: appA))
        let before = sim.callbacks(of: appA).count
        let actions = sim.actions { core, now in core.socketEvent(appA, token: token, closed: true, at: now) }
        #expect(actions.accessoryShellActions == [.closeSocket(appA, token: token)])
        #expect(sim.core.apps[appA]?.process?.inFlight?.kind == .accessory(name: "scanner", event: .disconnected))
        #expect(sim.link(appA)?.session == nil && sim.link(appA)?.connected == false && sim.sockets.isEmpty)
        // The path going away afterwards is the same disconnection, not a second one.
        sim.run(for: .seconds(1))
        sim.unplugAccessory(at: scannerPath)
        sim.run(for: .seconds(1))
        #expect(sim.callbacks(of: appA).count == before + 1, "only the hang-up's callback ran")
    }

    @Test("MODE-4: a late event for a replaced session, or for one not watched, is dropped")
    func lateSessionEventsAreDropped() throws {
        var sim = accessorySimulation()
        try sim.openAndSettle(appA)
        let old = try #require(sim.sessionToken(of: appA))
        // The app opens a new session (the shell's token 99): the old one is closed.
        let pid = sim.pid(of: appA)
        try sim.input { core, now in
            try core.accessorySessionHandedOff(appA, pid: pid, name: "scanner", token: 99, at: now)
        }
        #expect(sim.sockets.keys.sorted() == [99] && sim.sessionToken(of: appA) != old)
        // Running: the new session is not watched, so an event on it comes too late.
        let running = sim.actions { core, now in core.socketEvent(appA, token: 99, closed: false, at: now) }
        #expect(running.accessoryShellActions.isEmpty)
        sim.home()
        sim.run(for: .seconds(2))
        #expect(sim.state(of: appA) == .suspended && sim.sockets[99]?.armed == true)
        let start = sim.now
        sim.input { core, now in core.socketEvent(appA, token: old, closed: false, at: now) }
        sim.run(for: .seconds(1))
        #expect(sim.events(of: appA, since: start).isEmpty, "the replaced session woke nothing")
        // One event per watch: a second report before the core watches it again wakes nothing more.
        sim.input { core, now in core.socketEvent(appA, token: 99, closed: false, at: now) }
        sim.input { core, now in core.socketEvent(appA, token: 99, closed: false, at: now) }
        sim.run(for: .seconds(1))
        #expect(sim.events(of: appA, since: start) == [.thawed, .callback("accessory")])
    }
}
