import Foundation
import OffstageCore
import OffstageSimulator

/// The policy benchmark (SPEC §11): on the real usage trace and on synthetic multi-day traces, the four policies side
/// by side — each app on its own 15-minute timer, Android-like standby buckets, Offstage's adaptive policy, and an
/// oracle that knows every open — with device wake-ups per day, energy, fresh opens and age at open; both targets
/// checked for every trace; and each policy's main knob swept into a chart of wake-ups against fresh opens.
///
/// At equal freshness (SPEC §11, SCH-7): for every trace, the oracle's frontier — the fewest wake-ups for each fresh
/// share — and each policy's wake-ups against the frontier's at the policy's own fresh share (the ratio the policy is
/// judged on), with a chart per trace (`frontier-<trace>.svg`).
///
/// Usage: `PolicyBenchmark [--days N] [--out DIR] [--figures DIR] [--quick] [--held-out] [--write-traces DIR]` from
/// the repository root (or `--data DIR`). Synthetic seeds 1–3 of each user class are the tuning set; `--held-out`
/// adds seeds 4–10 of each class, reported separately. `--write-traces DIR` writes every assembled trace as CSV with
/// a README of the columns and definitions, so the frontier can be recomputed with other code. `--tune [--set
/// knob=value …]` runs the adaptive policy alone with its wake-ups broken down by rule (``Tuning``).
@main
struct PolicyBenchmark {
    static func main() throws {
        let arguments = CommandLine.arguments
        func option(_ name: String) -> String? {
            arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
        }
        let quick = arguments.contains("--quick")
        let days = option("--days").flatMap(Int.init) ?? (quick ? 7 : 14)
        let data = URL(fileURLWithPath: option("--data") ?? "Data/app-usage")
        let out = URL(fileURLWithPath: option("--out") ?? "Benchmarks/results")
        let figures = URL(fileURLWithPath: option("--figures") ?? out.path)
        let heldOut = arguments.contains("--held-out")
        if arguments.contains("--tune") { return try Tuning.run(arguments, data: data, days: days) }
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: figures, withIntermediateDirectories: true)

        var traces: [UsageTrace] = [
            try UsageLoggerTrace.load(
                appEvents: data.appendingPathComponent("usagelogger_1user_app_events.csv"),
                deviceEvents: data.appendingPathComponent("usagelogger_1user_device_events.csv"))
        ]
        let profiles: [(SyntheticTraceGenerator.Parameters, [UInt64])] =
            quick ? [(.median, [1])] : [(.light, [1, 2, 3]), (.median, [1, 2, 3]), (.heavy, [1, 2, 3])]
        for (profile, seeds) in profiles {
            var parameters = profile
            parameters.days = days
            for seed in seeds { traces.append(SyntheticTraceGenerator(parameters).generate(seed: seed)) }
        }

