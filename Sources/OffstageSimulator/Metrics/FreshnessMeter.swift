import OffstageCore

/// Measures how fresh content was at each open, given each app's refreshes: when each started and completed.
///
/// Definitions:
/// - An **open** is the start of a foreground session.
/// - An open at `t` is **fresh** if the app was refreshed since its previous open `p`: a refresh that *started*
///   after `p` completed at some `c ≤ t` (a refresh completing at the very instant of the open counts: the content is
///   there when the app shows). A refresh that started before `p` fetched what there was before the user looked, and
///   if it completed while the user was in the app they saw its update then; it does not make the next open fresh
///   (decision 0046). No refresh starts while its app is in front, so "after `p`" is after the user left it. An
///   app's first open is fresh if any refresh completed at or before it.
/// - The **age at open** is `t − c` for the latest completion `c ≤ t`. For an app never refreshed before `t`, the
///   age is measured from the start of the trace, as if the content was last fetched when measuring began; such
///   opens are also counted in ``FreshnessReport/neverRefreshedOpens``.
public struct FreshnessMeter: Sendable {
    /// A meter.
    public init() {}

    /// Measures the opens of `trace` against each app's refreshes (start to completion) by app label.
    public func measure(_ trace: UsageTrace, refreshes: [String: [Span]]) -> FreshnessReport {
        measure(sessions: trace.sessions, refreshes: refreshes, since: trace.start)
    }

    /// Measures the opens of `sessions` against each app's refreshes (start to completion) by app label; ages of apps
    /// never refreshed run from `start`.
    public func measure(sessions: [AppSession], refreshes: [String: [Span]], since start: Instant) -> FreshnessReport {
        var opensByApp: [String: [Instant]] = [:]
        for session in sessions { opensByApp[session.app, default: []].append(session.start) }
        var opens = 0
        var fresh = 0
        var never = 0
        var ages: [Duration] = []
        var perApp: [String: FreshnessReport.AppFreshness] = [:]
        for (app, appOpens) in opensByApp {
            let done = (refreshes[app] ?? []).sorted { ($0.end, $0.start) < ($1.end, $1.start) }
            var appFresh = 0
            var next = 0  // done[..<next] completed at or before the current open
            var latestStart: Instant?  // the latest start among them
            var previousOpen: Instant?
            for open in appOpens.sorted() {
                while next < done.count, done[next].end <= open {
                    latestStart = max(latestStart ?? done[next].start, done[next].start)
                    next += 1
                }
                if next > 0, let latestStart {
                    ages.append(open - done[next - 1].end)
                    if previousOpen.map({ latestStart > $0 }) ?? true { appFresh += 1 }
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
