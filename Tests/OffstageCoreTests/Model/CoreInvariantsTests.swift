import OffstageCore
import Testing

/// Each invariant of the model-based tests, shown to fail on a state or an action made bad by hand: a check that can
/// never fail would let the random sessions pass by luck. The good state they start from is shown to pass.
@Suite("Model-based tests: every invariant catches a bad state")
struct CoreInvariantsTests {
    let app0 = ModelWorld.app(0)
    let app1 = ModelWorld.app(1)

    /// App 0 (scheduler) active in front as pid 1000, app 1 (plain) installed and not running.
    func good() throws -> ModelShell {
        let shell = ModelShell.replay(
            [
                .install(0, .scheduler), .install(1, .plain), .open(0), .spawn(0, .normal), .attach(0), .reply(0),
                .reply(0),
            ],
            enabled: Set(Invariant.allCases))
        try #require(shell.violation == nil)
        try #require(shell.core.apps[app0]?.state == .active && shell.processes[1000] != nil)
        return shell
    }

    func found(_ seen: ModelObservation) -> Set<Invariant> { Set(CoreInvariants.check(seen).map(\.0)) }

    func found(_ action: CoreAction, _ shell: ModelShell, _ seen: ModelObservation? = nil) -> Set<Invariant> {
        let seen = seen ?? shell.observation(firedTimer: false)
        return Set(CoreInvariants.check(action, seen, processes: seen.processes, exitedPids: shell.exitedPids).map(\.0))
    }

    @Test("the good state breaks nothing, and neither do the actions a shell sees in it")
    func goodStatePasses() throws {
        let shell = try good()
        #expect(found(shell.observation(firedTimer: false)).isEmpty)
        let callback = Callback(id: CallbackID(99), kind: .willResignActive, deadline: nil)
        #expect(found(.deliver(app0, pid: 1000, callback), shell).isEmpty)
        #expect(found(.launch(app1, LaunchPlan(launch: 50, reason: .refresh)), shell).isEmpty)
    }

    @Test("MEM-1: an app left out of the memory order, a band its state contradicts, a kept app before one that is not, the app in front not last")
    func memoryOrder() throws {
        let shell = try good()
        var seen = shell.observation(firedTimer: false)
        #expect(seen.memoryOrder.map(\.app) == [app0] && seen.memoryOrder.first?.band == .foreground)
        seen.memoryOrder = []
        #expect(found(seen).contains(.memoryOrder), "the running app is left out")
        seen = shell.observation(firedTimer: false)
        seen.memoryOrder[0].band = .suspended
        #expect(found(seen).contains(.memoryOrder), "an app in front said to be suspended")
        seen = shell.observation(firedTimer: false)
        seen.memoryOrder[0].keptInMemory = true
        #expect(found(seen).contains(.memoryOrder), "a setting the app does not have")
        let at = seen.now
        let standing = { (id: AppID, band: MemoryBand, kept: Bool, used: Int64) in
            MemoryStanding(app: id, band: band, keptInMemory: kept, lastUsed: at + .seconds(used))
        }
        let orders: [[MemoryStanding]] = [
            [standing(app0, .foreground, false, 0), standing(app1, .suspended, false, 0)],
            [standing(app1, .suspended, true, 0), standing(app0, .backgroundWork, false, 0)],
            [standing(app1, .backgroundUser, false, 0), standing(app0, .backgroundWork, false, 0)],
            [standing(app1, .suspended, false, 9), standing(app0, .suspended, false, 1)],
        ]
        for order in orders {
            var broken = shell.observation(firedTimer: false)
            broken.memoryOrder = order
            #expect(CoreInvariants.checkMemoryOrder(broken).contains { $0.1.contains("is ended before") }, "\(order.map(\.app))")
        }
    }

    @Test("LC-1: two apps in the foreground, or one that is not the device's")
    func oneForegroundApp() throws {
        var seen = try good().observation(firedTimer: false)
        var twin = try #require(seen.apps[app0]?.process)
        twin.pid = 1001
        seen.apps[app1]?.process = twin
        #expect(found(seen).contains(.oneForegroundApp))
        seen = try good().observation(firedTimer: false)
        seen.device.foregroundApp = nil
        #expect(found(seen).contains(.oneForegroundApp))
    }

