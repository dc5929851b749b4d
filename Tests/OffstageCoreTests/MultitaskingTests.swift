import OffstageCore
import OffstageSimulator
import Testing

@Suite("Apps that never run in the background (SPEC LC-7)")
struct MultitaskingTests {
    /// A scheduling app with a due refresh, not running, on a locked device on a charger, under a policy that runs
    /// whatever may run every 15 minutes: the refresh is due within the hour.
    func dueRefresh(exitsOnSuspend: Bool = false, multitasking: Bool = true) throws -> Simulation {
        var sim = Simulation(policy: FixedIntervalPolicy())
        var settings = DeviceSettings()
        settings.multitaskingSupported = multitasking
        sim.setDeviceSettings(settings)
        try sim.setConditions(ConditionOverrides(charging: true))
        var manifest = schedulingManifest(refreshApp)
        manifest.exitsOnSuspend = exitsOnSuspend
        sim.lock()
        sim.install(manifest, behavior: AppBehavior(), pending: [refreshSubmission])
        return sim
    }

    @Test("LC-7: with multitasking off a due refresh launches nothing, and explain names multitasking as the hold")
    func multitaskingOffHoldsScheduledWork() throws {
        var control = try dueRefresh()
        control.run(for: .seconds(6 * 3600))
        #expect(!control.runTimes(of: refreshApp).isEmpty, "with multitasking on, the same refresh runs")

        var sim = try dueRefresh(multitasking: false)
        sim.run(for: .seconds(6 * 3600))
        #expect(sim.trace(of: refreshApp).isEmpty, "never launched, never resumed")
        #expect(try sim.holdControllers(refreshApp, refreshID).contains("multitasking"))
        #expect(try sim.explain(refreshApp, refreshID).first?.summary.contains("multitasking is off") == true)
    }

    @Test("LC-7: an app that exits on suspend is never launched into the background by the scheduler")
    func exitsOnSuspendHoldsScheduledWork() throws {
        var sim = try dueRefresh(exitsOnSuspend: true)
        sim.run(for: .seconds(6 * 3600))
        #expect(sim.trace(of: refreshApp).isEmpty)
        #expect(try sim.explain(refreshApp, refreshID).first?.holds == [.exitsOnSuspend])
    }

    @Test("LC-7, SCH-9: forced runs say why they cannot apply, and change nothing")
    func forcedRunsAreRefused() throws {
        var sim = try dueRefresh(exitsOnSuspend: true)
        var refusals: [CoreError] = []
        do { try sim.fetchNow(refreshApp) } catch { refusals.append(error) }
        do { try sim.runTaskNow(refreshApp, refreshID) } catch { refusals.append(error) }
        #expect(refusals.count == 2)
        for refusal in refusals {
            #expect(refusal.code == .unavailable)
            #expect(refusal.message.contains("UIApplicationExitsOnSuspend"))
        }
        var off = try dueRefresh(multitasking: false)
        #expect(throws: CoreError.self) { try off.fetchNow(refreshApp) }
        #expect(throws: CoreError.self) { try off.runTaskNow(refreshApp, refreshID) }
        sim.run(for: .seconds(5))
        off.run(for: .seconds(5))
        #expect(sim.trace(of: refreshApp).isEmpty && off.trace(of: refreshApp).isEmpty)
        #expect(sim.core.durableState(of: refreshApp)?.schedule.requests[refreshID] != nil, "the request is still pending")
    }

    @Test("LC-7: turning multitasking off ends apps in the background (will-terminate) and suspended (silently)")
    func turningMultitaskingOffEndsBackgroundApps() throws {
        var sim = makeSimulation(a: AppBehavior().on("didEnterBackground", .takes(.seconds(10))))
        try sim.openAndSettle(appB)
        sim.home()
        sim.run(for: .seconds(3))
        #expect(sim.state(of: appB) == .suspended)
        try sim.openAndSettle(appA)
        sim.home()
        sim.run(for: .milliseconds(100))
        #expect(sim.state(of: appA) == .background)
        let start = sim.now
        var settings = DeviceSettings()
        settings.multitaskingSupported = false
        sim.setDeviceSettings(settings)
        sim.run(for: .seconds(30))
        #expect(sim.state(of: appA) == .notRunning && sim.state(of: appB) == .notRunning)
        #expect(!sim.events(of: appB, since: start).contains(.callback("willTerminate")), "a suspended app gets no callback")
        #expect(sim.status(of: appB)?.lastTermination?.reason == .multitaskingOff)
        #expect(sim.status(of: appA)?.lastTermination?.reason == .multitaskingOff)
    }
}
