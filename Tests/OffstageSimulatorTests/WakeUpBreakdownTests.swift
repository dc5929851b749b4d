import OffstageCore
import OffstageSimulator
import Testing

@Suite("Which rule paid for each wake-up (SPEC SCH-7, §11)")
struct WakeUpBreakdownTests {
    @Test("The adaptive policy's reasons sort into its rules; anything else is other")
    func reasonsSortIntoRules() {
        #expect(WakeUpBreakdown.kind(of: "refresh started: due: the next unlock is likely to open it first: about 52 % from 18:00:00 UTC") == .resume)
        #expect(WakeUpBreakdown.kind(of: "due: backing off after 2 run(s) without new data") == .backOff)
        #expect(WakeUpBreakdown.kind(of: "not opened for 9.0 days: refreshed once a day") == .dormant)
        #expect(WakeUpBreakdown.kind(of: "content would be 13 h old when the user usually opens it (from 07:00:00 UTC)") == .habit)
        #expect(WakeUpBreakdown.kind(of: "15 min before the user usually opens it (from 08:00:00 UTC)") == .dirty)
        #expect(WakeUpBreakdown.kind(of: "opened since its last refresh; no usual time to open it yet") == .dirty)
        #expect(WakeUpBreakdown.kind(of: "the device is awake and the app was opened since its last refresh") == .other)
    }

    @Test("§11: on a synthetic week the breakdown counts every wake-up the energy meter counts, and serves no more opens than the policy made fresh beyond the free ones")
    func countsAgreeWithTheMeters() {
        var parameters = SyntheticTraceGenerator.Parameters.light
        parameters.days = 4
        let trace = SyntheticTraceGenerator(parameters).generate(seed: 1)
        var options = TraceReplay.Options()
        options.battery = nil
        var policy = AdaptivePolicy()
        policy.resumeThreshold = 0.1  // bet often, so that some bets win and some lose
        let (outcome, log) = TraceReplay.runWithOutcomeAndLog(trace, policy: policy, options: options)
        let breakdown = WakeUpBreakdown(outcome: outcome, log: log, refreshDuration: options.refreshDuration)
        let wakeUps = EnergyMeter().measure(outcome.timeline).wakeUps
        let fresh = FreshnessMeter().measure(trace, refreshes: outcome.refreshes).freshOpens
        let frontier = OracleFrontier(trace, refreshDuration: options.refreshDuration)
        #expect(breakdown.wakeUps == wakeUps)
        #expect(breakdown.wakeUps > 0)
        let resume = breakdown.lines.first { $0.kind == .resume }
        #expect((resume?.wakeUps ?? 0) > 0 && (resume?.servedOpens ?? 0) > 0, "\(breakdown.lines)")
        #expect(breakdown.servedOpens <= fresh - frontier.freeOpens, "served \(breakdown.servedOpens), fresh \(fresh), free \(frontier.freeOpens)")
        #expect(breakdown.servedOpens <= breakdown.wakeUps)
    }
}
