import OffstageCore
import OffstageSimulator
import Testing

/// A device whose conditions are set first, then an app installed with a pending request it never ran (as after a
/// restart), so the request meets those conditions from its first decision on. The screen stays on unless `locked`:
/// the policy then runs a request as soon as its conditions hold, so these tests see the controllers alone.
private func pending(
    _ submission: TaskBehavior.Submission = refreshSubmission, conditions: ConditionOverrides,
    settings: AppSettings = .init(), device: DeviceSettings = .init(), configuration: CoreConfiguration = .init(),
    tasks: TaskBehavior = .init(), locked: Bool = false
) throws -> Simulation {
    var sim = Simulation(configuration: configuration)
    try sim.setConditions(conditions)
    sim.setDeviceSettings(device)
    if locked { sim.lock() }
    sim.install(
        schedulingManifest(refreshApp), behavior: AppBehavior().with(\.tasks, tasks), settings: settings,
        pending: [submission])
    return sim
}

private let onBattery = ConditionOverrides(batteryLevel: 80, charging: false, network: .unmetered)

@Suite("Conditions the scheduler obeys (SPEC SCH-6, SCH-8, SET-1, SET-2)")
struct ConditionTests {
    @Test("SCH-6: with no network a refresh waits and explain names the network; it runs once there is one")
    func network() throws {
        var sim = try pending(conditions: ConditionOverrides(network: NetworkKind.none))
        sim.run(for: .seconds(3_600))
        #expect(sim.runTimes(of: refreshApp).isEmpty)
        #expect(try sim.holdControllers(refreshApp, refreshID) == ["network"])
        try sim.setConditions(ConditionOverrides(network: .unmetered))
        sim.run(for: .seconds(60))
        #expect(sim.runTimes(of: refreshApp).count == 1)
    }

    @Test("S9, SET-2: background data off on a metered network holds a refresh, named as such; unmetered lets it run")
    func backgroundDataRestricted() throws {
        var settings = AppSettings()
        settings.backgroundData = false
        var sim = try pending(conditions: ConditionOverrides(network: .metered), settings: settings)
        sim.run(for: .seconds(3_600))
        #expect(sim.runTimes(of: refreshApp).isEmpty)
        let status = try #require(try sim.explain(refreshApp, refreshID).first)
        #expect(status.holds == [.backgroundDataRestricted])
        #expect(status.summary.contains("background data restricted on a metered network"))
        try sim.setConditions(ConditionOverrides(network: .unmetered))
        sim.run(for: .seconds(60))
        #expect(sim.runTimes(of: refreshApp).count == 1)
    }

    @Test("SET-1, SET-2: data saver holds background data on a metered network unless the app is exempt")
    func dataSaver() throws {
        var device = DeviceSettings()
        device.dataSaver = true
        var sim = try pending(conditions: ConditionOverrides(network: .metered), device: device)
        sim.run(for: .seconds(600))
        #expect(try sim.holdControllers(refreshApp, refreshID) == ["data"])
        var exempt = AppSettings()
        exempt.unrestrictedData = true
        try sim.setAppSettings(exempt, for: refreshApp)
        sim.run(for: .seconds(60))
        #expect(sim.runTimes(of: refreshApp).count == 1)
    }

    @Test("SCH-6: on battery below the minimum level background work waits; a charger lifts it")
    func batteryLow() throws {
        var sim = try pending(conditions: ConditionOverrides(batteryLevel: 10, charging: false, network: .unmetered))
        sim.run(for: .seconds(600))
        #expect(try sim.explain(refreshApp, refreshID).first?.holds == [.batteryLow(level: 10, minimum: 20)])
        try sim.setConditions(ConditionOverrides(batteryLevel: 10, charging: true, network: .unmetered))
        sim.run(for: .seconds(60))
        #expect(sim.runTimes(of: refreshApp).count == 1)
    }

    @Test("SCH-6: low power mode holds background work")
    func lowPower() throws {
        var device = DeviceSettings()
        device.lowPowerMode = true
        var sim = try pending(conditions: onBattery, device: device)
        sim.run(for: .seconds(600))
        #expect(try sim.holdControllers(refreshApp, refreshID) == ["low-power"])
        sim.setDeviceSettings(DeviceSettings())
        sim.run(for: .seconds(60))
        #expect(sim.runTimes(of: refreshApp).count == 1)
    }

    @Test("SET-2: turning the app's background refresh off after it submitted holds the request")
    func appRefreshSwitch() throws {
        var off = AppSettings()
        off.backgroundRefresh = false
        var sim = try pending(conditions: onBattery, settings: off)
        sim.run(for: .seconds(600))
        #expect(try sim.holdControllers(refreshApp, refreshID) == ["refresh-switch"])
        #expect(sim.runTimes(of: refreshApp).isEmpty)
    }

    @Test("SCH-6: the daily budget of background runtime on battery holds an app that spent it, until local midnight")
    func dailyBudget() throws {
        var configuration = CoreConfiguration()
        configuration.dailyBackgroundBudget = 10
        var tasks = TaskBehavior()
        tasks.runtime = .seconds(6)
        tasks.resubmitAfter = .zero
        var sim = try pending(conditions: onBattery, configuration: configuration, tasks: tasks, locked: true)
        try sim.runTaskNow(refreshApp, refreshID)
        sim.run(for: .seconds(10))
        try sim.runTaskNow(refreshApp, refreshID)
        sim.run(for: .seconds(10))
        let status = try #require(try sim.explain(refreshApp, refreshID).first)
        guard case .dailyBudget(let used, let budget, let resetsAt)? = status.holds.first else {
            Issue.record("expected a budget hold, got \(status.holds)")
            return
        }
        #expect(used >= 12 && used < 12.1, "two runs of 6 s, plus the launch")
        #expect(budget == 10)
        #expect(resetsAt == LocalClock().startOfDay(LocalClock().day(sim.now) + 1))
        #expect(sim.core.nextDeadline == resetsAt, "the one timer is armed for the reset, not polled")
    }

