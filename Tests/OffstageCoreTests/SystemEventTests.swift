import OffstageCore
import OffstageSimulator
import Testing

@Suite("System events for apps (SPEC LC-4)")
struct SystemEventTests {
    @Test("LC-4: a suspended app hears each kind once, coalesced, before anything else when it runs again")
    func coalescedWhileSuspended() throws {
        var sim = makeSimulation()
        try sim.openAndSettle(appA)
        sim.home()
        sim.run(for: .seconds(2))
        #expect(sim.state(of: appA) == .suspended)
        for event in [SystemEvent.networkChange, .batteryLevelChange, .networkChange, .networkChange] {
            sim.systemEvent(event)
        }
        // Nothing thaws it for them; they wait, one per kind, in the order they first came.
        sim.run(for: .seconds(60))
        #expect(sim.state(of: appA) == .suspended)
        #expect(sim.core.apps[appA]?.process?.queue == [.systemEvent(.networkChange), .systemEvent(.batteryLevelChange)])
        let opened = sim.now
        try sim.openAndSettle(appA)
        #expect(
            sim.events(of: appA, since: opened) == [
                .thawed, .callback("systemEvent"), .callback("systemEvent"), .callback("willEnterForeground"),
                .callback("didBecomeActive"),
            ])
    }

    @Test("LC-4: a running app hears each event at once, every time")
    func runningAppHearsAtOnce() throws {
        var sim = makeSimulation()
        try sim.openAndSettle(appA)
        let start = sim.now
        sim.systemEvent(.timeZoneChange)
        sim.run(for: .milliseconds(10))
        sim.systemEvent(.timeZoneChange)
        sim.run(for: .milliseconds(10))
        #expect(sim.events(of: appA, since: start) == [.callback("systemEvent"), .callback("systemEvent")])
    }

    @Test("LC-4: battery, charging, network and settings changes are posted by the core itself; not-running apps get none")
    func postedOnChanges() throws {
        var sim = makeSimulation()
        try sim.openAndSettle(appA)
        sim.home()
        sim.run(for: .seconds(2))
        sim.machineReading(MachineReading(batteryLevel: 80, charging: false, network: .metered))
        sim.machineReading(MachineReading(batteryLevel: 79, charging: false, network: .metered))
        var settings = AppSettings()
        settings.backgroundData = false
        try sim.setAppSettings(settings, for: appA)
        #expect(
            sim.core.apps[appA]?.process?.queue == [
                .systemEvent(.batteryLevelChange), .systemEvent(.batteryStateChange), .systemEvent(.networkChange),
                .systemEvent(.settingsChange),
            ])
        #expect(sim.core.apps[appB]?.process == nil)
        #expect(sim.state(of: appA) == .suspended)
    }

    @Test("LC-4: an app that is launching hears system events after did-finish-launching")
    func afterLaunching() throws {
        var sim = makeSimulation()
        try sim.open(appA)
        sim.systemEvent(.localeChange)
        sim.run(for: .seconds(1))
        let names = sim.callbacks(of: appA)
        #expect(names.first == "didFinishLaunching")
        #expect(names.contains("systemEvent"))
    }
}
