import Foundation
import OffstageCore
import OffstageSimulator

/// The policies of one trace against the oracle's frontier (SPEC §11, SCH-7): each policy's wake-ups against the
/// fewest wake-ups any plan needs for the same fresh share, and a frontier plan replayed through the core to show the
/// meters agree with the frontier's count.
struct EqualFreshness {
    var trace: UsageTrace
    var frontier: OracleFrontier
    var rows: [Row]
    /// The frontier plan replayed: its wake-ups and fresh opens, predicted and metered.
    var check: (k: Int, predictedFresh: Int, meteredFresh: Int, meteredWakeUps: Int)?
    /// The adaptive policy's (defaults) wake-ups by the rule that paid for them, and the opens each rule served.
    var breakdown: String?

    struct Row {
        var result: PolicyResult
        /// The frontier's fewest wake-ups for at least the policy's fresh opens; nil if the policy is fresher than any
        /// plan with the 1 s slack can be.
        var frontierWakeUps: Int?
        /// The frontier's fresh opens with the policy's wake-ups.
        var frontierFreshAtSameWakeUps: Int

        /// The policy's wake-ups over the frontier's at equal freshness: nil when the frontier needs none (then the
        /// policy's every wake-up is above the frontier: read the excess per day) or is out of reach.
        var ratio: Double? {
            guard let frontierWakeUps, frontierWakeUps > 0 else { return nil }
            return Double(result.energy.wakeUps) / Double(frontierWakeUps)
        }
    }

    init(trace: UsageTrace, results: [PolicyResult], evaluation: PolicyEvaluation) throws {
        self.trace = trace
        let frontier = OracleFrontier(trace, refreshDuration: evaluation.options.refreshDuration, slack: .seconds(1))
        self.frontier = frontier
        rows = results.map {
            Row(
                result: $0, frontierWakeUps: frontier.wakeUps(forFreshOpens: $0.freshness.freshOpens),
                frontierFreshAtSameWakeUps: frontier.freshOpens(wakeUps: $0.energy.wakeUps))
        }
        if results.contains(where: { $0.policy == "adaptive" && $0.knob == "default" }) {
            let (outcome, log) = TraceReplay.runWithOutcomeAndLog(trace, policy: AdaptivePolicy(), options: evaluation.options)
            breakdown = WakeUpBreakdown(outcome: outcome, log: log, refreshDuration: evaluation.options.refreshDuration).summary
        }
        // Replay the frontier's plan nearest the adaptive policy's wake-ups (a corner of the curve, not zero).
        let adaptive = results.first { $0.policy == "adaptive" }?.energy.wakeUps ?? 1
        let corners = frontier.plannedWakeUps.filter { $0 > 0 }
        if let k = corners.min(by: { abs($0 - adaptive) < abs($1 - adaptive) }), let plan = frontier.plan(wakeUps: k) {
            let replayed = evaluation.evaluate(plan: plan, name: "frontier", knob: "k \(k)", on: trace)
            check = (k, frontier.freshOpens(wakeUps: k), replayed.freshness.freshOpens, replayed.energy.wakeUps)
        }
    }

    static func share(_ fresh: Int, _ opens: Int) -> String {
        String(format: "%.1f%%", opens == 0 ? 0 : Double(fresh) / Double(opens) * 100)
    }

    func perDay(_ count: Int) -> String { String(format: "%.1f", Double(count) / trace.days) }

    /// The ratio as printed: `1.23×`, `free` when the frontier needs no wake-up, `above reach` past the frontier.
    func ratioText(_ row: Row) -> String {
        if let ratio = row.ratio { return String(format: "%.2f×", ratio) }
        if row.frontierWakeUps == nil { return "above reach" }
        return row.result.energy.wakeUps == 0 ? "1.00× (both 0)" : "∞ (frontier 0)"
    }

    /// SPEC §11 read literally (``OracleFrontier/literalTarget(fresh:wakeUps:share:bound:)``): the frontier oracle
    /// with the most wake-ups of whose fresh opens the policy has 90 %, and whether the policy is within 1.25× of them.
    func literal(_ row: Row) -> (oracleWakeUps: Int, met: Bool) {
        frontier.literalTarget(fresh: row.result.freshness.freshOpens, wakeUps: row.result.energy.wakeUps)
    }

    func literalText(_ row: Row) -> String {
        let literal = literal(row)
        return perDay(literal.oracleWakeUps) + (literal.met ? ", met" : ", MISSED")
    }

