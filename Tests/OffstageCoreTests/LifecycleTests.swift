import OffstageCore
import OffstageSimulator
import Testing

@Suite("Lifecycle (SPEC LC)")
struct LifecycleTests {
    @Test("LC-2: a launch to the foreground calls did-finish-launching (user) then did-become-active")
    func foregroundLaunchOrder() throws {
        var sim = makeSimulation()
        try sim.openAndSettle(appA)
        #expect(sim.callbacks(of: appA) == ["didFinishLaunching", "didBecomeActive"])
        #expect(sim.trace(of: appA).first?.event == .launched(.user))
        #expect(sim.state(of: appA) == .active)
        #expect(sim.core.device.foregroundApp == appA)
    }

    @Test("LC-1: at most one app is in the foreground; opening another sends the first home")
    func oneForegroundApp() throws {
        var sim = makeSimulation()
        try sim.openAndSettle(appA)
        let start = sim.now
        try sim.openAndSettle(appB)
        #expect(sim.state(of: appB) == .active)
        #expect(sim.state(of: appA) == .background)
        #expect(sim.events(of: appA, since: start) == [.callback("willResignActive"), .callback("didEnterBackground")])
        let foreground = sim.core.apps.values.filter { $0.state.isForeground }
        #expect(foreground.count == 1)
    }

    @Test("LC-2, LC-4: home gives will-resign-active, did-enter-background, then suspension 1 s after it returns")
    func homeThenSuspended() throws {
        var sim = makeSimulation(a: AppBehavior().on("didEnterBackground", .takes(.milliseconds(300))))
        try sim.openAndSettle(appA)
        let start = sim.now
        sim.home()
        #expect(sim.state(of: appA) == .background)
        sim.run(for: .seconds(3))
        #expect(sim.events(of: appA, since: start) == [.callback("willResignActive"), .callback("didEnterBackground"), .frozen])
        // Suspended 1 s after did-enter-background returned (it took 0.3 s), not 1 s after home.
        let returned = try #require(sim.trace(of: appA).first { $0.event == .callbackReturned("didEnterBackground") })
        let frozen = try #require(sim.firstTime(of: .frozen, for: appA))
        #expect(approximately((frozen - returned.at).inSeconds, 1.0, within: 0.001))
        #expect(sim.state(of: appA) == .suspended)
        #expect(sim.core.nextDeadline == nil, "a suspended app leaves nothing to wake up for")
    }

    @Test("LC-2: leaving the foreground sends will-resign-active and did-enter-background together; frozen once both returned")
    func leavingPairGoesOutTogether() throws {
        var configuration = CoreConfiguration()
        configuration.suspendDelay = 0
        var sim = makeSimulation(
            configuration: configuration, a: AppBehavior().on("willResignActive", .takes(.milliseconds(300))))
        try sim.openAndSettle(appA)
        var core = sim.core
        let pid = try #require(core.apps[appA]?.process?.pid)
        let start = sim.now
        let actions = core.home(at: start)
        let delivered = actions.compactMap { action -> Callback? in
            if case .deliver(appA, pid, let callback) = action { return callback }
            return nil
        }
        // One round trip to the app, not two: both go out with the Home, in order.
        #expect(delivered.map(\.kind) == [.willResignActive, .didEnterBackground])
        #expect(delivered.first?.deadline == start + .seconds(double: configuration.callbackTimeout))
        #expect(delivered.last?.deadline
            == start + .seconds(double: configuration.callbackTimeout + configuration.didEnterBackgroundTimeout))
        #expect(!actions.contains { if case .freeze = $0 { true } else { false } })
        // The first answer alone does not freeze; the second does.
        let afterFirst = core.callbackCompleted(appA, pid: pid, callback: delivered[0].id, at: start + .milliseconds(300))
        #expect(!afterFirst.contains { if case .freeze = $0 { true } else { false } })
        #expect(core.apps[appA]?.process?.inFlight?.id == delivered[1].id)
        let afterSecond = core.callbackCompleted(appA, pid: pid, callback: delivered[1].id, at: start + .milliseconds(301))
        #expect(afterSecond.contains(.freeze(appA, pid: pid)))

