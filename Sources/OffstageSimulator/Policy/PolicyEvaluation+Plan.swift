import OffstageCore

extension PolicyEvaluation {
    /// Measures a refresh plan made in advance (for example a point of ``OracleFrontier``): it runs through the core
    /// as a ``PlannedPolicy`` named `name` and is metered like every policy.
    public func evaluate(plan: OraclePlan, name: String, knob: String, on trace: UsageTrace) -> PolicyResult {
        let policy = PlannedPolicy(
            name: name, plan: plan.refreshes.map { (at: $0.at, app: TraceReplay.appID(for: $0.app)) })
        return measure(TraceReplay.run(trace, policy: policy, options: options), policy: name, knob: knob)
    }
}