        // The targets are judged on mains power: no battery holds anything back, so every policy's freshness is its
        // own (a battery run follows below: per-app timers then drain it and are held by the low-battery rule).
        var mains = TraceReplay.Options()
        mains.battery = nil
        let evaluation = PolicyEvaluation(options: mains)
        print("Policy benchmark: \(traces.count) traces; refresh runs \(evaluation.options.refreshDuration); energy model LTE")
        print("Device on mains power for the comparison and the targets; on battery in the last section.")
        var verdicts: [Verdict] = []
        var equalFreshness: [EqualFreshness] = []
        for (index, trace) in traces.enumerated() {
            let started = Date()
            let fixed = evaluation.evaluate(FixedIntervalPolicy(interval: 900), knob: "15 min", on: trace)
            let android = evaluation.evaluate(AndroidStandbyPolicy(), knob: "15 min", on: trace)
            let adaptive = evaluation.evaluate(AdaptivePolicy(), knob: "default", on: trace)
            let oracle = evaluation.evaluateOracle(horizon: trace.duration, knob: "unbounded", on: trace)
            let oracleHour = evaluation.evaluateOracle(horizon: .seconds(3600), knob: "H 1 h", on: trace)
            print("\n## \(trace.name): \(String(format: "%.1f", trace.days)) days, \(trace.apps.count) apps, "
                + "\(trace.sessions.count) opens (\(String(format: "%.1f", Date().timeIntervalSince(started))) s)")
            print(PolicyTable.render([fixed, android, adaptive, oracle, oracleHour].map(\.row)))
            let verdict = Verdict(trace: trace.name, fixed: fixed, adaptive: adaptive, oracle: oracle)
            print(verdict.text)
            verdicts.append(verdict)
            let comparison = try EqualFreshness(
                trace: trace, results: [fixed, android, adaptive, oracle, oracleHour], evaluation: evaluation)
            print(comparison.text)
            try comparison.chart.write(
                to: figures.appendingPathComponent("frontier-\(trace.name).svg"), atomically: true, encoding: .utf8)
            equalFreshness.append(comparison)

            // The sweep: each policy's main knob, on the real trace and the first synthetic trace of each profile.
            guard index == 0 || trace.name.hasSuffix("seed1") else { continue }
            let series = sweep(trace, evaluation, quick: quick)
            let svg = PolicyChart.svg(series, title: "\(trace.name): device wake-ups per day against fresh opens")
            let file = out.appendingPathComponent("policy-\(trace.name).svg")
            try svg.write(to: file, atomically: true, encoding: .utf8)
            print("sweep:")
            for line in series { print("  \(line.name): " + line.points.map { "\($0.label ?? "") \(String(format: "%.1f/day %.1f%%", $0.wakeUpsPerDay, $0.freshShare * 100))" }.joined(separator: ", ")) }
            print("chart: \(file.path)")
        }

        print("\n## Targets (SPEC §11), adaptive policy with its defaults")
        for verdict in verdicts { print(verdict.line) }
        let met = verdicts.filter(\.allMet).count
        print("\nall four checks met on \(met) of \(verdicts.count) traces")

        print("\n## At equal freshness: the oracle's frontier (tuning set: real trace, synthetic seeds 1–3)")
        print(EqualFreshness.summary(equalFreshness))
        print("\n## The first-open ceiling: how often a wake-up for the app locked on can serve an open, at best")
        for (profile, seeds) in profiles {
            for seed in seeds { print(FirstOpenCeiling(profile, seed: seed).text) }
        }
        if let directory = option("--write-traces") {
            try TraceFiles.write(traces, frontiers: equalFreshness.map(\.frontier), to: URL(fileURLWithPath: directory))
            print("traces written to \(directory)")
        }
        if heldOut {
            print("\n## Held out: synthetic seeds 4–10 of each class (never used to tune), at equal freshness")
            var held: [EqualFreshness] = []
            for profile in [SyntheticTraceGenerator.Parameters.light, .median, .heavy] {
                var parameters = profile
                parameters.days = days
                for seed in UInt64(4)...10 {
                    let trace = SyntheticTraceGenerator(parameters).generate(seed: seed)
                    let started = Date()
                    let results = [
                        evaluation.evaluate(FixedIntervalPolicy(interval: 900), knob: "15 min", on: trace),
                        evaluation.evaluate(AndroidStandbyPolicy(), knob: "15 min", on: trace),
                        evaluation.evaluate(AdaptivePolicy(), knob: "default", on: trace),
                        evaluation.evaluateOracle(horizon: trace.duration, knob: "unbounded", on: trace),
                    ]
                    let comparison = try EqualFreshness(trace: trace, results: results, evaluation: evaluation)
                    print("\n### \(trace.name) (\(String(format: "%.1f", Date().timeIntervalSince(started))) s)")
                    print(comparison.text)
                    held.append(comparison)
                    if let directory = option("--write-traces") {
                        try TraceFiles.write([trace], frontiers: [comparison.frontier], to: URL(fileURLWithPath: directory))
                    }
                }
            }
            print("\n## Held out, summary")
            print(EqualFreshness.summary(held))
        }

