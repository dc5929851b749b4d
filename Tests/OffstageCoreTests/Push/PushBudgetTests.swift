import OffstageCore
import OffstageSimulator
import Testing

/// Background pushes over an app's budget are held and coalesced, never lost without a record, and delivered when
/// the budget returns; expired ones are dropped with a record (SPEC NT-4, NT-5).
@Suite("Push budgets, holding, coalescing and expiry (SPEC NT-4, NT-5)")
struct PushBudgetTests {
    /// Three wakes in a row, one more every 20 minutes.
    static var configuration: CoreConfiguration {
        var configuration = CoreConfiguration()
        configuration.backgroundPushBurst = 3
        configuration.backgroundPushesPerHour = 3
        return configuration
    }

    @Test("NT-4: over budget a background push is held; a newer one replaces it (the older recorded as coalesced into it); the held one is delivered when the budget returns")
    func heldAndCoalesced() throws {
        var sim = Simulation.withMessenger(configuration: Self.configuration)
        try sim.suspend(messenger)
        let ids = ["p1", "p2", "p3", "p4", "p5"]
        for id in ids {
            sim.receivePush(push(id, at: sim.now))
            sim.run(for: .seconds(1))
        }
        #expect(sim.handledPushes[messenger] == ["p1", "p2", "p3"])
        #expect(sim.outcomes(ids) == ["handled: newData", "handled: newData", "handled: newData", "coalesced: p5", nil])
        #expect(Array(sim.heldPushes.keys) == ["p5"])
        #expect(sim.core.pushes.held[messenger]?.id == "p5")
        #expect(sim.logLines(of: messenger, .push).contains { $0.contains("p5 held") })
        // A third of an hour after the first wake, one wake has come back (the bucket refills continuously).
        sim.run(for: .seconds(20 * 60 - 5 - 1))
        #expect(sim.handledPushes[messenger] == ["p1", "p2", "p3"], "not before the budget returns")
        sim.run(for: .seconds(5))
        #expect(sim.handledPushes[messenger] == ["p1", "p2", "p3", "p5"])
        #expect(sim.outcomes(["p5"]) == ["handled: newData"])
        #expect(sim.heldPushes.isEmpty && sim.core.pushes.held.isEmpty)
        #expect(sim.core.nextDeadline == nil || sim.core.nextDeadline! > sim.now, "nothing left due")
    }

    @Test("NT-5: over budget a push with expiration 0 (deliver now or never) is dropped with a record, not held, and a held push stays held")
    func attemptOnceOverBudgetIsDropped() throws {
        var configuration = Self.configuration
        configuration.backgroundPushBurst = 1
        var sim = Simulation.withMessenger(configuration: configuration)
        try sim.suspend(messenger)
        var first = push("p1", at: sim.now)
        first.attemptOnce = true
        sim.receivePush(first)
        sim.run(for: .seconds(1))
        #expect(sim.handledPushes[messenger] == ["p1"], "within budget it is delivered at once")
        sim.receivePush(push("p2", at: sim.now))
        var once = push("p3", at: sim.now)
        once.attemptOnce = true
        sim.receivePush(once)
        sim.run(for: .seconds(1))
        #expect(sim.pushOutcomes["p3"] == .notDelivered("it has expiration 0 (deliver now or never) and the app's budget of wakes is spent"))
        #expect(Array(sim.heldPushes.keys) == ["p2"], "the held push is not replaced by one that is never held")
        sim.run(for: .seconds(20 * 60))
        #expect(sim.handledPushes[messenger] == ["p1", "p2"])
    }

    @Test("NT-5: a push whose expiration has passed when it arrives is dropped with a record, and nothing runs")
    func expiredOnArrival() {
        var sim = Simulation.withMessenger()
        let start = sim.now
        sim.run(for: .seconds(10))
        sim.receivePush(push("p1", at: sim.now, expiresAt: start))
        sim.run(for: .seconds(1))
        #expect(sim.pushOutcomes["p1"] == .expired)
        #expect(sim.trace(of: messenger).isEmpty)
    }

