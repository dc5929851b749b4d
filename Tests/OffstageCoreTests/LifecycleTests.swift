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