    @Test("S8, SCH-2: processing that needs power waits on battery, named; charging and idle let it run; at the end of its runtime its expiration handler runs")
    func processingNeedsPowerAndIdle() throws {
        var tasks = TaskBehavior()
        tasks.runtime = nil
        var sim = try pending(
            .init(processingID, kind: .processing, requiresExternalPower: true),
            conditions: ConditionOverrides(batteryLevel: 80, charging: false, network: .unmetered, idle: false),
            tasks: tasks)
        sim.run(for: .seconds(600))
        let status = try #require(try sim.explain(refreshApp, processingID).first)
        #expect(status.holds.contains(.externalPower))
        #expect(status.summary.contains("requires external power"))
        try sim.setConditions(ConditionOverrides(batteryLevel: 80, charging: true, network: .unmetered, idle: true))
        let start = sim.now
        sim.run(for: .seconds(400))
        #expect(sim.trace(of: refreshApp).first?.event == .launched(.processing))
        let expired = try #require(sim.trace.first { $0.event == .callback("taskExpiring") }?.at)
        #expect(approximately((expired - start).inSeconds, 300, within: 0.1), "processing runtime is 300 s")
        #expect(sim.trace.contains { $0.event == .taskCompleted(processingID, .failed) })
    }

    @Test("SCH-2: processing runs only while idle; locked for the idle delay the device becomes idle by itself; unlocking expires the run")
    func processingWaitsForIdle() throws {
        var tasks = TaskBehavior()
        tasks.runtime = .seconds(200)
        var sim = try pending(
            .init(processingID, kind: .processing), conditions: ConditionOverrides(charging: true), tasks: tasks,
            locked: true)
        #expect(try sim.holdControllers(refreshApp, processingID) == ["idle"])
        sim.run(for: .seconds(1_790))
        #expect(sim.runTimes(of: refreshApp).isEmpty)
        sim.run(for: .seconds(20))
        let started = try #require(sim.runTimes(of: refreshApp).first)
        #expect(approximately((started - sim.core.device.lockedSince!).inSeconds, 1_800, within: 0.1))
        sim.unlock()
        sim.run(for: .seconds(1))
        #expect(sim.callbacks(of: refreshApp).contains("taskExpiring"), "the user picked the device up")
    }

    @Test("LC-6, SCH-5: a force-quit app is not woken, explain says why, and opening it lifts that")
    func forceQuitNotWoken() throws {
        var sim = Simulation()
        sim.lock()
        sim.install(schedulingManifest(refreshApp), behavior: .init(), pending: [refreshSubmission])
        try sim.forceQuit(refreshApp)
        sim.run(for: .seconds(2 * 86_400))
        #expect(sim.runTimes(of: refreshApp).isEmpty)
        #expect(try sim.holdControllers(refreshApp, refreshID) == ["force-quit"])
    }

    @Test("LC-6, SCH-9: run-task and fetch do not launch a force-quit app into the background: refused with the fix")
    func forceQuitNotForced() throws {
        var sim = Simulation()
        // No network: the scheduler leaves the request alone, only the debug verbs could run it.
        try sim.setConditions(ConditionOverrides(network: NetworkKind.none))
        sim.install(schedulingManifest(refreshApp), behavior: .init(), pending: [refreshSubmission])
        try sim.forceQuit(refreshApp)
        let run = #expect(throws: CoreError.self) { try sim.runTaskNow(refreshApp, refreshID) }
        let fetch = #expect(throws: CoreError.self) { try sim.fetchNow(refreshApp) }
        #expect(run?.code == .unavailable && fetch?.code == .unavailable)
        #expect(run?.fix.contains("offstage open") == true)
        sim.run(for: .seconds(60))
        #expect(sim.trace(of: refreshApp).allSatisfy { if case .launched = $0.event { false } else { true } })
        // Once the user has opened it, the debug verbs work again.
        try sim.openAndSettle(refreshApp)
        sim.home()
        sim.run(for: .seconds(2))
        try sim.runTaskNow(refreshApp, refreshID)
        #expect(sim.callbacks(of: refreshApp).last == "runTask")
    }

    @Test("SCH-8: every pending request either has holds or a plan, and running ones say so")
    func everyRequestIsExplained() throws {
        var tasks = TaskBehavior()
        tasks.runtime = .seconds(100)
        var sim = try pending(conditions: ConditionOverrides(network: .metered), tasks: tasks)
        sim.run(for: .seconds(10))
        try sim.unlockAndSubmitProcessing()
        for status in try sim.explain(refreshApp) {
            switch status.state {
            case .running: #expect(status.summary.hasPrefix("running since"))
            case .pending: #expect(!status.holds.isEmpty || status.planned != nil, "\(status.identifier): \(status.summary)")
            }
        }
        let unknown = #expect(throws: CoreError.self) { try sim.explain(refreshApp, "com.example.unlisted") }
        #expect(unknown?.code == .notPermitted)
    }
}

extension Simulation {
    mutating func unlockAndSubmitProcessing() throws {
        unlock()
        try openAndSettle(refreshApp)
        submit(refreshApp, .init(processingID, kind: .processing))
        home()
        run(for: .seconds(2))
    }
}
