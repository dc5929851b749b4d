import Foundation
import OffstageCore
import OffstageSimulator
import Testing

@Suite("Uninstall is durable and complete (SPEC MAN-3, LC-5)")
struct UninstallTests {
    let now = Instant(secondsSinceEpoch: 1_000)

    @Test("MAN-3: uninstalling a running app saves the intent before its process has ended")
    func pendingUninstallIsSaved() throws {
        var sim = makeSimulation(a: AppBehavior().on("willTerminate", .takes(.seconds(2))))
        try sim.openAndSettle(appA)
        var actions: [CoreAction] = []
        try sim.input { core, now in
            actions = try core.uninstall(appA, at: now)
            return actions
        }
        #expect(actions.contains(.saveApp(appA)), "the intent is written with the input that acknowledges it")
        #expect(sim.core.durableState(of: appA)?.uninstallPending == true)
        #expect(sim.core.apps[appA]?.process != nil, "the process is still ending (will-terminate)")
        sim.run(for: .seconds(3))
        #expect(sim.core.apps[appA] == nil)
    }

    @Test("MAN-3: a restart with an uninstall pending kills the surviving process without a callback, then forgets the app")
    func restartFinishesPendingUninstallOfLiveProcess() {
        var core = OffstageCore()
        var durable = AppDurableState()
        durable.uninstallPending = true
        core.restore(InstalledApp(manifest: manifest(appA), bundlePath: "/bundles/a@1", installedAt: now), durable: durable)
        _ = core.adopt(appA, pid: 4242, at: now)
        let recovered = core.recover(at: now)
        #expect(recovered.contains(.kill(appA, pid: 4242)))
        #expect(!recovered.contains { if case .deliver = $0 { true } else { false } }, "no will-terminate after a restart")
        let exited = core.processExited(appA, pid: 4242, status: .signaled(9), at: now + .milliseconds(5))
        #expect(exited.contains(.forget(appA, bundlePath: "/bundles/a@1")))
        #expect(core.apps[appA] == nil)
    }

    @Test("MAN-3: a restart with an uninstall pending and no surviving process forgets the app at once")
    func restartFinishesPendingUninstallWithoutProcess() {
        var core = OffstageCore()
        var durable = AppDurableState()
        durable.uninstallPending = true
        core.restore(InstalledApp(manifest: manifest(appA), bundlePath: "/bundles/a@1", installedAt: now), durable: durable)
        core.restore(InstalledApp(manifest: manifest(appB), bundlePath: "/bundles/b@1", installedAt: now), durable: .init())
        let recovered = core.recover(at: now)
        #expect(recovered.contains(.forget(appA, bundlePath: "/bundles/a@1")))
        #expect(core.apps[appA] == nil && core.apps[appB] != nil, "only the app being uninstalled goes")
    }

    @Test("MAN-3: an install of an app whose uninstall is still finishing is refused and changes nothing")
    func installDuringPendingUninstallIsRefused() throws {
        var sim = makeSimulation(a: AppBehavior().on("willTerminate", .takes(.seconds(2))))
        try sim.openAndSettle(appA)
        let pid = try #require(sim.status(of: appA)?.pid)
        try sim.uninstall(appA)
        let before = sim.core.apps[appA]
        sim.install(manifest(appA))
        #expect(sim.logLines(of: appA, .warning).contains { $0.contains("install refused") && $0.contains("still being uninstalled") })
        #expect(sim.core.apps[appA] == before, "the old process is still tracked, with its pid \(pid)")
        sim.run(for: .seconds(3))
        #expect(sim.core.apps[appA] == nil)
        sim.install(manifest(appA))
        #expect(sim.core.apps[appA]?.app.bundlePath == "/sim/com.example.a" && sim.core.apps[appA]?.process == nil)
        #expect(sim.core.durableState(of: appA)?.uninstallPending == false, "a fresh install starts clean")
    }

    @Test("MAN-3: an app whose uninstall is pending cannot be opened")
    func openDuringPendingUninstallIsRefused() throws {
        var sim = makeSimulation(a: AppBehavior().on("willTerminate", .takes(.seconds(2))))
        try sim.openAndSettle(appA)
        try sim.uninstall(appA)
        #expect(throws: CoreError.self) { try sim.open(appA) }
        #expect(sim.core.device.foregroundApp == nil)
    }

    @Test("MAN-3: the uninstall intent round-trips through the store's encoding, and older states load without it")
    func intentIsPersisted() throws {
        var durable = AppDurableState()
        durable.uninstallPending = true
        let decoded = try JSONDecoder().decode(AppDurableState.self, from: JSONEncoder().encode(durable))
        #expect(decoded.uninstallPending)
        let older = try JSONDecoder().decode(AppDurableState.self, from: Data(#"{"forceQuit": false}"#.utf8))
        #expect(!older.uninstallPending)
    }

    @Test("LC-9: a launch that fails is recorded with its reason and throttled like a crash")
    func launchFailureIsRecorded() throws {
        var core = OffstageCore()
        _ = try core.install(
            InstalledApp(manifest: schedulingManifest(refreshApp), bundlePath: "/x", installedAt: now), at: now)
        _ = try core.open(refreshApp, at: now)
        let launch = try #require(core.apps[refreshApp]?.process?.launch)
        _ = core.launchFailed(refreshApp, launch: launch, message: "exec format error", at: now)
        let record = try #require(core.status(of: refreshApp, at: now)?.lastTermination)
        #expect(record.reason == .launchFailed("exec format error"))
        #expect(record.summary.contains("could not be launched: exec format error"))
        #expect(core.device.foregroundApp == nil)
    }
}
