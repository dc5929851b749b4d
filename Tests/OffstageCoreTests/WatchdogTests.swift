import OffstageCore
import OffstageSimulator
import Testing

@Suite("Watchdogs and termination (SPEC LC-3, LC-6, LC-7, LC-9)")
struct WatchdogTests {
    @Test("LC-3: an app that never finishes launching is terminated at 20 s with the reason recorded")
    func launchWatchdog() throws {
        var sim = makeSimulation(a: AppBehavior().on("didFinishLaunching", .hang))
        try sim.open(appA)
        sim.run(for: .seconds(30))
        let launched = try #require(sim.firstTime(of: .launched(.user), for: appA))
        #expect(approximately(sim.seconds(from: launched, to: .sigterm, of: appA), 20, within: 0.001))
        #expect(sim.state(of: appA) == .notRunning)
        let record = try #require(sim.core.apps[appA]?.durable.lastTermination)
        #expect(record.reason == .launchTimeout(seconds: 20))
        #expect(sim.logLines(of: appA, .watchdog).contains { $0.contains("did-finish-launching did not return within 20 s") })
        // The log entry's kind says "watchdog" once; the record's summary, shown alone, says it itself.
        #expect(sim.logLines(of: appA, .watchdog).allSatisfy { !$0.hasPrefix("watchdog") })
        #expect(record.summary.hasPrefix("watchdog: did-finish-launching did not return within 20 s"))
    }

