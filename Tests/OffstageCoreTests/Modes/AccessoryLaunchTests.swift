import Foundation
import OffstageCore
import OffstageSimulator
import Testing

/// The accessory app, which exits as soon as it goes to the background, so that it is not running when its
/// accessory next does something.
private let quitter = scannerApp.on("didEnterBackground", .exit(code: 0, after: .milliseconds(10)))

/// An app with two accessories in two modes.
private let twoAccessories = AppBehavior().on(
    "didFinishLaunching", .registerAccessory(name: "scanner", path: scannerPath, mode: .externalAccessory),
    .registerAccessory(name: "heart-rate", path: "/dev/rfcomm0", mode: .bluetoothCentral))

extension Simulation {
    /// Opens the app and goes home; the app exits by itself (it is a ``quitter``).
    mutating func openThenQuit(_ id: AppID) throws {
        try openAndSettle(id)
        home()
        run(for: .seconds(2))
    }

    /// `offstage accessory event`: the error it gives, or nil when it is accepted.
    mutating func simulateAccessory(_ id: AppID, _ name: String, _ event: AccessoryEvent) -> CoreError? {
        do {
            try input { core, now in try core.simulateAccessoryEvent(id, name: name, event, at: now) }
            return nil
        } catch {
            return error as? CoreError
        }
    }

    /// The background launches of the app for its accessories.
    func accessoryLaunches(of id: AppID) -> Int { trace(of: id).filter { $0.event == .launched(.accessory) }.count }
}

