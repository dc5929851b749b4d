import OffstageCore
import OffstageSimulator
import Testing

/// A music player: plays in the foreground when opened and keeps playing.
private let player = AppBehavior().on("didBecomeActive", .playAudio(.playback, mixWithOthers: false, stopAfter: nil))

/// Apps A and B installed, the network metered.
private func meteredSimulation(a: AppBehavior = .init(), aModes: Set<BackgroundMode> = []) throws -> Simulation {
    var sim = Simulation()
    sim.install(manifest(appA, modes: aModes), behavior: a)
    sim.install(manifest(appB))
    var overrides = ConditionOverrides()
    overrides.network = .metered
    try sim.setConditions(overrides)
    return sim
}

private func settings(_ change: (inout AppSettings) -> Void) -> AppSettings {
    var settings = AppSettings()
    change(&settings)
    return settings
}

@Suite("The user's data controls on the apps' traffic (SPEC SET-2)")
struct NetworkRulesTests {
    @Test("SET-2: the rule itself: foreground and user-started audio are free; activity off, background data off and Data Saver restrict in that order")
    func ruleTable() {
        let all = settings { $0.backgroundActivity = false; $0.backgroundData = false }
        func rule(_ s: AppSettings, inFront: Bool = false, audio: Bool = false, saver: Bool = false, _ network: NetworkKind) -> NetworkRestriction? {
            NetworkRestriction.applying(to: s, inFront: inFront, userAudio: audio, dataSaver: saver, network: network)
        }
        #expect(rule(all, inFront: true, .metered) == nil)
        #expect(rule(all, audio: true, .metered) == nil)
        #expect(rule(all, .metered) == .backgroundActivityOff)
        #expect(rule(all, .unmetered) == .backgroundActivityOff, "background activity off holds on any network")
        let noData = settings { $0.backgroundData = false }
        #expect(rule(noData, .metered) == .backgroundDataOff)
        #expect(rule(noData, .unmetered) == nil)
        #expect(rule(noData, saver: true, .metered) == .backgroundDataOff, "the app's own switch is named first")
        #expect(rule(AppSettings(), saver: true, .metered) == .dataSaver)
        #expect(rule(AppSettings(), saver: true, .unmetered) == nil)
        #expect(rule(settings { $0.unrestrictedData = true }, saver: true, .metered) == nil)
        #expect(rule(AppSettings(), .metered) == nil)
    }

    @Test("SET-2: background data off on a metered network blocks the app when it leaves the foreground and lifts when it returns")
    func backgroundDataFollowsTheForeground() throws {
        var sim = try meteredSimulation()
        try sim.setAppSettings(settings { $0.backgroundData = false }, for: appA)
        // Installed and not running: not in front, so blocked already.
        #expect(sim.networkRestrictions[appA] == .backgroundDataOff)
        #expect(sim.networkRestrictions[appB] == nil)
        try sim.openAndSettle(appA)
        #expect(sim.networkRestrictions[appA] == nil)
        #expect(sim.core.networkRestriction(of: appA, at: sim.now) == nil)
        sim.home()
        #expect(sim.networkRestrictions[appA] == .backgroundDataOff, "blocked in the same input as the move to the background")
        sim.run(for: .seconds(30))
        #expect(sim.state(of: appA) == .suspended)
        #expect(sim.networkRestrictions[appA] == .backgroundDataOff)
        try sim.open(appA)
        #expect(sim.networkRestrictions[appA] == nil)
        #expect(sim.logLines(of: appA, .network).suffix(2) == [
            "blocked: \(NetworkRestriction.backgroundDataOff.description)", "allowed",
        ])
    }

    @Test("SET-2: a change of network kind or of Data Saver decides every app again, in one action")
    func deviceChangesDecideEveryApp() throws {
        var sim = Simulation()
        sim.install(manifest(appA))
        sim.install(manifest(appB))
        try sim.setAppSettings(settings { $0.unrestrictedData = true }, for: appB)
        var device = sim.core.device.settings
        device.dataSaver = true
        sim.setDeviceSettings(device)
        #expect(sim.networkRestrictions.isEmpty, "unmetered: Data Saver restricts nothing")
        var overrides = ConditionOverrides()
        overrides.network = .metered
        let actions = try sim.input { core, now in
            let actions = try core.setConditionOverrides(overrides, at: now)
            return (actions, actions)
        }
        let batches = actions.compactMap { action -> NetworkRulesChange? in
            if case .network(let change) = action { change } else { nil }
        }
        #expect(batches == [NetworkRulesChange([appA: .dataSaver])], "B has unrestricted data")
        overrides.network = .unmetered
        try sim.setConditions(overrides)
        #expect(sim.networkRestrictions[appA] == nil)
    }

    @Test("SET-2: background activity off blocks on any network, except audio the user started")
    func userAudioIsExempt() throws {
        var sim = try meteredSimulation(a: player, aModes: [.audio])
        try sim.setAppSettings(settings { $0.backgroundActivity = false }, for: appA)
        var overrides = ConditionOverrides()
        overrides.network = .unmetered
        try sim.setConditions(overrides)
        try sim.openAndSettle(appA)
        sim.home()
        sim.run(for: .seconds(5))
        #expect(sim.state(of: appA) == .background, "the user's music plays on")
        #expect(sim.networkRestrictions[appA] == nil, "and streams")
        try sim.setAudioPlaying(appA, false)
        #expect(sim.networkRestrictions[appA] == .backgroundActivityOff)
    }

    @Test("SET-2: an uninstalled app's restriction is lifted with it; a restored core decides every app again")
    func uninstallAndRestore() throws {
        var sim = try meteredSimulation()
        try sim.setAppSettings(settings { $0.backgroundData = false }, for: appA)
        #expect(sim.networkRestrictions[appA] == .backgroundDataOff)
        var restored = OffstageCore(device: sim.core.device)
        for id in [appA, appB] {
            let entry = try #require(sim.core.apps[id])
            restored.restore(entry.app, durable: entry.durable)
        }
        let actions = restored.recover(at: sim.now)
        #expect(actions.contains(.network(NetworkRulesChange([appA: .backgroundDataOff]))))
        try sim.uninstall(appA)
        sim.run(for: .seconds(1))
        #expect(sim.networkRestrictions[appA] == nil)
        #expect(sim.core.network.restricted.isEmpty)
    }
}
