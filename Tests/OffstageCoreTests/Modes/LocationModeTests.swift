import Foundation
import OffstageCore
import OffstageSimulator
import Testing

/// Metres per degree of latitude on the core's sphere: walks below go north in steps of known length.
private let metresPerDegree = GeoDistance.meanEarthRadius * .pi / 180

/// A tracker: standard updates with the given request as it launches.
private func tracker(_ request: LocationRequest) -> AppBehavior {
    AppBehavior().on("didFinishLaunching", .startUpdatingLocation(request))
}

/// An app that only monitors significant changes.
private let monitor = AppBehavior().on("didFinishLaunching", .startMonitoringSignificantChanges)

/// App A with the modes and behaviour given, app B plain.
private func locationSimulation(
    a: AppBehavior, aModes: Set<BackgroundMode> = [.location], configuration: CoreConfiguration = .init()
) -> Simulation {
    var simulation = Simulation(configuration: configuration)
    simulation.install(manifest(appA, modes: aModes), behavior: a)
    simulation.install(manifest(appB), behavior: AppBehavior())
    return simulation
}

extension Simulation {
    /// The source reports a position `metres` north of the walk's start (48° N, 11° E), then time passes.
    mutating func walk(to metres: Double, then wait: Duration = .milliseconds(100)) {
        locationFix(latitude: 48 + metres / metresPerDegree, longitude: 11)
        run(for: wait)
    }

    /// How far north of the walk's start, in whole metres, each location app A was given lies.
    var deliveredMetres: [Int] {
        (deliveredLocations[appA] ?? []).map { Int((($0.latitude - 48) * metresPerDegree).rounded()) }
    }
}

@Suite("Location (SPEC MODE-3)")
struct LocationModeTests {
    @Test("MODE-3: a running app gets each fix that passes its distance filter, starting with the latest")
    func distanceFilter() throws {
        var sim = locationSimulation(a: tracker(LocationRequest(distanceFilter: 100)))
        sim.walk(to: 0)
        try sim.openAndSettle(appA)
        for metres in stride(from: 60.0, through: 300, by: 60) { sim.walk(to: metres) }
        #expect(sim.deliveredMetres == [0, 120, 240], "the latest fix at the start, then each 100 m or more from the last")
    }

    @Test("MODE-3, LC-4: fixes that arrive while the app cannot receive coalesce to the latest")
    func queuedFixesCoalesce() throws {
        let slow = tracker(LocationRequest()).on("locations", .takes(.seconds(2)))
        var sim = locationSimulation(a: slow)
        try sim.openAndSettle(appA)
        sim.walk(to: 10)
        for metres in [20.0, 30, 40] { sim.walk(to: metres) }
        sim.run(for: .seconds(5))
        #expect(sim.deliveredMetres == [10, 40], "20 and 30 were replaced by 40 while the first handler ran")
    }

    @Test("MODE-3: with the `location` mode and allowsBackground, updates keep the app running in the background")
    func backgroundUpdatesHoldTheApp() throws {
        var sim = locationSimulation(a: tracker(LocationRequest(allowsBackground: true)))
        try sim.openAndSettle(appA)
        sim.home()
        sim.lock()
        for metres in stride(from: 100.0, through: 1_000, by: 100) { sim.walk(to: metres, then: .seconds(10)) }
        #expect(sim.state(of: appA) == .background)
        #expect(sim.deliveredMetres == Array(stride(from: 100, through: 1_000, by: 100)))
        let status = try #require(sim.status(of: appA))
        #expect(status.activeModes == [.location])
        #expect(status.modeHolds.first?.reason == "receiving location updates")
    }