    @Test("LC-3: a hung did-enter-background is terminated at 5 s; SIGKILL follows if SIGTERM is ignored")
    func didEnterBackgroundWatchdog() throws {
        var sim = makeSimulation(
            a: AppBehavior().on("didEnterBackground", .hang).with(\.ignoresSIGTERM, true))
        try sim.openAndSettle(appA)
        let start = sim.now
        sim.home()
        sim.run(for: .seconds(10))
        #expect(approximately(sim.seconds(from: start, to: .sigterm, of: appA), 5, within: 0.01))
        #expect(approximately(sim.seconds(from: start, to: .sigkill, of: appA), 7, within: 0.01))
        #expect(sim.core.apps[appA]?.durable.lastTermination?.reason
            == .callbackTimeout(callback: "did-enter-background", seconds: 5))
        #expect(sim.core.apps[appA]?.durable.lastTermination?.status == .signaled(9))
    }

    @Test("LC-3: did-enter-background sent behind a slow will-resign-active gets its full 5 s from that one's return")
    func pipelinedWatchdogCountsFromTheReturnAhead() throws {
        var sim = makeSimulation(
            a: AppBehavior().on("willResignActive", .takes(.seconds(3))).on("didEnterBackground", .hang))
        try sim.openAndSettle(appA)
        let start = sim.now
        sim.home()
        sim.run(for: .seconds(12))
        #expect(approximately(sim.seconds(from: start, to: .sigterm, of: appA), 8, within: 0.01))
        #expect(sim.core.apps[appA]?.durable.lastTermination?.reason
            == .callbackTimeout(callback: "did-enter-background", seconds: 5))
    }

    @Test("LC-3: a hung will-resign-active is terminated at its own limit, with did-enter-background still waiting")
    func hungResignWithPairBehind() throws {
        var sim = makeSimulation(a: AppBehavior().on("willResignActive", .hang))
        try sim.openAndSettle(appA)
        let start = sim.now
        sim.home()
        sim.run(for: .seconds(12))
        let limit = CoreConfiguration().callbackTimeout
        #expect(approximately(sim.seconds(from: start, to: .sigterm, of: appA), limit, within: 0.01))
        #expect(sim.core.apps[appA]?.durable.lastTermination?.reason
            == .callbackTimeout(callback: "will-resign-active", seconds: limit))
        #expect(!sim.events(of: appA, since: start).contains(.callback("didEnterBackground")), "the app never got past the first")
    }

    @Test("LC-6: force-quit kills at once in any state and blocks background launches until opened")
    func forceQuit() throws {
        var sim = makeSimulation()
        try sim.openAndSettle(appA)
        let start = sim.now
        try sim.forceQuit(appA)
        #expect(sim.events(of: appA, since: start) == [.sigkill, .exited(.signaled(9))])
        #expect(sim.core.apps[appA]?.durable.forceQuit == true)
        #expect(sim.core.device.foregroundApp == nil)
        try sim.openAndSettle(appA)
        #expect(sim.core.apps[appA]?.durable.forceQuit == false)
        #expect(sim.state(of: appA) == .active)
    }

    @Test("LC-6: force-quit of a suspended app kills it without a callback")
    func forceQuitSuspended() throws {
        var sim = makeSimulation()
        try sim.openAndSettle(appA)
        sim.home()
        sim.run(for: .seconds(2))
        let start = sim.now
        try sim.forceQuit(appA)
        #expect(sim.events(of: appA, since: start) == [.sigkill, .exited(.signaled(9))])
    }

    @Test("LC-6: force-quit of an unknown app is refused and changes nothing")
    func forceQuitUnknown() {
        var sim = makeSimulation()
        let before = sim.core.apps
        #expect(throws: CoreError.self) { try sim.forceQuit("com.example.missing") }
        #expect(sim.core.apps == before)
    }

    @Test("LC-7 (S5): an app that exits on suspend gets will-resign-active and will-terminate, never background")
    func exitsOnSuspend() throws {
        var sim = Simulation()
        sim.install(manifest(appA, exitsOnSuspend: true))
        try sim.openAndSettle(appA)
        let start = sim.now
        sim.home()
        sim.run(for: .seconds(6))
        #expect(
            sim.events(of: appA, since: start) == [
                .callback("willResignActive"), .callback("willTerminate"), .exited(.exited(0)),
            ])
        #expect(sim.core.apps[appA]?.durable.lastTermination?.reason == .exitsOnSuspend)
        let reopen = sim.now
        try sim.openAndSettle(appA)
        #expect(
            sim.events(of: appA, since: reopen) == [
                .launched(.user), .callback("didFinishLaunching"), .callback("didBecomeActive"),
            ])
    }

    @Test("LC-7 (S5): an exits-on-suspend app that does not exit is killed at 5 s with the reason recorded")
    func exitsOnSuspendKilledAtFiveSeconds() throws {
        var sim = Simulation()
        sim.install(manifest(appA, exitsOnSuspend: true), behavior: AppBehavior().on("willTerminate", .hang))
        try sim.openAndSettle(appA)
        let start = sim.now
        sim.home()
        sim.run(for: .seconds(10))
        #expect(approximately(sim.seconds(from: start, to: .sigterm, of: appA), 5, within: 0.01))
        #expect(sim.state(of: appA) == .notRunning)
        #expect(sim.core.apps[appA]?.durable.lastTermination?.reason == .exitsOnSuspend)
        #expect(sim.logLines(of: appA, .watchdog).contains { $0.contains("did not exit within 5 s") })
    }

    @Test("LC-7: with multitasking not supported every app exits on suspend")
    func multitaskingNotSupported() throws {
        var sim = makeSimulation()
        var settings = DeviceSettings()
        settings.multitaskingSupported = false
        sim.setDeviceSettings(settings)
        try sim.openAndSettle(appA)
        let start = sim.now
        sim.home()
        sim.run(for: .seconds(2))
        #expect(
            sim.events(of: appA, since: start) == [
                .callback("willResignActive"), .callback("willTerminate"), .exited(.exited(0)),
            ])
    }

    @Test("LC-9: each crash of a background launch doubles the delay before the next, up to the maximum")
    func crashLoopBackoff() {
        var loop = CrashLoop()
        let start = Instant(secondsSinceEpoch: 1000)
        var delays: [Double] = []
        for _ in 0..<12 {
            loop.recordCrash(at: start, initial: 1, maximum: 300)
            delays.append((loop.notBefore! - start).inSeconds)
        }
        #expect(delays == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300])
        loop.reset()
        #expect(loop.notBefore == nil && loop.consecutiveCrashes == 0)
    }

    @Test("LC-9: a background launch killed by the launch watchdog is relaunched with growing delays, not at once")
    func hungLaunchesThrottled() throws {
        // The app never attaches, so every background launch for its refresh is killed at 20 s (LC-3).
        var sim = Simulation()
        let hangs = AppBehavior().with(\.attachDelay, .seconds(86_400))
        sim.install(schedulingManifest(refreshApp), behavior: hangs, pending: [refreshSubmission])
        sim.run(for: .seconds(300))
        let launches = sim.trace(of: refreshApp).filter { $0.event == .launched(.refresh) }.map(\.at)
        let exits = sim.trace(of: refreshApp).filter { if case .exited = $0.event { true } else { false } }.map(\.at)
        let waits = zip(exits, launches.dropFirst()).map { ($1 - $0).inSeconds }
        #expect(waits.count >= 4)
        #expect(Array(waits.prefix(4)) == [1, 2, 4, 8], "seconds from each kill to the next launch")
        #expect(sim.core.apps[refreshApp]?.durable.crashLoop.consecutiveCrashes == exits.count)
    }

    @Test("LC-8: a process started by hand attaches and is launched into the foreground like any other")
    func startedByHand() throws {
        var core = OffstageCore()
        let now = Instant(secondsSinceEpoch: 100)
        _ = try core.install(InstalledApp(manifest: manifest(appA), bundlePath: "/x", installedAt: now), at: now)
        let actions = try core.attached(appA, pid: 4242, report: .fresh, at: now)
        #expect(actions.contains { if case .deliver(appA, 4242, let c) = $0 { c.kind == .didFinishLaunching(.user) } else { false } })
        #expect(core.device.foregroundApp == appA)
        #expect(core.status(of: appA, at: now)?.pid == 4242)
        // A second process claiming the same app is refused and changes nothing.
        let before = core.apps
        #expect(throws: CoreError.self) { try core.attached(appA, pid: 5555, report: .fresh, at: now) }
        #expect(core.apps == before)
    }

    @Test("LC-8: after a daemon restart a live app is thawed, reattaches with its open tasks, and is suspended when idle")
    func adoptedAppReattaches() throws {
        var core = OffstageCore(numberSeed: 1)
        let now = Instant(secondsSinceEpoch: 100)
        core.restore(InstalledApp(manifest: manifest(appA), bundlePath: "/x", installedAt: now), durable: .init())
        let adopted = core.adopt(appA, pid: 777, at: now)
        #expect(adopted.contains(.thaw(appA, pid: 777)))
        let report = AttachReport(
            launchCompleted: true, state: .background, openTasks: [.init(id: BackgroundTaskID(41), name: "upload")])
        _ = try core.attached(appA, pid: 777, report: report, at: now)
        #expect(core.status(of: appA, at: now)?.backgroundTasks == 1)
        #expect(core.status(of: appA, at: now)?.state == .background)
        let ended = try core.endBackgroundTask(appA, pid: 777, task: BackgroundTaskID(41), at: now)
        #expect(ended.0)
        let deadline = try #require(core.nextDeadline)
        #expect(approximately((deadline - now).inSeconds, 1))
        let actions = core.advance(to: deadline)
        #expect(actions.contains(.freeze(appA, pid: 777)))
        // New task numbers never collide with the ones the app reported.
        let late = now + .seconds(5)
        _ = try core.open(appA, at: late)
        let (task, _) = try core.beginBackgroundTask(appA, pid: 777, name: "next", at: late)
        #expect(task.rawValue > 41)
    }

    @Test("LC-8: an adopted app that never reattaches is terminated with the reason recorded")
    func adoptedAppMustReattach() throws {
        var core = OffstageCore()
        let now = Instant(secondsSinceEpoch: 100)
        core.restore(InstalledApp(manifest: manifest(appA), bundlePath: "/x", installedAt: now), durable: .init())
        _ = core.adopt(appA, pid: 777, at: now)
        let deadline = try #require(core.nextDeadline)
        #expect(approximately((deadline - now).inSeconds, 20))
        #expect(core.advance(to: deadline).contains(.terminate(appA, pid: 777)))
    }

    @Test("LC-2, LC-8: a callback in flight when the callback stream closes is sent again with the same id, so it runs once")
    func callbackSentAgainKeepsItsID() throws {
        var (core, now, launching) = try launchedAndAttached()
        _ = core.detached(appA, pid: 42, at: now)
        now = now + .milliseconds(50)
        let again = try core.attached(appA, pid: 42, report: .fresh, at: now)
        // The SDK drops a repeated id; under a new id it would run did-finish-launching a second time.
        #expect(delivered(again) == [launching])
        let next = core.callbackCompleted(appA, pid: 42, callback: launching.id, at: now)
        #expect(delivered(next).map(\.kind) == [.didBecomeActive])
    }

    @Test("LC-2, LC-8: an answer that arrives while the callback stream is closed completes the callback")
    func answerWhileDetachedCounts() throws {
        var (core, now, launching) = try launchedAndAttached()
        _ = core.detached(appA, pid: 42, at: now)
        // The answer travels on the app's request connection, which did not close.
        _ = core.callbackCompleted(appA, pid: 42, callback: launching.id, at: now)
        now = now + .milliseconds(50)
        let next = try core.attached(appA, pid: 42, report: AttachReport(launchCompleted: true, state: .inactive), at: now)
        #expect(delivered(next).map(\.kind) == [.didBecomeActive])
        #expect(core.apps[appA]?.process?.launchCompleted == true)
    }

    /// App A opened, started as pid 42 and attached: did-finish-launching is in flight.
    private func launchedAndAttached() throws -> (OffstageCore, Instant, Callback) {
        var core = OffstageCore()
        let now = Instant(secondsSinceEpoch: 100)
        _ = try core.install(InstalledApp(manifest: manifest(appA), bundlePath: "/x", installedAt: now), at: now)
        let opened = try core.open(appA, at: now)
        let plan = try #require(opened.compactMap { if case .launch(appA, let plan) = $0 { plan } else { nil } }.first)
        _ = core.processStarted(appA, launch: plan.launch, pid: 42, at: now)
        let first = try core.attached(appA, pid: 42, report: .fresh, at: now)
        let launching = try #require(delivered(first).first)
        #expect(launching.kind == .didFinishLaunching(.user))
        return (core, now, launching)
    }

    private func delivered(_ actions: [CoreAction]) -> [Callback] {
        actions.compactMap { if case .deliver(appA, 42, let callback) = $0 { callback } else { nil } }
    }
}