    var text: String {
        var lines: [String] = []
        let opens = frontier.opens
        lines.append(
            "at equal freshness: \(opens) opens; \(frontier.freeOpens) fresh at no wake-up (screen-on time in their "
                + "window); \(frontier.missedWindows) missed windows (\(frontier.reopenedTooSoon) re-opened less than "
                + "\(frontier.refreshDuration + frontier.slack) after leaving the front, \(frontier.tooEarly) first opens "
                + "that soon after the trace starts); reachable maximum \(Self.share(frontier.reachableOpens, opens)) with "
                + "\(perDay(frontier.wakeUpsForAllReachable)) wake-ups/day")
        let header = ["policy", "knob", "wake-ups/day", "fresh", "frontier wake-ups/day at that fresh", "ratio",
                      "frontier fresh at same wake-ups", "§11 literal: oracle wake-ups/day, within 1.25×"]
        var cells = [header]
        for row in rows {
            cells.append([
                row.result.policy, row.result.knob, String(format: "%.1f", row.result.wakeUpsPerDay),
                Self.share(row.result.freshness.freshOpens, row.result.freshness.opens),
                row.frontierWakeUps.map(perDay) ?? "–", ratioText(row),
                Self.share(row.frontierFreshAtSameWakeUps, opens), literalText(row),
            ])
        }
        let widths = header.indices.map { column in cells.map { $0[column].count }.max() ?? 0 }
        for (index, line) in cells.enumerated() {
            lines.append("  " + line.enumerated().map { column, field in
                let pad = String(repeating: " ", count: widths[column] - field.count)
                return column < 2 ? field + pad : pad + field
            }.joined(separator: "  "))
            if index == 0 { lines.append("  " + widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
        }
        if let check {
            let agree = check.meteredWakeUps == check.k && check.meteredFresh == check.predictedFresh
            lines.append(
                "  frontier plan with \(check.k) wake-ups replayed through the core: predicted \(check.k) wake-ups, "
                    + "\(check.predictedFresh) fresh; metered \(check.meteredWakeUps) wake-ups, \(check.meteredFresh) fresh "
                    + (agree ? "(agree)" : "(DIFFER)"))
        }
        lines.append(ceilingText)
        if let breakdown { lines.append("  adaptive's wake-ups by rule (wake-ups/opens served): " + breakdown) }
        return lines.joined(separator: "\n")
    }

    /// What betting on the app left in front at the lock can give at best (``ResumeCeiling``), at the adaptive
    /// policy's fresh share.
    var ceilingText: String {
        let ceiling = ResumeCeiling(trace, frontier: frontier)
        var text = "  resumes: \(ceiling.resumes) of \(ceiling.locks) locks (\(Self.share(ceiling.resumes, ceiling.locks)))"
        if let best = ceiling.rates.first {
            text += String(format: "; the highest rate %@ %d of %d (%.0f %%)", best.app, best.resumes, best.locks, best.rate * 100)
        }
        if let adaptive = rows.first(where: { $0.result.policy == "adaptive" }) {
            let served = adaptive.result.freshness.freshOpens - frontier.freeOpens
            if served > 0, let frontierWakeUps = adaptive.frontierWakeUps, frontierWakeUps > 0,
                let needed = ceiling.wakeUps(forResumes: min(served, ceiling.resumes))
            {
                text += String(
                    format: "; for the adaptive's %d opens above the free ones, waking for whole apps' locks (best rates first, known in hindsight) needs %.1f wake-ups/day: %.2f× the frontier",
                    served, needed / trace.days, needed / Double(frontierWakeUps))
            }
        }
        return text
    }

    var chart: String {
        FrontierChart.svg(
            frontier,
            policies: rows.map {
                FrontierChart.Point(
                    name: $0.result.policy + ($0.result.policy == "oracle" ? " (\($0.result.knob))" : ""),
                    wakeUpsPerDay: $0.result.wakeUpsPerDay, freshShare: $0.result.freshness.freshShare)
            },
            title: "\(trace.name): the oracle's frontier and the policies")
    }

    /// One line per trace: the adaptive policy against the frontier, and whether it is within 1.25×.
    static func summary(_ comparisons: [EqualFreshness]) -> String {
        var lines: [String] = []
        var within = 0
        var judged = 0
        var literalMet = 0
        for comparison in comparisons {
            guard let row = comparison.rows.first(where: { $0.result.policy == "adaptive" }) else { continue }
            let ratio = comparison.ratioText(row)
            let verdict: String
            if let value = row.ratio {
                judged += 1
                if value <= 1.25 { within += 1 }
                verdict = value <= 1.25 ? "within 1.25×" : "NOT within 1.25×"
            } else {
                verdict = row.frontierWakeUps == nil ? "fresher than the frontier reaches" : "frontier needs no wake-up"
            }
            lines.append(
                "\(comparison.trace.name): adaptive \(String(format: "%.1f", row.result.wakeUpsPerDay))/day at "
                    + share(row.result.freshness.freshOpens, row.result.freshness.opens) + "; frontier "
                    + (row.frontierWakeUps.map(comparison.perDay) ?? "–") + "/day at that share; ratio \(ratio) — \(verdict); "
                    + "frontier at the adaptive's wake-ups: " + share(row.frontierFreshAtSameWakeUps, comparison.frontier.opens)
                    + " (reachable " + share(comparison.frontier.reachableOpens, comparison.frontier.opens) + "); §11 literal: "
                    + comparison.literalText(row))
            if comparison.literal(row).met { literalMet += 1 }
        }
        lines.append("adaptive within 1.25× of the frontier at its own fresh share on \(within) of \(judged) traces with a ratio")
        lines.append("adaptive meets §11 read literally (90 % of a frontier oracle's fresh opens, at most 1.25× its wake-ups) on \(literalMet) of \(comparisons.count) traces")
        return lines.joined(separator: "\n")
    }
}

/// Writes assembled traces as CSV, with a README of the columns and definitions.
enum TraceFiles {
    static func write(_ traces: [UsageTrace], frontiers: [OracleFrontier], to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let index = directory.appendingPathComponent("traces.csv")
        var rows: [String: String] = [:]
        if let existing = try? String(contentsOf: index, encoding: .utf8) {
            for row in CSVTable(parsing: existing).rows { rows[row.fields[0]] = row.fields.joined(separator: ",") }
        }
        for (trace, frontier) in zip(traces, frontiers) {
            try TraceCSV.sessions(trace).write(
                to: directory.appendingPathComponent("\(trace.name).sessions.csv"), atomically: true, encoding: .utf8)
            try TraceCSV.screen(trace).write(
                to: directory.appendingPathComponent("\(trace.name).screen.csv"), atomically: true, encoding: .utf8)
            try TraceCSV.frontier(frontier).write(
                to: directory.appendingPathComponent("\(trace.name).frontier.csv"), atomically: true, encoding: .utf8)
            rows[trace.name] = [
                trace.name, String(trace.start.nanosecondsSinceEpoch), String(trace.end.nanosecondsSinceEpoch - trace.start.nanosecondsSinceEpoch),
                String(frontier.opens), String(frontier.freeOpens), String(frontier.reopenedTooSoon), String(frontier.tooEarly),
                String(frontier.reachableOpens), String(frontier.wakeUpsForAllReachable),
            ].joined(separator: ",")
        }
        let header = "trace,start_unix_ns,duration_ns,opens,free_opens,reopened_too_soon,first_open_too_early,reachable_opens,wake_ups_for_all_reachable"
        try ([header] + rows.keys.sorted().map { rows[$0]! }).joined(separator: "\n").appending("\n")
            .write(to: index, atomically: true, encoding: .utf8)
        try readme.write(to: directory.appendingPathComponent("README.md"), atomically: true, encoding: .utf8)
    }

    static let readme = """
        # Usage traces as the policy benchmark assembled them

        Written by `swift run -c release --package-path Benchmarks PolicyBenchmark --write-traces DIR`, so the oracle's
        frontier (SPEC §11, decision 0043) can be recomputed with other code. All times are whole nanoseconds since the
        trace's start.

        - `traces.csv`: one row per trace — `trace` (name), `start_unix_ns` (the trace's start, nanoseconds since
          1970-01-01T00:00:00Z; local time is UTC), `duration_ns`, then the frontier's counts: `opens`, `free_opens`,
          `reopened_too_soon`, `first_open_too_early`, `reachable_opens`, `wake_ups_for_all_reachable`.
        - `<trace>.sessions.csv`: `app,open_ns,close_ns` — one foreground session per row, sorted by open. The open
          is what the freshness metric counts. Sessions of one app never overlap; every session lies inside one
          screen-on span.
        - `<trace>.screen.csv`: `on_ns,off_ns` — the screen-on spans `[on, off)`, sorted and disjoint. The screen is
          off at every other instant.
        - `<trace>.frontier.csv`: `wake_ups,fresh_opens,fresh_share` — the frontier: the most fresh opens with at most
          that many wake-ups, from 0 to the fewest that make every reachable open fresh.

        ## Definitions

        - Refresh: runs d = 10 s; windows are planned with d' = d + 1 s of slack (11 s).
        - An open at `t` of an app is **fresh** if a refresh of that app completed after the app's previous open and
          at or before `t` (a first open: any refresh completed at or before `t`).
        - The **window** of an open at `t` is `[e, t − d']` (nanoseconds, both ends included), `e` being the end
          (`close_ns`) of the app's previous session, or 0 for its first open. A refresh starting in it completes
          after the previous open and by `t`, and never starts while the app is in front.
        - **Missed window**: the window is empty (`t − d' < e`) — the app was opened again less than 11 s after it
          left the front (`reopened_too_soon`), or it is a first open less than 11 s after the start
          (`first_open_too_early`). No plan makes such an open fresh.
        - **Free**: the window holds an instant of screen-on time; the refresh starts with the screen on and costs no
          wake-up.
        - The other windows lie wholly in screen-off time. A **wake-up** is an instant, chosen with the screen off, at
          which every refresh whose window holds it starts; the frontier at `k` is the free opens plus the most of
          these windows that `k` instants hold together (maximum coverage of closed intervals by `k` points).
        - The device meter counts overlapping runs as one wake-up; in the frontier's plans no two chosen instants
          are less than d apart, and runs started with the screen on end before it goes off wherever their window
          allows, so the meter's count equals the number of instants (checked by replaying plans through the core).
          The frontier does not count work started within d after the screen goes off, while a run begun with the
          screen on still goes on, as free (the meter would): it counts a wake-up for it (decision 0011).
        """
}
