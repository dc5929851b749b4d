import OffstageCore
import OffstageSimulator
import Testing

/// A two-app trace, by hand: three screen sessions a day apart, each opening both apps.
private func smallTrace() throws -> UsageTrace {
    let start = Instant(secondsSinceEpoch: 1_767_225_600)
    var sessions: [AppSession] = []
    var screens: [Span] = []
    for day in 0..<3 {
        let on = start + .seconds(Double(day) * 86_400 + 8 * 3600)
        screens.append(Span(start: on, duration: .seconds(600)))
        sessions.append(AppSession(app: "News", start: on + .seconds(5), end: on + .seconds(200)))
        sessions.append(AppSession(app: "Mail", start: on + .seconds(300), end: on + .seconds(500)))
    }
    return try UsageTrace(
        name: "small", start: start, end: start + .seconds(3 * 86_400), apps: ["Mail", "News"], sessions: sessions,
        screenOn: screens)
}

@Suite("Policy evaluation through the real core (SPEC §11)")
struct PolicyEvaluationTests {
    @Test("Fixed 15-minute timers wake the device about 96 times a day per app; the oracle makes every servable open fresh with fewer")
    func baselinesBehaveAsDefined() throws {
        let trace = try smallTrace()
        var options = TraceReplay.Options()
        options.installSpread = .zero  // both timers in step: their runs overlap and share wake-ups
        let evaluation = PolicyEvaluation(options: options)
        let fixed = evaluation.evaluate(FixedIntervalPolicy(interval: 900), knob: "15 min", on: trace)
        #expect(fixed.wakeUpsPerDay > 90 && fixed.wakeUpsPerDay <= 96, "\(fixed.wakeUpsPerDay)")
        #expect(fixed.freshness.freshShare == 1, "a tick between every two opens a day apart")
        let oracle = evaluation.evaluateOracle(horizon: trace.duration, knob: "unbounded", on: trace)
        #expect(oracle.missedWindows == 0)
        #expect(oracle.freshness.freshOpens >= fixed.freshness.opens - 2, "every open but the first of each app")
        #expect(oracle.wakeUpsPerDay < fixed.wakeUpsPerDay / 10)
    }

    @Test("The adaptive policy refreshes while the screen is on and wakes the device rarely")
    func adaptiveIsCheap() throws {
        let trace = try smallTrace()
        let result = PolicyEvaluation().evaluate(AdaptivePolicy(), knob: "default", on: trace)
        #expect(result.energy.runs >= 4, "refreshed when the user left each app")
        #expect(result.wakeUpsPerDay <= 3, "\(result.wakeUpsPerDay)")
        #expect(result.freshness.freshShare >= 0.5)
    }

    @Test("A replay is deterministic: the same trace, policy and seed give the same result")
    func deterministic() throws {
        let trace = try smallTrace()
        let first = PolicyEvaluation().evaluate(AdaptivePolicy(), knob: "a", on: trace)
        let second = PolicyEvaluation().evaluate(AdaptivePolicy(), knob: "a", on: trace)
        #expect(first.energy == second.energy && first.freshness == second.freshness)
    }
}