    @Test("LC-4: a callback to a frozen or detached process; freezing one whose handler runs")
    func noCallbackToFrozenApp() throws {
        let shell = try good()
        var seen = shell.observation(firedTimer: false)
        let callback = Callback(id: CallbackID(99), kind: .willResignActive, deadline: nil)
        seen.processes[1000]?.frozen = true
        #expect(found(.deliver(app0, pid: 1000, callback), shell, seen).contains(.noCallbackToFrozenApp))
        seen.processes[1000]?.frozen = false
        seen.processes[1000]?.attached = false
        #expect(found(.deliver(app0, pid: 1000, callback), shell, seen).contains(.noCallbackToFrozenApp))
        seen = shell.observation(firedTimer: false)
        seen.processes[1000]?.outstanding = [callback]
        #expect(found(.freeze(app0, pid: 1000), shell, seen).contains(.noCallbackToFrozenApp))
        seen = shell.observation(firedTimer: false)
        seen.apps[app0]?.process?.frozen = true
        seen.apps[app0]?.process?.inFlight = callback
        #expect(found(seen).contains(.noCallbackToFrozenApp))
    }

    @Test("LC-2: a second callback while the first is unanswered (but for a leaving pair), or a repeat under a new id")
    func oneCallbackAtATime() throws {
        let shell = try good()
        var seen = shell.observation(firedTimer: false)
        let first = Callback(id: CallbackID(98), kind: .didEnterBackground, deadline: nil)
        seen.processes[1000]?.outstanding = [first]
        let repeated = Callback(id: CallbackID(99), kind: .didEnterBackground, deadline: nil)
        #expect(found(.deliver(app0, pid: 1000, repeated), shell, seen).contains(.oneCallbackAtATime))
        #expect(!found(.deliver(app0, pid: 1000, first), shell, seen).contains(.oneCallbackAtATime))
        // Only did-enter-background may go right behind will-resign-active, and only one callback behind it.
        let resign = Callback(id: CallbackID(97), kind: .willResignActive, deadline: nil)
        seen.processes[1000]?.outstanding = [resign]
        #expect(!found(.deliver(app0, pid: 1000, repeated), shell, seen).contains(.oneCallbackAtATime))
        let active = Callback(id: CallbackID(99), kind: .didBecomeActive, deadline: nil)
        #expect(found(.deliver(app0, pid: 1000, active), shell, seen).contains(.oneCallbackAtATime))
        seen.processes[1000]?.outstanding = [resign, repeated]
        let another = Callback(id: CallbackID(100), kind: .didEnterBackground, deadline: nil)
        #expect(found(.deliver(app0, pid: 1000, another), shell, seen).contains(.oneCallbackAtATime))
        #expect(!found(.deliver(app0, pid: 1000, repeated), shell, seen).contains(.oneCallbackAtATime))
    }

    @Test("LC-5: will-terminate to, or a thaw of, an app terminated while suspended")
    func noWillTerminateWhenSuspended() throws {
        let shell = try good()
        var seen = shell.observation(firedTimer: false)
        seen.processes[1000]?.terminatedWhileSuspended = true
        let callback = Callback(id: CallbackID(99), kind: .willTerminate, deadline: nil)
        #expect(found(.deliver(app0, pid: 1000, callback), shell, seen).contains(.noWillTerminateWhenSuspended))
        #expect(found(.thaw(app0, pid: 1000), shell, seen).contains(.noWillTerminateWhenSuspended))
    }

    @Test("BT-2, BT-4: tasks open past the budget, handlers not due, no budget, a frozen app with tasks")
    func backgroundTaskBudget() throws {
        let shell = try good()
        let now = shell.now
        func background(_ ledger: BackgroundTaskLedger) -> ModelObservation {
            var seen = shell.observation(firedTimer: false)
            seen.apps[app0]?.process?.phase = .background
            seen.apps[app0]?.process?.ledger = ledger
            seen.device.foregroundApp = nil
            return seen
        }
        var ledger = BackgroundTaskLedger(expirationWarning: .seconds(5))
        ledger.begin(BackgroundTaskID(7), name: "upload", at: now)
        #expect(found(background(ledger)).contains(.backgroundTaskBudget), "no budget")
        ledger.enterBackground(at: now - .seconds(31), budget: .seconds(30))
        #expect(found(background(ledger)).contains(.backgroundTaskBudget), "past the budget")
        ledger.enterBackground(at: now - .seconds(26), budget: .seconds(30))
        #expect(found(background(ledger)).contains(.backgroundTaskBudget), "handlers not due")
        _ = ledger.takeExpiring(at: now)
        #expect(!found(background(ledger)).contains(.backgroundTaskBudget), "handlers due, budget not over")
        var frozen = background(ledger)
        frozen.apps[app0]?.process?.frozen = true
        #expect(found(frozen).contains(.backgroundTaskBudget), "frozen with a task")
        var seen = shell.observation(firedTimer: false)
        seen.processes[1000]?.openTasks = [BackgroundTaskID(7)]
        #expect(found(.freeze(app0, pid: 1000), shell, seen).contains(.backgroundTaskBudget))
    }

