import OffstageCore

/// Runs refreshes at instants planned in advance — the oracle's plan, which knows every future open — through the
/// same core as every other policy, so its cost is measured the same way.
public struct PlannedPolicy: SchedulingPolicy {
    public let name: String
    /// Planned instants per app, sorted; the ones not yet run.
    var remaining: [AppID: [Instant]]

    /// A policy that runs `app`'s request at each of its planned instants (or as soon after as conditions allow).
    public init(name: String, plan: [(at: Instant, app: AppID)]) {
        self.name = name
        var byApp: [AppID: [Instant]] = [:]
        for entry in plan { byApp[entry.app, default: []].append(entry.at) }
        remaining = byApp.mapValues { $0.sorted() }
    }

    public mutating func decide(_ context: SchedulingContext) -> SchedulingDecision {
        var decision = SchedulingDecision()
        for candidate in context.candidates {
            let app = candidate.key.app
            guard var instants = remaining[app], let first = instants.first else {
                decision.planned[candidate.key] = PlannedRun(at: nil, reason: "no open ahead needs it")
                continue
            }
            if first <= context.now {
                // Every planned instant already passed is served by this one run.
                instants.removeAll { $0 <= context.now }
                remaining[app] = instants
                decision.run.append(candidate.key)
            } else {
                decision.plan(candidate.key, at: first, "planned with knowledge of the next open")
            }
        }
        return decision
    }
}
