import OffstageCore

/// One policy measured on one trace (SPEC §11 policy targets): device wake-ups, energy, fresh opens, age at open.
public struct PolicyResult: Sendable {
    /// The policy's name.
    public var policy: String
    /// Its main knob's value, for the sweep.
    public var knob: String
    /// Days of trace.
    public var days: Double
    /// Wake-ups, runs and energy.
    public var energy: EnergyReport
    /// Fresh opens and ages.
    public var freshness: FreshnessReport
    /// Opens that could have been fresh (a refresh could have completed after the previous open and before this
    /// one, the app not being in front) but were not.
    public var missedWindows: Int

    /// Device wake-ups per day.
    public var wakeUpsPerDay: Double { Double(energy.wakeUps) / days }
    /// Joules per day.
    public var energyPerDay: Double { energy.totalEnergy / days }

    /// The row of a ``PolicyTable``.
    public var row: PolicyTable.Row {
        PolicyTable.Row(
            policy: policy, knob: knob, wakeUpsPerDay: wakeUpsPerDay, energyJoulesPerDay: energyPerDay,
            freshShare: freshness.freshShare, medianAge: freshness.medianAge, p90Age: freshness.p90Age,
            missedWindows: missedWindows)
    }
}

/// Runs policies on traces through ``TraceReplay`` and measures them with the same meters.
public struct PolicyEvaluation: Sendable {
    /// How the apps behave.
    public var options: TraceReplay.Options
    /// What energy costs.
    public var energyModel: EnergyModel

    /// An evaluation.
    public init(options: TraceReplay.Options = .init(), energyModel: EnergyModel = .lte) {
        self.options = options
        self.energyModel = energyModel
    }

    /// Measures `policy` on `trace`.
    public func evaluate(_ policy: any SchedulingPolicy, knob: String, on trace: UsageTrace) -> PolicyResult {
        measure(TraceReplay.run(trace, policy: policy, options: options), policy: policy.name, knob: knob)
    }

    /// Measures the oracle with freshness horizon `horizon`: its plan is made knowing every open, then run through
    /// the core like any policy.
    public func evaluateOracle(horizon: Duration, knob: String, on trace: UsageTrace) -> PolicyResult {
        // The plan leaves a second of slack: a run completes its duration after the core starts it, plus the time to
        // resume or launch the app, and a plan with none would complete a hair after the open it was made for.
        let plan = OraclePlanner(refreshDuration: options.refreshDuration + .seconds(1), horizon: horizon).plan(trace)
        let policy = PlannedPolicy(
            name: "oracle", plan: plan.refreshes.map { (at: $0.at, app: TraceReplay.appID(for: $0.app)) })
        return measure(TraceReplay.run(trace, policy: policy, options: options), policy: "oracle", knob: knob)
    }

    func measure(_ outcome: TraceReplay.Outcome, policy: String, knob: String) -> PolicyResult {
        let trace = outcome.trace
        let energy = EnergyMeter(model: energyModel).measure(outcome.timeline)
        let freshness = FreshnessMeter().measure(trace, refreshes: outcome.refreshes)
        // An open could be made fresh when its window (after the previous open's session, a refresh duration
        // before it) is not empty: the oracle with an unbounded horizon counts the others as missed by necessity.
        let unbounded = OraclePlanner(refreshDuration: options.refreshDuration, horizon: trace.duration).plan(trace)
        let servable = unbounded.opens - unbounded.missedWindows
        return PolicyResult(
            policy: policy, knob: knob, days: trace.days, energy: energy, freshness: freshness,
            missedWindows: max(0, servable - freshness.freshOpens))
    }
}