/// Accessory apps that are not running (SPEC MODE-4, LC-6, SET-2, LC-9): launched when their accessory connects, and
/// only when the system may; registrations outlive the process and the daemon, and end with the app.
@Suite("Accessories: launches, restarts and the debug verb (SPEC MODE-4)")
struct AccessoryLaunchTests {
    @Test("MODE-4: a terminated app is launched into the background (reason accessory) when its accessory connects")
    func connectionLaunchesTheApp() throws {
        var sim = accessorySimulation(a: quitter)
        try sim.openThenQuit(appA)
        #expect(sim.state(of: appA) == .notRunning && sim.sockets.isEmpty, "the session ended with the process")
        #expect(sim.watchedPath(appA, "scanner") == scannerPath, "watched while the app does not run")
        let arrived = sim.now
        sim.plugAccessory(at: scannerPath)
        sim.run(for: .seconds(1))
        #expect(sim.events(of: appA, since: arrived).first == .launched(.accessory))
        #expect(sim.callbacks(of: appA).suffix(2) == ["didFinishLaunching", "accessory"], "told once launched")
        #expect(!sim.callbacks(of: appA).suffix(2).contains("didBecomeActive"))
        #expect(sim.status(of: appA)?.launchReason == .accessory)
        sim.run(for: .seconds(11))
        #expect(sim.state(of: appA) == .suspended)
        let frozen = try #require(sim.trace(of: appA).last { $0.event == .frozen }?.at)
        #expect(
            approximately((frozen - arrived).inSeconds, 11, within: 0.05), "10 s from the event, then suspend delay")
        #expect(sim.sockets.values.map(\.armed) == [true], "the relaunched app's new session is watched")
    }

    @Test("MODE-4: an accessory disconnecting, or data, launches nothing; the app is not running to hear it")
    func disconnectionLaunchesNothing() throws {
        var sim = accessorySimulation(a: quitter)
        sim.plugAccessory(at: scannerPath)
        try sim.openThenQuit(appA)
        let start = sim.now
        sim.unplugAccessory(at: scannerPath)
        #expect(sim.simulateAccessory(appA, "scanner", .data) == nil)
        sim.run(for: .seconds(5))
        #expect(sim.state(of: appA) == .notRunning && sim.events(of: appA, since: start).isEmpty)
        #expect(sim.accessoryLines(of: appA, since: start).contains("accessory 'scanner' disconnected"))
    }

    @Test("LC-6, SET-2, LC-7: no launch for a connection after a force-quit, with background activity off, or on exit")
    func noLaunchWhenNotAllowed() throws {
        var forceQuit = accessorySimulation()
        try forceQuit.openAndSettle(appA)
        try forceQuit.forceQuit(appA)
        forceQuit.run(for: .seconds(1))
        forceQuit.plugAccessory(at: scannerPath)
        forceQuit.run(for: .seconds(1))
        #expect(forceQuit.state(of: appA) == .notRunning && forceQuit.accessoryLaunches(of: appA) == 0)
        #expect(forceQuit.logLines(of: appA, .mode).contains { $0.contains("not launched: the user force-quit it") })

        var activityOff = accessorySimulation(a: quitter)
        try activityOff.openThenQuit(appA)
        var settings = AppSettings()
        settings.backgroundActivity = false
        try activityOff.setAppSettings(settings, for: appA)
        activityOff.plugAccessory(at: scannerPath)
        activityOff.run(for: .seconds(1))
        #expect(activityOff.state(of: appA) == .notRunning && activityOff.accessoryLaunches(of: appA) == 0)
        #expect(activityOff.logLines(of: appA, .mode).contains { $0.contains("background activity is off") })

        var exits = Simulation()
        exits.install(manifest(appA, modes: [.externalAccessory], exitsOnSuspend: true), behavior: scannerApp)
        try exits.openThenQuit(appA)
        exits.plugAccessory(at: scannerPath)
        exits.run(for: .seconds(1))
        #expect(exits.state(of: appA) == .notRunning && exits.accessoryLaunches(of: appA) == 0)
        #expect(exits.logLines(of: appA, .mode).contains { $0.contains("cannot run in the background") })
    }

    @Test("LC-9: an app that crashes when launched for its accessory is not launched again before its crash-loop delay")
    func crashLoopIsThrottled() throws {
        var sim = accessorySimulation(a: quitter.on("accessory", .exit(code: 3, after: .milliseconds(10))))
        try sim.openThenQuit(appA)
        sim.plugAccessory(at: scannerPath)
        sim.run(for: .milliseconds(200))
        #expect(sim.accessoryLaunches(of: appA) == 1 && sim.state(of: appA) == .notRunning)
        let notBefore = try #require(sim.core.durableState(of: appA)?.crashLoop.notBefore)
        sim.unplugAccessory(at: scannerPath)
        sim.plugAccessory(at: scannerPath)
        sim.run(for: .milliseconds(100))
        #expect(sim.accessoryLaunches(of: appA) == 1, "still within the crash-loop delay")
        #expect(sim.logLines(of: appA, .mode).contains { $0.contains("crashed in the background") })
        sim.run(until: notBefore + .seconds(1))
        sim.unplugAccessory(at: scannerPath)
        sim.plugAccessory(at: scannerPath)
        sim.run(for: .milliseconds(100))
        #expect(sim.accessoryLaunches(of: appA) == 2, "once the delay has passed")
    }

    @Test("MODE-4: registrations survive a daemon restart through the durable state and are watched again")
    func registrationsSurviveRestart() throws {
        var sim = accessorySimulation(a: twoAccessories, aModes: [.externalAccessory, .bluetoothCentral])
        try sim.openAndSettle(appA)
        let saved = try #require(sim.core.durableState(of: appA))
        #expect(saved.accessories.map(\.name) == ["heart-rate", "scanner"])
        let data = try JSONEncoder().encode(saved)
        #expect(try JSONDecoder().decode(AppDurableState.self, from: data) == saved, "round-trips through the store")
        // A store written before accessories existed reads as none registered.
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        object["accessories"] = nil
        let older = try JSONSerialization.data(withJSONObject: object)
        #expect(try JSONDecoder().decode(AppDurableState.self, from: older).accessories == [])

        // The restarted core knows the registrations but not the connections, and asks to watch each path again.
        var restarted = OffstageCore(configuration: sim.core.configuration)
        for (_, entry) in sim.core.apps.sorted(by: { $0.key < $1.key }) {
            restarted.restore(entry.app, durable: entry.durable)
        }
        #expect(restarted.modes.accessories.registrations(of: appA) == saved.accessories)
        let links = try #require(restarted.modes.accessories.links[appA]?.values)
        #expect(links.allSatisfy { $0.connected == nil && $0.session == nil })
        #expect(
            restarted.watchAccessories(at: sim.now).accessoryShellActions == [
                .watchAccessory(appA, name: "heart-rate", path: "/dev/rfcomm0"),
                .watchAccessory(appA, name: "scanner", path: scannerPath),
            ])

        // The same, through the simulated machine: after the restart a connection launches the app.
        sim.reboot()
        #expect(sim.state(of: appA) == .notRunning && sim.watchedPath(appA, "heart-rate") == "/dev/rfcomm0")
        sim.plugAccessory(at: "/dev/rfcomm0")
        sim.run(for: .seconds(1))
        #expect(sim.status(of: appA)?.launchReason == .accessory)
    }

    @Test("MODE-4: the first report of an accessory after a restart is no event: a connected one launches nothing")
    func firstPresenceAfterRestart() throws {
        var sim = accessorySimulation(a: quitter)
        sim.plugAccessory(at: scannerPath)
        try sim.openThenQuit(appA)
        let restart = sim.now
        sim.reboot()
        sim.run(for: .seconds(1))
        #expect(sim.watchedPath(appA, "scanner") == scannerPath && sim.link(appA)?.connected == true)
        #expect(sim.state(of: appA) == .notRunning && sim.events(of: appA, since: restart).isEmpty)
        #expect(sim.accessoryLines(of: appA, since: restart) == ["accessory 'scanner' is connected"])
        // From then on a change is an event.
        sim.unplugAccessory(at: scannerPath)
        sim.plugAccessory(at: scannerPath)
        sim.run(for: .seconds(1))
        #expect(sim.accessoryLaunches(of: appA) == 1 && sim.status(of: appA)?.launchReason == .accessory)
    }

    @Test("MODE-6, MAN-3: an upgrade that no longer declares an accessory's mode ends its registration; no launch")
    func upgradeDroppingTheMode() throws {
        var sim = accessorySimulation(a: twoAccessories, aModes: [.externalAccessory, .bluetoothCentral])
        try sim.openAndSettle(appA)
        sim.install(manifest(appA, modes: [.bluetoothCentral]), behavior: AppBehavior())
        sim.run(for: .seconds(5))
        #expect(sim.state(of: appA) == .notRunning, "the old version ended")
        #expect(sim.core.durableState(of: appA)?.accessories.map(\.name) == ["heart-rate"])
        #expect(sim.watchedPath(appA, "scanner") == nil && sim.watchedPath(appA, "heart-rate") == "/dev/rfcomm0")
        #expect(sim.logLines(of: appA, .mode).contains { $0.contains("'external-accessory'") })
        sim.plugAccessory(at: scannerPath)
        sim.run(for: .seconds(1))
        #expect(sim.accessoryLaunches(of: appA) == 0, "the scanner gives the new version no background time")
        // A store written before the upgrade dropped it is read back without it, and without trapping on a name
        // that appears twice.
        var durable = try #require(sim.core.durableState(of: appA))
        let scanner = AccessoryRegistration(name: "scanner", path: scannerPath, mode: .externalAccessory)
        durable.accessories += [scanner, scanner]
        var restarted = OffstageCore(configuration: sim.core.configuration)
        restarted.restore(try #require(sim.core.apps[appA]?.app), durable: durable)
        #expect(restarted.modes.accessories.registrations(of: appA).map(\.name) == ["heart-rate"])
        #expect(restarted.durableState(of: appA)?.accessories.map(\.name) == ["heart-rate"])
    }

    @Test("MAN-3: uninstalling an app stops watching each of its accessories")
    func uninstallUnwatches() throws {
        var running = accessorySimulation(
            a: twoAccessories.on("didFinishLaunching", .openAccessorySession(name: "scanner")),
            aModes: [.externalAccessory, .bluetoothCentral])
        try running.openThenSuspend(appA)
        try running.uninstall(appA)
        running.run(for: .seconds(5))
        #expect(running.core.apps[appA] == nil && running.core.modes.accessories.links.isEmpty)
        #expect(running.accessoryWatches.isEmpty && running.sockets.isEmpty)

        var stopped = accessorySimulation(
            a: twoAccessories.on("didEnterBackground", .exit(code: 0, after: .milliseconds(10))),
            aModes: [.externalAccessory, .bluetoothCentral])
        try stopped.openThenQuit(appA)
        let actions = try stopped.actions { core, now in try core.uninstall(appA, at: now) }
        #expect(
            actions.accessoryShellActions == [
                .unwatchAccessory(appA, name: "heart-rate"), .unwatchAccessory(appA, name: "scanner"),
            ])
        stopped.plugAccessory(at: scannerPath)
        stopped.run(for: .seconds(1))
        #expect(stopped.accessoryLaunches(of: appA) == 0 && stopped.accessoryWatches.isEmpty)
    }

    @Test("MODE-4: `offstage accessory event` acts as the accessory would, and names an unknown app or accessory")
    func simulatedEvents() throws {
        var sim = accessorySimulation()
        try sim.openThenSuspend(appA)
        let noApp = sim.simulateAccessory("com.example.nope", "scanner", .connected)
        #expect(noApp?.code == .appNotInstalled && noApp?.message.contains("com.example.nope") == true)
        let noName = sim.simulateAccessory(appA, "printer", .connected)
        #expect(noName?.code == .invalidArgument)
        #expect(noName?.message == "'com.example.a' has registered no accessory 'printer'")
        #expect(noName?.fix.contains("register it first") == true)
        let unregistered = sim.simulateAccessory(appB, "scanner", .data)
        #expect(unregistered?.code == .invalidArgument)

        // Data: the watched session stops being watched, as a real event would have made it, and the app is woken.
        let start = sim.now
        #expect(sim.simulateAccessory(appA, "scanner", .data) == nil)
        #expect(sim.sockets.values.map(\.armed) == [false])
        sim.run(for: .seconds(1))
        #expect(sim.events(of: appA, since: start) == [.thawed, .callback("accessory")])
        #expect(sim.accessoryLines(of: appA, since: start).first == "accessory 'scanner' data simulated (forced)")
        // A connection of an app that does not run launches it.
        sim.setBehavior(quitter, for: appA)
        try sim.openThenQuit(appA)
        #expect(sim.simulateAccessory(appA, "scanner", .connected) == nil)
        sim.run(for: .seconds(1))
        #expect(sim.status(of: appA)?.launchReason == .accessory)
    }
}
