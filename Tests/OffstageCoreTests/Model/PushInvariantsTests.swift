import OffstageCore
import Testing

/// Each push invariant of the model-based tests, shown to fail on a state or an action made bad by hand (SPEC NT-4,
/// NT-5): a check that can never fail would let the random sessions pass by luck.
@Suite("Model-based tests: every push invariant catches a bad state")
struct PushInvariantsTests {
    let app0 = ModelWorld.app(0)

    /// App 0 (messenger) launched into the background for push `p1`, whose handler it was handed and runs.
    func handling() throws -> ModelShell {
        let shell = ModelShell.replay(
            [.install(0, .messenger), .push(0, .init(.background)), .spawn(0, .normal), .attach(0), .reply(0)],
            enabled: Set(Invariant.allCases))
        try #require(shell.violation == nil)
        try #require(shell.core.apps[app0]?.process?.pushRuns.map(\.push) == ["p1"])
        try #require(shell.pushes.handed["p1"] != nil)
        return shell
    }

    func found(_ seen: ModelObservation) -> Set<Invariant> { Set(CoreInvariants.check(seen).map(\.0)) }

    func found(_ action: CoreAction, _ shell: ModelShell, _ seen: ModelObservation) -> Set<Invariant> {
        Set(CoreInvariants.check(action, seen, processes: seen.processes, exitedPids: shell.exitedPids).map(\.0))
    }

    @Test("the good state breaks nothing")
    func goodStatePasses() throws {
        #expect(found(try handling().observation(firedTimer: false)).isEmpty)
    }

    @Test("NT-4: a push lost without a record, running and finished at once, or finished twice")
    func pushAccountedFor() throws {
        let shell = try handling()
        var seen = shell.observation(firedTimer: false)
        seen.apps[app0]?.process?.pushRuns = []
        #expect(found(seen).contains(.pushAccountedFor), "lost")
        seen = shell.observation(firedTimer: false)
        seen.pushStore.rows["p1"]?.state = .done(.expired)
        #expect(found(seen).contains(.pushAccountedFor), "running and finished")
        let finish = CoreAction.push(.finish(id: "p1", app: app0, .handled(.newData)))
        #expect(found(finish, shell, shell.observation(firedTimer: false)).isEmpty)
        #expect(found(finish, shell, seen).contains(.pushAccountedFor), "finished twice")
    }

    @Test("NT-4, NT-5: a push of expiration 0 held, two held for one app, one held though the budget has a wake")
    func pushHeld() throws {
        let shell = try handling()
        var seen = shell.observation(firedTimer: false)
        var once = try #require(seen.pushStore.rows["p1"]?.push)
        once.id = "p9"
        once.attemptOnce = true
        once = seen.pushStore.accept(once)
        #expect(found(.push(.hold(once)), shell, seen).contains(.pushHeld))
        var older = once
        older.id = "p8"
        seen.pushStore.rows["p8"] = ModelPushRow(push: older, order: 8, state: .held)
        seen.pushStore.rows["p9"]?.state = .held
        #expect(found(seen).contains(.pushHeld), "two held for one app in the store")
        // Four pushes at once: the fourth is held; an hour later, had it not been released, the budget has wakes.
        let burst = ModelShell.replay(
            [.install(0, .messenger)] + Array(repeating: .push(0, .init(.background)), count: 4),
            enabled: Set(Invariant.allCases))
        try #require(burst.violation == nil && burst.core.pushes.held[app0]?.id == "p4")
        seen = burst.observation(firedTimer: false)
        #expect(found(seen).isEmpty)
        seen.now = seen.now + .seconds(3_600)
        #expect(found(seen).contains(.pushHeld))
    }

    @Test("NT-4, NT-5, LC-6: a handler started after the push expired, a push handed twice or to a force-quit app")
    func pushDeliveredByTheRules() throws {
        let shell = try handling()
        var seen = shell.observation(firedTimer: false)
        let run = try #require(shell.core.apps[app0]?.process?.pushRuns.first)
        #expect(CoreInvariants.checkPushRunStarted(app0, run, seen).isEmpty)
        seen.pushStore.rows["p1"]?.push.expiresAt = run.startedAt
        #expect(CoreInvariants.checkPushRunStarted(app0, run, seen).map(\.0).contains(.pushDeliveredByTheRules))
        seen = shell.observation(firedTimer: false)
        let again = Callback(
            id: CallbackID(99), kind: .remoteNotification(RemoteNotificationCall(run: run.id + 1, push: "p1", payload: "{}")),
            deadline: nil)
        #expect(found(.deliver(app0, pid: 1000, again), shell, seen).contains(.pushDeliveredByTheRules), "twice")
        let first = Callback(
            id: CallbackID(98), kind: .remoteNotification(RemoteNotificationCall(run: run.id, push: "p1", payload: "{}")),
            deadline: nil)
        seen.apps[app0]?.durable.forceQuit = true
        #expect(found(.deliver(app0, pid: 1000, first), shell, seen).contains(.pushDeliveredByTheRules), "force-quit")
    }

    @Test("NT-4: a handler past its deadline with the app not being terminated, or past the grace")
    func pushHandlerDeadline() throws {
        let shell = try handling()
        var seen = shell.observation(firedTimer: false)
        let run = try #require(shell.core.apps[app0]?.process?.pushRuns.first)
        seen.now = run.deadline
        #expect(found(seen).contains(.pushHandlerDeadline))
        seen.now = run.deadline - .milliseconds(1)
        seen.apps[app0]?.process?.frozen = true
        #expect(found(seen).contains(.pushHandlerDeadline), "suspended while its handler runs")
    }

    @Test("NT-4: more wakes in a window than the burst and the refill allow")
    func pushBudget() {
        let limits = PushBudget.Limits(perHour: 3, burst: 3)
        let start = ModelWorld.start
        #expect(CoreInvariants.budgetExceeded([start, start, start], limits) == nil)
        #expect(CoreInvariants.budgetExceeded([start, start, start, start + .seconds(1_200)], limits) == nil)
        #expect(CoreInvariants.budgetExceeded([start, start, start, start + .seconds(1_199)], limits) != nil)
        #expect(CoreInvariants.budgetExceeded([start, start, start, start], limits) != nil)
    }
}