        // The same policies on a phone's battery, drained by use and background work and charged overnight.
        print("\n## On battery (VirtualBattery: 10 %/h screen on, 0.5 %/h standby, charged 23:30–07:00)")
        let onBattery = PolicyEvaluation()
        for trace in traces.enumerated().filter({ $0.offset == 0 || $0.element.name.hasSuffix("seed1") }).map(\.element) {
            let rows = [
                onBattery.evaluate(FixedIntervalPolicy(interval: 900), knob: "15 min", on: trace),
                onBattery.evaluate(AndroidStandbyPolicy(), knob: "15 min", on: trace),
                onBattery.evaluate(AdaptivePolicy(), knob: "default", on: trace),
                onBattery.evaluateOracle(horizon: trace.duration, knob: "unbounded", on: trace),
            ]
            print("\n### \(trace.name), on battery")
            print(PolicyTable.render(rows.map(\.row)))
        }
    }

    static func sweep(_ trace: UsageTrace, _ evaluation: PolicyEvaluation, quick: Bool) -> [PolicySeries] {
        func point(_ result: PolicyResult) -> PolicySeries.Point {
            .init(wakeUpsPerDay: result.wakeUpsPerDay, freshShare: result.freshness.freshShare, label: result.knob)
        }
        let intervals: [Double] = quick ? [5, 15, 60] : [5, 15, 30, 60, 120]
        let fixed = intervals.map { point(evaluation.evaluate(FixedIntervalPolicy(interval: $0 * 60), knob: "\(Int($0)) min", on: trace)) }
        let android = intervals.filter { $0 >= 15 }.map {
            point(evaluation.evaluate(AndroidStandbyPolicy(period: $0 * 60), knob: "\(Int($0)) min", on: trace))
        }
        let thresholds: [Double] = quick ? [0.8, 0.4, 0.0] : [1.01, 0.8, 0.6, 0.4, 0.3, 0.2, 0.1, 0.0]
        let adaptive = thresholds.map { threshold -> PolicySeries.Point in
            var policy = AdaptivePolicy()
            policy.resumeThreshold = threshold
            return point(evaluation.evaluate(policy, knob: "resume ≥ \(threshold)", on: trace))
        }
        let horizons: [(Duration, String)] = [(.seconds(900), "15 min"), (.seconds(3600), "1 h"), (.seconds(4 * 3600), "4 h"), (trace.duration, "unbounded")]
        let oracle = horizons.map { point(evaluation.evaluateOracle(horizon: $0.0, knob: $0.1, on: trace)) }
        return [
            PolicySeries(name: "fixed interval (interval)", points: fixed),
            PolicySeries(name: "Android-like (period)", points: android),
            PolicySeries(name: "adaptive (resume threshold)", points: adaptive),
            PolicySeries(name: "oracle (horizon)", points: oracle),
        ]
    }
}

/// The two targets of SPEC §11 for one trace.
struct Verdict {
    var trace: String
    var fixed: PolicyResult
    var adaptive: PolicyResult
    var oracle: PolicyResult

    var fewerThanFixed: Double { fixed.wakeUpsPerDay / max(adaptive.wakeUpsPerDay, 1e-9) }
    var freshVsFixed: Bool { adaptive.freshness.freshShare >= fixed.freshness.freshShare }
    var shareOfOracle: Double { adaptive.freshness.freshShare / max(oracle.freshness.freshShare, 1e-9) }
    var wakeUpsVsOracle: Double { adaptive.wakeUpsPerDay / max(oracle.wakeUpsPerDay, 1e-9) }
    var checks: [(String, Bool)] {
        [
            ("≥ 5× fewer wake-ups than fixed (\(String(format: "%.0f×", fewerThanFixed)))", fewerThanFixed >= 5),
            ("fresh share ≥ fixed (\(pct(adaptive)) vs \(pct(fixed)))", freshVsFixed),
            ("≥ 90 % of the oracle's fresh share (\(String(format: "%.1f %%", shareOfOracle * 100)))", shareOfOracle >= 0.9),
            ("≤ 1.25× the oracle's wake-ups (\(String(format: "%.2f×", wakeUpsVsOracle)))", wakeUpsVsOracle <= 1.25),
        ]
    }
    var allMet: Bool { checks.allSatisfy(\.1) }
    var text: String { checks.map { "  \($0.1 ? "MET   " : "MISSED") \($0.0)" }.joined(separator: "\n") }
    var line: String { "\(trace): " + checks.map { "\($0.1 ? "met" : "MISSED") \($0.0)" }.joined(separator: "; ") }

    func pct(_ result: PolicyResult) -> String { String(format: "%.1f %%", result.freshness.freshShare * 100) }
}