    @Test("MODE-3: without allowsBackground a suspended app gets nothing, and updates go on when it runs again")
    func suspendedAppsGetNoStandardUpdates() throws {
        var sim = locationSimulation(a: tracker(LocationRequest()))
        try sim.openAndSettle(appA)
        sim.walk(to: 10)
        sim.home()
        sim.run(for: .seconds(2))
        #expect(sim.state(of: appA) == .suspended)
        let why = try #require(sim.status(of: appA)?.suspendedBecause)
        #expect(why.contains("allowsBackgroundLocationUpdates is off"), "\(why)")
        for metres in [20.0, 30, 40] { sim.walk(to: metres) }
        #expect(sim.deliveredMetres == [10])
        try sim.openAndSettle(appA)
        sim.walk(to: 50)
        #expect(sim.deliveredMetres == [10, 50])
    }

    @Test("MODE-6: allowsBackground without the `location` mode is refused, naming the fix; nothing changes")
    func allowsBackgroundNeedsTheMode() throws {
        var sim = locationSimulation(a: tracker(LocationRequest(allowsBackground: true)), aModes: [])
        try sim.openAndSettle(appA)
        #expect(sim.errors.map(\.code) == [.notPermitted])
        #expect(sim.errors.first?.fix.contains("add 'location' to UIBackgroundModes") == true)
        #expect(sim.core.modes.location.updating.isEmpty)
        // Foreground-only updates need no mode; in the background the app is suspended, and `apps` says why.
        try sim.startUpdatingLocation(appA, LocationRequest())
        sim.home()
        sim.run(for: .seconds(2))
        #expect(sim.state(of: appA) == .suspended)
        #expect(sim.status(of: appA)?.suspendedBecause?.contains("'location' is not in UIBackgroundModes") == true)
    }

    @Test("SET-2: with background activity off, location updates do not keep the app running")
    func backgroundActivityOff() throws {
        var sim = locationSimulation(a: tracker(LocationRequest(allowsBackground: true)))
        var settings = AppSettings()
        settings.backgroundActivity = false
        try sim.setAppSettings(settings, for: appA)
        try sim.openAndSettle(appA)
        sim.home()
        sim.run(for: .seconds(2))
        #expect(sim.state(of: appA) == .suspended)
        #expect(sim.status(of: appA)?.suspendedBecause?.contains("background activity is off") == true)
    }

    @Test("MODE-3: a significant change (500 m) wakes a suspended app with the fix; smaller moves do not")
    func significantChangeWakesSuspendedApp() throws {
        var sim = locationSimulation(a: monitor, aModes: [])
        sim.walk(to: 0)
        try sim.openAndSettle(appA)
        sim.home()
        sim.run(for: .seconds(2))
        #expect(sim.state(of: appA) == .suspended && sim.deliveredMetres == [0])
        sim.walk(to: 499)
        #expect(sim.state(of: appA) == .suspended && sim.deliveredMetres == [0])
        sim.walk(to: 520)
        #expect(sim.deliveredMetres == [0, 520])
        sim.run(for: .seconds(2))
        #expect(sim.state(of: appA) == .suspended, "suspended again once it handled the fix")
        sim.walk(to: 1_000)
        #expect(sim.deliveredMetres == [0, 520], "480 m from the anchor, which moved to 520 m")
    }

    @Test("MODE-3: a significant change launches a terminated app into the background (reason location) with the fix")
    func significantChangeLaunchesTerminatedApp() throws {
        var sim = locationSimulation(a: monitor.on("didEnterBackground", .exit(code: 0, after: .milliseconds(10))), aModes: [])
        sim.walk(to: 0)
        try sim.openAndSettle(appA)
        sim.home()
        sim.run(for: .seconds(2))
        #expect(sim.state(of: appA) == .notRunning)
        let start = sim.now
        sim.walk(to: 600, then: .seconds(1))
        let events = sim.events(of: appA, since: start)
        #expect(events.first == .launched(.location))
        #expect(sim.callbacks(of: appA).suffix(2) == ["didFinishLaunching", "locations"], "told after launching")
        #expect(sim.deliveredMetres == [0, 600])
    }

