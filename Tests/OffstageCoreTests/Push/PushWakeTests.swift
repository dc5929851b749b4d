import OffstageCore
import OffstageSimulator
import Testing

/// What a background push does to the app it is for, in each state (SPEC NT-4).
@Suite("Waking apps for pushes (SPEC NT-4)")
struct PushWakeTests {
    @Test("NT-4: a background push thaws a suspended app, runs its remote-notification handler, and the app is suspended again once it completes")
    func resumesSuspendedApp() throws {
        var sim = Simulation.withMessenger()
        try sim.suspend(messenger)
        let start = sim.now
        sim.receivePush(push("p1", at: sim.now))
        sim.run(for: .seconds(5))
        #expect(sim.events(of: messenger, since: start) == [.thawed, .callback("remoteNotification"), .frozen])
        #expect(sim.handledPushes[messenger] == ["p1"])
        #expect(sim.outcomes(["p1"]) == ["handled: newData"])
        #expect(sim.state(of: messenger) == .suspended)
    }

    @Test("NT-4, LC-2: a background push launches a not-running app into the background with reason push: did-finish-launching, the handler, no did-become-active")
    func launchesNotRunningApp() {
        var sim = Simulation.withMessenger()
        sim.receivePush(push("p1", at: sim.now))
        sim.run(for: .seconds(5))
        #expect(sim.trace(of: messenger).first?.event == .launched(.push))
        #expect(sim.callbacks(of: messenger) == ["didFinishLaunching", "remoteNotification"])
        #expect(sim.outcomes(["p1"]) == ["handled: newData"])
        #expect(sim.state(of: messenger) == .suspended)
    }

    @Test("NT-4, SCH-5: the handler's result teaches the policy as a refresh's does")
    func resultTeachesPolicy() throws {
        var sim = Simulation.withMessenger(behavior: AppBehavior().with(\.pushHandler, (.seconds(1), .noData)))
        try sim.suspend(messenger)
        sim.receivePush(push("p1", at: sim.now))
        sim.run(for: .seconds(5))
        let results = try #require(sim.core.apps[messenger]?.durable.schedule.results)
        #expect(results.last == .noData)
        #expect(results.counts[.noData] == 1)
        #expect(results.unproductiveStreak == 1)
    }

    @Test("NT-4, LC-6: an app the user force-quit is not woken or launched; the push is recorded as not delivered")
    func forceQuitNotWoken() throws {
        var sim = Simulation.withMessenger()
        try sim.open(messenger)
        sim.run(for: .milliseconds(100))
        try sim.forceQuit(messenger)
        sim.run(for: .seconds(10))
        let launches = sim.trace(of: messenger).filter { if case .launched = $0.event { true } else { false } }.count
        sim.receivePush(push("p1", at: sim.now))
        sim.run(for: .seconds(5))
        #expect(sim.trace(of: messenger).filter { if case .launched = $0.event { true } else { false } }.count == launches)
        #expect(sim.state(of: messenger) == .notRunning)
        #expect(sim.pushOutcomes["p1"]?.name == "not-delivered")
        #expect(sim.pushOutcomes["p1"]?.detail?.contains("force-quit") == true)
    }

    @Test("NT-4: an app that does not declare remote-notification is not woken for a background push, with the reason recorded")
    func undeclaredModeNotWoken() {
        var sim = Simulation.withMessenger(modes: [])
        sim.receivePush(push("p1", at: sim.now))
        sim.run(for: .seconds(5))
        #expect(sim.trace(of: messenger).isEmpty)
        #expect(sim.pushOutcomes["p1"] == .notDelivered("the app does not declare the 'remote-notification' background mode"))
    }

    @Test("NT-4: an app active in front gets the handler at once, without spending its budget")
    func activeAppNoBudget() throws {
        var configuration = CoreConfiguration()
        configuration.backgroundPushBurst = 0
        var sim = Simulation.withMessenger(configuration: configuration)
        try sim.open(messenger)
        sim.run(for: .milliseconds(100))
        sim.receivePush(push("p1", at: sim.now))
        sim.run(for: .seconds(1))
        #expect(sim.outcomes(["p1"]) == ["handled: newData"])
        #expect(sim.state(of: messenger) == .active)
    }