    @Test("NT-5: a held push that expires before the budget returns is dropped at its expiration, with a record")
    func heldThenExpired() throws {
        var configuration = Self.configuration
        configuration.backgroundPushBurst = 1
        var sim = Simulation.withMessenger(configuration: configuration)
        try sim.suspend(messenger)
        sim.receivePush(push("p1", at: sim.now))
        sim.run(for: .seconds(1))
        let expiry = sim.now + .seconds(60)
        sim.receivePush(push("p2", at: sim.now, expiresAt: expiry))
        #expect(sim.heldPushes.keys.contains("p2"))
        sim.run(for: .seconds(59))
        #expect(sim.pushOutcomes["p2"] == nil)
        sim.run(for: .seconds(2))
        #expect(sim.pushOutcomes["p2"] == .expired)
        #expect(sim.heldPushes.isEmpty)
        #expect(sim.handledPushes[messenger] == ["p1"])
    }

    @Test("NT-4: uninstalling an app finishes its held push with a record")
    func uninstallFinishesHeld() throws {
        var configuration = Self.configuration
        configuration.backgroundPushBurst = 0
        var sim = Simulation.withMessenger(configuration: configuration)
        sim.receivePush(push("p1", at: sim.now))
        #expect(sim.heldPushes.keys.contains("p1"))
        try sim.uninstall(messenger)
        sim.run(for: .seconds(1))
        #expect(sim.pushOutcomes["p1"] == .notDelivered("'\(messenger)' was uninstalled"))
        #expect(sim.core.pushes.held.isEmpty)
    }

    @Test("NT-4: held pushes put back after a restart are delivered (with a full budget); one of an app no longer installed is finished")
    func restoredAfterRestart() {
        var sim = Simulation.withMessenger()
        let held = [push("p1", at: sim.now), push("p2", at: sim.now + .seconds(1)), push("p3", to: "com.example.gone", at: sim.now)]
        let actions = sim.restoreHeldPushes(held)
        #expect(actions == [
            .push(.finish(id: "p3", app: "com.example.gone", .notDelivered("'com.example.gone' is no longer installed"))),
            .push(.finish(id: "p1", app: messenger, .coalesced(into: "p2"))),
        ])
        #expect(sim.core.pushes.held[messenger]?.id == "p2")
        sim.run(for: .seconds(5))
        #expect(sim.handledPushes[messenger] == ["p2"])
    }

    @Test("NT-4: the budget bucket refills continuously up to its burst and says when it next holds a wake")
    func bucketArithmetic() {
        let limits = PushBudget.Limits(perHour: 6, burst: 2)
        let start = Instant(secondsSinceEpoch: 1_000)
        var budget = PushBudget(full: limits, at: start)
        #expect(budget.wakes(at: start, limits) == 2)
        let first = budget.take(at: start, limits)
        let second = budget.take(at: start, limits)
        let third = budget.take(at: start, limits)
        #expect(first && second)
        #expect(!third, "the burst is spent")
        #expect(budget.nextWake(after: start, limits) == start + .seconds(600))
        #expect(budget.wakes(at: start + .seconds(599), limits) == 0)
        #expect(budget.wakes(at: start + .seconds(600), limits) == 1)
        #expect(budget.wakes(at: start + .seconds(100_000), limits) == 2, "never past the burst")
    }

    @Test("NT-4: at the instant the budget's next wake is due the bucket holds it, so the held push's timer finds it and does not fire again and again (found by the model-based tests)")
    func nextWakeHoldsAWholeWake() throws {
        // Three wakes, the last 44 ms after the others: the refill at the rounded-up instant came to
        // 0.9999999999999999, no whole wake, and the timer was armed for that same instant again.
        let limits = PushBudget.Limits(perHour: 3, burst: 3)
        let start = Instant(secondsSinceEpoch: 1_767_254_400)
        var budget = PushBudget(full: limits, at: start)
        let last = start + .milliseconds(44)
        let taken = [budget.take(at: start, limits), budget.take(at: start, limits), budget.take(at: last, limits)]
        #expect(taken == [true, true, true])
        let wake = try #require(budget.nextWake(after: last, limits))
        #expect(budget.wakes(at: wake, limits) == 1)
        #expect(budget.wakes(at: wake - .milliseconds(1), limits) == 0, "and not a millisecond later than needed")
        #expect(budget.nextWake(after: wake, limits) == wake)
    }
}