        // In the simulation, where the app runs one handler at a time, did-enter-background starts when
        // will-resign-active returns, and the app is frozen right after it.
        sim.home()
        sim.run(for: .seconds(1))
        #expect(sim.events(of: appA, since: start) == [.callback("willResignActive"), .callback("didEnterBackground"), .frozen])
        let resignReturned = try #require(sim.trace(of: appA).first { $0.event == .callbackReturned("willResignActive") })
        #expect(approximately((resignReturned.at - start).inSeconds, 0.3, within: 0.001))
    }

    @Test("LC-2, LC-8: a reattach sends the pair again with the same ids; an answer to the second alone ends both")
    func leavingPairResentOnReattach() throws {
        var sim = makeSimulation()
        try sim.openAndSettle(appA)
        var core = sim.core
        let pid = try #require(core.apps[appA]?.process?.pid)
        let start = sim.now
        let sent = core.home(at: start).compactMap { action -> Callback? in
            if case .deliver(appA, pid, let callback) = action { return callback }
            return nil
        }
        #expect(sent.count == 2)
        _ = core.detached(appA, pid: pid, at: start + .milliseconds(1))
        let again = try core.attached(
            appA, pid: pid, report: AttachReport(launchCompleted: true, state: .active), at: start + .milliseconds(2)
        ).compactMap { action -> Callback? in
            if case .deliver(appA, pid, let callback) = action { return callback }
            return nil
        }
        #expect(again == sent)
        _ = core.callbackCompleted(appA, pid: pid, callback: sent[1].id, at: start + .milliseconds(3))
        #expect(core.apps[appA]?.process?.inFlight == nil)
        #expect(core.apps[appA]?.process?.sentBehind == nil)
    }

    @Test("LC-2: opening a suspended app thaws it, then will-enter-foreground and did-become-active")
    func reopenSuspended() throws {
        var sim = makeSimulation()
        try sim.openAndSettle(appA)
        sim.home()
        sim.run(for: .seconds(2))
        #expect(sim.state(of: appA) == .suspended)
        let start = sim.now
        try sim.openAndSettle(appA)
        #expect(sim.events(of: appA, since: start) == [.thawed, .callback("willEnterForeground"), .callback("didBecomeActive")])
        #expect(sim.state(of: appA) == .active)
    }

    @Test("LC-2 (S4): an interruption the user dismisses: will-resign-active, did-become-active, never background")
    func interruptionDismissed() throws {
        var sim = makeSimulation()
        try sim.openAndSettle(appA)
        let start = sim.now
        try sim.interrupt(nil)
        sim.run(for: .milliseconds(50))
        #expect(sim.state(of: appA) == .inactive)
        try sim.interrupt(.dismiss)
        sim.run(for: .seconds(3))
        #expect(sim.events(of: appA, since: start) == [.callback("willResignActive"), .callback("didBecomeActive")])
        #expect(sim.state(of: appA) == .active)
    }

    @Test("LC-2 (S4): an interruption the user accepts: will-resign-active, did-enter-background, then suspended")
    func interruptionAccepted() throws {
        var sim = makeSimulation()
        try sim.openAndSettle(appA)
        let start = sim.now
        try sim.interrupt(nil)
        sim.run(for: .milliseconds(50))
        try sim.interrupt(.accept)
        sim.run(for: .seconds(3))
        #expect(
            sim.events(of: appA, since: start) == [.callback("willResignActive"), .callback("didEnterBackground"), .frozen])
        #expect(sim.core.device.foregroundApp == nil)
    }

    @Test("LC-2: an interruption with a resolution but none in progress begins and ends it at once")
    func interruptionInOneStep() throws {
        var sim = makeSimulation()
        try sim.openAndSettle(appA)
        let start = sim.now
        try sim.interrupt(.dismiss)
        sim.run(for: .seconds(1))
        #expect(sim.events(of: appA, since: start) == [.callback("willResignActive"), .callback("didBecomeActive")])
    }

    @Test("LC-2: beginning an interruption twice is refused and changes nothing")
    func interruptionTwiceRefused() throws {
        var sim = makeSimulation()
        try sim.openAndSettle(appA)
        try sim.interrupt(nil)
        let device = sim.core.device
        #expect(throws: CoreError.self) { try sim.interrupt(nil) }
        #expect(sim.core.device == device)
    }

    @Test("LC-2: lock is as home; unlock returns to the app that was in front")
    func lockAndUnlock() throws {
        var sim = makeSimulation()
        try sim.openAndSettle(appA)
        let start = sim.now
        sim.lock()
        sim.run(for: .seconds(2))
        #expect(sim.state(of: appA) == .suspended)
        #expect(throws: CoreError.self) { try sim.open(appB) }
        sim.unlock()
        sim.run(for: .milliseconds(100))
        #expect(
            sim.events(of: appA, since: start) == [
                .callback("willResignActive"), .callback("didEnterBackground"), .frozen, .thawed,
                .callback("willEnterForeground"), .callback("didBecomeActive"),
            ])
        #expect(sim.state(of: appA) == .active)
    }

    @Test("LC-2: home at the home screen does nothing")
    func homeWithoutForegroundApp() {
        var sim = makeSimulation()
        sim.home()
        #expect(sim.trace.isEmpty)
    }

    @Test("LC-2: a quick open-then-home while suspended drops the pair that cancels out")
    func cancellingPairsAreDropped() throws {
        var sim = makeSimulation(a: AppBehavior().on("willEnterForeground", .takes(.milliseconds(200))))
        try sim.openAndSettle(appA)
        sim.home()
        sim.run(for: .seconds(2))
        let start = sim.now
        try sim.open(appA)
        sim.run(for: .milliseconds(50))  // will-enter-foreground is running; did-become-active is queued
        sim.home()
        sim.run(for: .seconds(3))
        #expect(
            sim.events(of: appA, since: start) == [
                .thawed, .callback("willEnterForeground"), .callback("didEnterBackground"), .frozen,
            ])
    }

    @Test("LC-2: uninstalling a running app calls will-terminate; the process exits and the app is forgotten")
    func uninstallRunningApp() throws {
        var sim = makeSimulation()
        try sim.openAndSettle(appA)
        let start = sim.now
        try sim.uninstall(appA)
        sim.run(for: .seconds(1))
        #expect(sim.events(of: appA, since: start) == [.callback("willTerminate"), .exited(.exited(0))])
        #expect(sim.core.apps[appA] == nil)
        #expect(sim.core.device.foregroundApp == nil)
    }

    @Test("LC-5: a suspended app that is terminated gets no callback")
    func suspendedAppGetsNoWillTerminate() throws {
        var sim = makeSimulation()
        try sim.openAndSettle(appA)
        sim.home()
        sim.run(for: .seconds(2))
        let start = sim.now
        try sim.uninstall(appA)
        sim.run(for: .seconds(1))
        #expect(sim.events(of: appA, since: start) == [.sigkill, .exited(.signaled(9))])
    }

    @Test("LC-5: shutdown sends will-terminate to running apps and kills suspended ones silently")
    func shutdownEndsEveryApp() throws {
        var sim = makeSimulation()
        try sim.openAndSettle(appA)
        sim.home()
        sim.run(for: .seconds(2))
        try sim.openAndSettle(appB)
        let start = sim.now
        sim.shutdown()
        sim.run(for: .seconds(1))
        #expect(sim.events(of: appA, since: start) == [.sigkill, .exited(.signaled(9))])
        #expect(sim.events(of: appB, since: start) == [.callback("willTerminate"), .exited(.exited(0))])
        #expect(sim.core.noProcessesLeft)
    }
}