    @Test("NT-4: a handler that does not complete within 30 s gets the app terminated, the reason recorded and the push cut off")
    func handlerOverrun() throws {
        var sim = Simulation.withMessenger(behavior: AppBehavior().with(\.pushHandler, nil))
        try sim.suspend(messenger)
        let start = sim.now
        sim.receivePush(push("p1", at: sim.now))
        sim.run(for: .seconds(40))
        let killed = try #require(sim.firstTime(of: .sigterm, for: messenger))
        #expect(approximately((killed - start).inSeconds, 30, within: 0.01))
        #expect(sim.core.apps[messenger]?.durable.lastTermination?.reason == .remoteNotificationOverrun(seconds: 30))
        #expect(sim.pushOutcomes["p1"]?.name == "cut-off")
        #expect(sim.core.apps[messenger]?.durable.schedule.results.last == .failed)
    }

    @Test("NT-4: while its handler runs the app stays awake; it is suspended once the last handler completes")
    func staysAwakeWhileHandling() throws {
        var sim = Simulation.withMessenger(behavior: AppBehavior().with(\.pushHandler, (.seconds(10), .newData)))
        try sim.suspend(messenger)
        sim.receivePush(push("p1", at: sim.now))
        sim.run(for: .seconds(9))
        #expect(sim.state(of: messenger) == .background)
        sim.run(for: .seconds(3))
        #expect(sim.state(of: messenger) == .suspended)
    }

    @Test("NT-4: a push for an app that is not installed is recorded as not delivered")
    func notInstalled() {
        var sim = Simulation.withMessenger()
        sim.receivePush(push("p1", to: "com.example.gone", at: sim.now))
        #expect(sim.pushOutcomes["p1"] == .notDelivered("'com.example.gone' is not installed"))
    }

    @Test("NT-4, LC-9: a background push does not launch an app that crashed in the background before its crash-loop delay has passed; it is recorded not delivered, and a push after the delay launches it (found by the model-based tests)")
    func crashLoopHoldsBackPushLaunch() throws {
        let start = Instant(secondsSinceEpoch: 1_767_254_400)
        var core = OffstageCore()
        let manifest = Manifest(id: messenger, executable: "app", backgroundModes: [.remoteNotification])
        _ = try core.install(InstalledApp(manifest: manifest, bundlePath: "/apps/messenger", installedAt: start), at: start)
        func launches(_ actions: [CoreAction]) -> [LaunchPlan] {
            actions.compactMap { if case .launch(_, let plan) = $0 { plan } else { nil } }
        }
        func outcome(_ id: String, _ actions: [CoreAction]) -> PushOutcome? {
            actions.lazy.compactMap { action -> PushOutcome? in
                if case .push(.finish(id, _, let outcome)) = action { outcome } else { nil }
            }.first
        }
        let first = try #require(launches(core.pushArrived(push("p1", at: start), at: start)).first)
        _ = core.processStarted(messenger, launch: first.launch, pid: 100, at: start)
        _ = core.processExited(messenger, pid: 100, status: .signaled(11), at: start + .milliseconds(10))
        // The crash-loop delay is 1 s: a push 20 ms after the crash launches nothing.
        let soon = start + .milliseconds(30)
        var actions = core.pushArrived(push("p2", at: soon), at: soon)
        #expect(launches(actions).isEmpty)
        guard case .notDelivered(let why)? = outcome("p2", actions) else {
            Issue.record("p2 is not recorded not delivered: \(String(describing: outcome("p2", actions)))")
            return
        }
        #expect(why.contains("crashed in the background"))
        let later = start + .seconds(2)
        actions = core.pushArrived(push("p3", at: later), at: later)
        #expect(launches(actions).map(\.reason) == [.push])
        #expect(outcome("p3", actions) == nil, "its handler runs")
    }
}
