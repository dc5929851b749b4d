import OffstageCore

/// Measures how fresh content was at each open, given when each app's refreshes completed.
///
/// Definitions:
/// - An **open** is the start of a foreground session.
/// - An open at `t` is **fresh** if the app completed a refresh at some `c` with `p < c ≤ t`, where `p` is the
///   app's previous open (a refresh completing at the very instant of the open counts: the content is there
///   when the app shows). An app's first open is fresh if any refresh completed at or before it.
/// - The **age at open** is `t − c` for the latest completion `c ≤ t`. For an app never refreshed before `t`, the
///   age is measured from the start of the trace, as if the content was last fetched when measuring began; such
///   opens are also counted in ``FreshnessReport/neverRefreshedOpens``.
public struct FreshnessMeter: Sendable {
    /// A meter.
    public init() {}

    /// Measures the opens of `trace` against refresh completions per app label.
    public func measure(_ trace: UsageTrace, completions: [String: [Instant]]) -> FreshnessReport {
        measure(sessions: trace.sessions, completions: completions, since: trace.start)
    }

    /// Measures the opens of `sessions` against refresh completions per app label; ages of apps never refreshed
    /// run from `start`.
    public func measure(sessions: [AppSession], completions: [String: [Instant]], since start: Instant)
        -> FreshnessReport
    {
        var opensByApp: [String: [Instant]] = [:]
        for session in sessions { opensByApp[session.app, default: []].append(session.start) }
        var opens = 0
        var fresh = 0
        var never = 0
        var ages: [Duration] = []
        var perApp: [String: FreshnessReport.AppFreshness] = [:]
        for (app, appOpens) in opensByApp {
            let done = (completions[app] ?? []).sorted()
            var appFresh = 0
            var next = 0  // completions[..<next] are at or before the current open
            var previousOpen: Instant?
            for open in appOpens.sorted() {
                while next < done.count, done[next] <= open { next += 1 }
                if next > 0 {
                    let latest = done[next - 1]
                    ages.append(open - latest)
                    if previousOpen.map({ latest > $0 }) ?? true { appFresh += 1 }
                } else {
                    ages.append(open - start)
                    never += 1
                }
                previousOpen = open
            }
            opens += appOpens.count
            fresh += appFresh
            perApp[app] = .init(opens: appOpens.count, freshOpens: appFresh)
        }
        return FreshnessReport(
            opens: opens, freshOpens: fresh, neverRefreshedOpens: never, ages: ages.sorted(), perApp: perApp)
    }
}