    @Test("LC-6, MODE-3: even a force-quit app is launched for a significant change, and stays force-quit")
    func significantChangeLaunchesForceQuitApp() throws {
        var sim = locationSimulation(a: monitor, aModes: [])
        sim.walk(to: 0)
        try sim.openAndSettle(appA)
        try sim.forceQuit(appA)
        sim.run(for: .seconds(1))
        #expect(sim.state(of: appA) == .notRunning)
        sim.walk(to: 700, then: .seconds(1))
        #expect(sim.status(of: appA)?.launchReason == .location)
        #expect(sim.status(of: appA)?.forceQuit == true, "other background launches stay off until the user opens it")
        #expect(sim.deliveredMetres == [0, 700])
    }

    @Test("MODE-3, SET-2: no launch when background activity is off or the app is being uninstalled")
    func noLaunchWhenNotAllowed() throws {
        var sim = locationSimulation(a: monitor, aModes: [])
        sim.walk(to: 0)
        try sim.openAndSettle(appA)
        try sim.forceQuit(appA)
        sim.run(for: .seconds(1))
        var settings = AppSettings()
        settings.backgroundActivity = false
        try sim.setAppSettings(settings, for: appA)
        sim.walk(to: 700, then: .seconds(1))
        #expect(sim.state(of: appA) == .notRunning)
        #expect(sim.logLines(of: appA, .mode).contains { $0.contains("background activity is off") })
        try sim.uninstall(appA)
        sim.walk(to: 2_000, then: .seconds(1))
        #expect(sim.core.apps[appA] == nil && sim.core.modes.location.significant.isEmpty)
    }

    @Test("MODE-3: significant-change monitoring survives a restart through the durable state, and stops when asked")
    func monitoringSurvivesRestart() throws {
        var sim = locationSimulation(a: monitor, aModes: [])
        sim.walk(to: 0)
        try sim.openAndSettle(appA)
        let saved = try #require(sim.core.durableState(of: appA))
        #expect(saved.significantLocationChange != nil)
        let decoded = try JSONDecoder().decode(AppDurableState.self, from: JSONEncoder().encode(saved))
        #expect(decoded == saved, "round-trips through the store's encoding")
        sim.reboot()
        #expect(sim.state(of: appA) == .notRunning)
        sim.walk(to: 800, then: .seconds(1))
        #expect(sim.status(of: appA)?.launchReason == .location)
        // The relaunched app stops monitoring: the next move launches nothing.
        let stops = AppBehavior().on("locations", .stopMonitoringSignificantChanges)
        sim.setBehavior(stops, for: appA)
        sim.walk(to: 1_600, then: .seconds(1))
        try sim.forceQuit(appA)
        sim.run(for: .seconds(1))
        sim.walk(to: 2_400, then: .seconds(1))
        #expect(sim.state(of: appA) == .notRunning)
        #expect(sim.core.durableState(of: appA)?.significantLocationChange == nil)
    }

    @Test("MODE-3: standard updates end with the process; significant-change monitoring does not")
    func updatesEndWithTheProcess() throws {
        var sim = locationSimulation(a: tracker(LocationRequest(allowsBackground: true)).on("didFinishLaunching", .startMonitoringSignificantChanges))
        try sim.openAndSettle(appA)
        try sim.forceQuit(appA)
        sim.run(for: .seconds(1))
        #expect(sim.core.modes.location.updating[appA] == nil)
        #expect(sim.core.modes.location.significant[appA] != nil)
    }

    @Test("MODE-3: a failing source tells each running app that updates (did-fail), not a suspended one")
    func sourceFailureIsTold() throws {
        var sim = locationSimulation(a: tracker(LocationRequest()))
        sim.install(manifest("com.example.c", modes: [.location]), behavior: tracker(LocationRequest(allowsBackground: true)))
        try sim.openAndSettle(appA)
        try sim.openAndSettle("com.example.c")
        sim.run(for: .seconds(2))
        #expect(sim.state(of: appA) == .suspended && sim.state(of: "com.example.c") == .active)
        sim.locationSourceFailed("gpsd went away")
        sim.run(for: .seconds(1))
        #expect(sim.callbacks(of: "com.example.c").contains("locationError"))
        #expect(!sim.callbacks(of: appA).contains("locationError"))
    }
}
