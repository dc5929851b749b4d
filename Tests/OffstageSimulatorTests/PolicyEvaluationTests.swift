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

@Suite("Virtual battery")
struct VirtualBatteryTests {
    @Test("It drains 10 %/h with the screen on and 0.5 %/h asleep, and charges at 40 %/h on the nightly charger")
    func drainsAndCharges() {
        let clock = LocalClock()
        let midnight = clock.startOfDay(20_454)
        var battery = VirtualBattery(level: 80)
        battery.run(from: midnight + .seconds(8 * 3600), to: midnight + .seconds(10 * 3600), screenOn: true, clock)
        #expect(abs(battery.level - 60) < 1e-9)
        battery.run(from: midnight + .seconds(10 * 3600), to: midnight + .seconds(20 * 3600), screenOn: false, background: 100, clock)
        #expect(abs(battery.level - (60 - 5 - 0.5)) < 1e-9)
        #expect(!battery.isCharging(at: midnight + .seconds(22 * 3600), clock))
        #expect(battery.isCharging(at: midnight + .seconds(23 * 3600 + 45 * 60), clock))
        battery.run(from: midnight + .seconds(23.5 * 3600), to: midnight + .seconds(25 * 3600), screenOn: false, clock)
        #expect(battery.level == 100, "charged to full and no further")
        #expect(battery.nextChargerChange(after: midnight + .seconds(12 * 3600), clock) == midnight + .seconds(23.5 * 3600))
    }

    @Test("In a replay the core sees the battery: on battery by day, charging at night")
    func replayFeedsTheCore() throws {
        let start = Instant(secondsSinceEpoch: 1_767_225_600 + 12 * 3600)
        let trace = try UsageTrace(
            name: "day", start: start, end: start + .seconds(86_400), apps: ["News"],
            sessions: [AppSession(app: "News", start: start + .seconds(60), end: start + .seconds(120))],
            screenOn: [Span(start: start, duration: .seconds(600))])
        let log = TraceReplay.runWithLog(trace, policy: AdaptivePolicy())
        let device = log.filter { $0.kind == .device }.map(\.message)
        #expect(device.contains { $0.contains("charging") }, "\(device)")
        #expect(device.contains { $0.contains("on battery") }, "\(device)")
    }
}