    @Test("LC-6: a force-quit app that runs, or is launched into the background")
    func forceQuitNotLaunched() throws {
        let shell = try good()
        var seen = shell.observation(firedTimer: false)
        seen.apps[app0]?.durable.forceQuit = true
        #expect(found(seen).contains(.forceQuitNotLaunched))
        seen.apps[app1]?.durable.forceQuit = true
        #expect(
            found(.launch(app1, LaunchPlan(launch: 50, reason: .fetch)), shell, seen).contains(.forceQuitNotLaunched))
        #expect(
            !found(.launch(app1, LaunchPlan(launch: 50, reason: .user)), shell, seen).contains(.forceQuitNotLaunched))
    }

    @Test("LC-4: an app idle in the background for the suspension delay and not suspended")
    func idleAppSuspended() throws {
        var seen = try good().observation(firedTimer: false)
        seen.idleSince[1000] = seen.now - .milliseconds(999)
        #expect(!found(seen).contains(.idleAppSuspended))
        seen.idleSince[1000] = seen.now - .seconds(1)
        #expect(found(seen).contains(.idleAppSuspended))
    }

    @Test("LC-9: a background relaunch sooner than the growing delay after abnormal ends")
    func crashLoopThrottled() throws {
        let shell = try good()
        var seen = shell.observation(firedTimer: false)
        var streak = CrashStreak()
        for _ in 0..<3 { streak.record(seen.now - .milliseconds(3_999)) }
        seen.crashes[app1] = streak
        let relaunch = CoreAction.launch(app1, LaunchPlan(launch: 50, reason: .refresh))
        #expect(found(relaunch, shell, seen).contains(.crashLoopThrottled), "4 s after the third")
        seen.forcing = true
        #expect(!found(relaunch, shell, seen).contains(.crashLoopThrottled), "a debug run is exempt")
        seen.forcing = false
        seen.crashes[app1]?.lastEnd = seen.now - .seconds(4)
        #expect(!found(relaunch, shell, seen).contains(.crashLoopThrottled))
    }

    @Test("§11: a kept process deadline that is not the process's own")
    func deadlinesCurrent() throws {
        var seen = try good().observation(firedTimer: false)
        #expect(seen.staleDeadlines.isEmpty, "the good state keeps every deadline current")
        seen.staleDeadlines = [app0]
        #expect(found(seen).contains(.deadlinesCurrent))
    }

    @Test("the next deadline in the past, or a timer that does not move it")
    func deadlineNotInPast() throws {
        var seen = try good().observation(firedTimer: false)
        seen.nextDeadline = seen.now - .milliseconds(1)
        #expect(found(seen).contains(.deadlineNotInPast))
        seen.nextDeadline = seen.now
        #expect(!found(seen).contains(.deadlineNotInPast))
        seen.firedTimer = true
        #expect(found(seen).contains(.deadlineNotInPast))
    }

    @Test("LC-7: an exits-on-suspend app, or any app with multitasking off, in the background or launched into it")
    func exitsOnSuspend() throws {
        let shell = try good()
        var seen = shell.observation(firedTimer: false)
        seen.device.settings.multitaskingSupported = false
        #expect(found(.launch(app1, LaunchPlan(launch: 50, reason: .refresh)), shell, seen).contains(.exitsOnSuspend))
        seen.apps[app0]?.process?.phase = .suspended
        seen.device.foregroundApp = nil
        #expect(found(seen).contains(.exitsOnSuspend))
        // Being killed (force-quit, SIGKILL not yet reaped) is leaving, not staying in the background.
        let killed = ModelShell.replay(
            [.install(0, .scheduler), .open(0), .spawn(0, .ignoresSIGTERM), .forceQuit(0)], enabled: [])
        seen.apps[app0]?.process?.termination = try #require(killed.core.apps[app0]?.process?.termination)
        #expect(!found(seen).contains(.exitsOnSuspend))
    }

    @Test("MAN-3: an action to a pid that is not the app's live process; forgetting an app whose process lives")
    func ownProcessOnly() throws {
        let shell = try good()
        let callback = Callback(id: CallbackID(99), kind: .willResignActive, deadline: nil)
        #expect(found(.deliver(app1, pid: 1000, callback), shell).contains(.ownProcessOnly))
        #expect(found(.kill(app0, pid: 4242), shell).contains(.ownProcessOnly))
        #expect(found(.forget(app0, bundlePath: "/model/\(app0)"), shell).contains(.ownProcessOnly))
        #expect(found(.launch(app0, LaunchPlan(launch: 50, reason: .user)), shell).contains(.ownProcessOnly))
    }

    @Test("MODE-4, MODE-6: an accessory watched but not registered, or in a mode not declared; a launch for none")
    func accessoriesDeclared() throws {
        let shell = try good()
        var seen = shell.observation(firedTimer: false)
        let key = AccessoryKey(app: app0, name: ModelWorld.accessoryName)
        seen.accessoryWatches[key] = ModelWorld.accessoryPath(0)
        #expect(found(seen).contains(.accessoriesDeclared), "watched, not registered")
        let registration = AccessoryRegistration(
            name: ModelWorld.accessoryName, path: ModelWorld.accessoryPath(0), mode: .externalAccessory)
        seen.apps[app0]?.durable.accessories = [registration]
        #expect(found(seen).contains(.accessoriesDeclared), "registered in a mode the scheduler manifest lacks")
        seen.apps[app0]?.app.manifest.backgroundModes.insert(.externalAccessory)
        #expect(!found(seen).contains(.accessoriesDeclared))
        seen.accessoryWatches[key] = nil
        #expect(found(seen).contains(.accessoriesDeclared), "registered, not watched")
        let launch = CoreAction.launch(app1, LaunchPlan(launch: 50, reason: .accessory))
        #expect(found(launch, shell, seen).contains(.accessoriesDeclared))
    }

    @Test("§11: a live process the core no longer knows")
    func noLostProcess() throws {
        var seen = try good().observation(firedTimer: false)
        seen.apps[app0]?.process = nil
        seen.device.foregroundApp = nil
        #expect(found(seen).contains(.noLostProcess))
        seen = try good().observation(firedTimer: false)
        seen.pendingLaunches = [PendingLaunch(app: app1, launch: 50, reason: .refresh)]
        #expect(found(seen).contains(.noLostProcess))
    }

    /// The good state with app 0's request `n0` pending, due a minute after it was added.
    func withPendingNotification() throws -> ModelShell {
        let shell = ModelShell.replay(
            [
                .install(0, .scheduler), .install(1, .plain), .open(0), .spawn(0, .normal), .attach(0), .reply(0),
                .reply(0), .notify(0, index: 0, .after(ms: 60_000)),
            ],
            enabled: Set(Invariant.allCases))
        try #require(shell.violation == nil)
        try #require(shell.core.notifications.pending(of: app0).count == 1)
        return shell
    }

    @Test("NT-2: a key fired twice, or a firing of a request that is not pending with that due time")
    func notificationFiredOnce() throws {
        let shell = try withPendingNotification()
        var seen = shell.observation(firedTimer: false)
        #expect(found(seen).isEmpty)
        let row = try #require(shell.core.notifications.pending(of: app0).first)
        let key = DeliveryKey(app: app0, identifier: row.identifier, due: row.due)
        let record = DeliveredNotification(
            app: app0, request: row.request, due: row.due, deliveredAt: row.due, late: false, route: .user)
        let fire = CoreAction.notification(.fire(key, delivery: record, next: nil))
        #expect(found(fire, shell, seen).isEmpty, "the pending row, fired once")
        seen.firedNotifications = [key]
        #expect(found(fire, shell, seen).contains(.notificationFiredOnce))
        seen.firedNotifications = []
        var early = key
        early.due = row.due - .seconds(1)
        let unknown = CoreAction.notification(.fire(early, delivery: nil, next: nil))
        #expect(found(unknown, shell, seen).contains(.notificationFiredOnce))
    }

    @Test("NT-2: a store that differs from the core's state, or an action the store cannot take")
    func notificationsStored() throws {
        let shell = try withPendingNotification()
        var seen = shell.observation(firedTimer: false)
        seen.notificationStore.pending = [:]
        #expect(found(seen).contains(.notificationsStored), "the core holds a row the store lost")
        seen = shell.observation(firedTimer: false)
        seen.notificationStore.badges[app1] = 3
        #expect(found(seen).contains(.notificationsStored))
        let row = try #require(shell.core.notifications.pending(of: app0).first)
        let record = DeliveredNotification(
            app: app0, request: row.request, due: row.due, deliveredAt: row.due, late: false, route: .user)
        #expect(found(.notification(.updateDelivery(record)), shell).contains(.notificationsStored), "no such record")
    }

    @Test("NT-2: a pending notification overdue, or a next deadline later than the next due one")
    func notificationDeadline() throws {
        let shell = try withPendingNotification()
        var seen = shell.observation(firedTimer: false)
        let due = try #require(shell.core.notifications.pending(of: app0).first?.due)
        #expect(try #require(seen.nextDeadline) <= due)
        seen.nextDeadline = due + .milliseconds(1)
        #expect(found(seen).contains(.notificationDeadline))
        seen.nextDeadline = nil
        #expect(found(seen).contains(.notificationDeadline))
        seen = shell.observation(firedTimer: false)
        seen.now = due + .milliseconds(1)
        #expect(found(seen).contains(.notificationDeadline), "overdue and not fired")
    }

    @Test("SET-2: an app in front blocked, a restricted app in the background allowed, a rule left for an uninstalled app")
    func networkRulesCurrent() throws {
        var seen = try good().observation(firedTimer: false)
        seen.apps[app0]?.app.settings.backgroundActivity = false
        #expect(found(seen).isEmpty, "app 0 is in front: it keeps its traffic")
        seen.networkRules[app0] = .backgroundActivityOff
        #expect(found(seen).contains(.networkRulesCurrent), "an app in front is never blocked")
        seen = try good().observation(firedTimer: false)
        seen.apps[app1]?.app.settings.backgroundData = false
        #expect(found(seen).isEmpty, "not metered: background data off restricts nothing")
        seen.device.overrides.network = .metered
        // What the usage actions would have said of the new network: the check here is of the rules.
        for id in seen.usageContexts.keys { seen.usageContexts[id]?.metered = true }
        #expect(found(seen).contains(.networkRulesCurrent), "metered with background data off: app 1 must be blocked")
        seen.networkRules[app1] = .backgroundDataOff
        #expect(found(seen).isEmpty)
        seen.networkRules[app1] = .dataSaver
        #expect(found(seen).contains(.networkRulesCurrent), "blocked, but for the wrong reason")
        seen = try good().observation(firedTimer: false)
        seen.networkRules[ModelWorld.app(3)] = .dataSaver
        #expect(found(seen).contains(.networkRulesCurrent), "a rule for an app not installed")
    }

    @Test("SET-3: a use counted as background while the app is in front, none for a process, one left after it, a stale day")
    func usageContextsCurrent() throws {
        var seen = try good().observation(firedTimer: false)
        let front = try #require(seen.usageContexts[app0])
        #expect(front.foreground && !front.backgroundRunning)
        seen.usageContexts[app0]?.foreground = false
        #expect(found(seen).contains(.usageContextsCurrent), "app 0 is in front")
        seen = try good().observation(firedTimer: false)
        seen.usageContexts[app0] = nil
        #expect(found(seen).contains(.usageContextsCurrent), "app 0 has a process whose use must be counted")
        seen = try good().observation(firedTimer: false)
        seen.usageContexts[app1] = front
        #expect(found(seen).contains(.usageContextsCurrent), "app 1 has no process")
        seen = try good().observation(firedTimer: false)
        seen.usageContexts[app0]?.day -= 1
        #expect(found(seen).contains(.usageContextsCurrent), "a running app counts for today")
        seen = try good().observation(firedTimer: false)
        seen.device.overrides.network = .metered
        #expect(found(seen).contains(.usageContextsCurrent), "the network became metered")
    }
}
