import Foundation
import OffstageCore
import OffstageSimulator

/// `PolicyBenchmark --tune [--set knob=value …] [--held-out] [--days N]`: the adaptive policy alone, with its knobs
/// set from the command line, against the frontier on the tuning set (the real trace and synthetic seeds 1–3 of each
/// class; `--held-out` for seeds 4–10 instead), with its wake-ups broken down by the rule that paid for them
/// (``WakeUpBreakdown``). Quick enough to compare knob values: no other policy and no sweep.
enum Tuning {
    static func run(_ arguments: [String], data: URL, days: Int) throws {
        let policy = try configured(AdaptivePolicy(), from: arguments)
        var traces: [UsageTrace] = []
        let heldOut = arguments.contains("--held-out")
        if !heldOut {
            traces.append(
                try UsageLoggerTrace.load(
                    appEvents: data.appendingPathComponent("usagelogger_1user_app_events.csv"),
                    deviceEvents: data.appendingPathComponent("usagelogger_1user_device_events.csv")))
        }
        let seeds: [UInt64] = heldOut ? Array(4...10) : [1, 2, 3]
        for profile in [SyntheticTraceGenerator.Parameters.light, .median, .heavy] {
            var parameters = profile
            parameters.days = days
            for seed in seeds { traces.append(SyntheticTraceGenerator(parameters).generate(seed: seed)) }
        }
        var options = TraceReplay.Options()
        options.battery = nil
        print("adaptive policy: \(knobs(policy))")
        print(heldOut ? "held-out seeds 4–10" : "tuning set: real trace, seeds 1–3")
        let lines = Results(count: traces.count)
        let (all, replay) = (traces, options)
        DispatchQueue.concurrentPerform(iterations: all.count) { index in
            lines.set(index, line(all[index], policy, replay))
        }
        for line in lines.all { print(line) }
    }

    /// One trace: the policy's point against the frontier, and its wake-ups by rule (wake-ups/opens served).
    static func line(_ trace: UsageTrace, _ policy: AdaptivePolicy, _ options: TraceReplay.Options) -> String {
        let (outcome, log) = TraceReplay.runWithOutcomeAndLog(trace, policy: policy, options: options)
        let fresh = FreshnessMeter().measure(trace, refreshes: outcome.refreshes)
        let wakeUps = EnergyMeter().measure(outcome.timeline).wakeUps
        let frontier = OracleFrontier(trace, refreshDuration: options.refreshDuration, slack: .seconds(1))
        let needed = frontier.wakeUps(forFreshOpens: fresh.freshOpens)
        let ratio = needed.map { $0 > 0 ? String(format: "%.2f×", Double(wakeUps) / Double($0)) : "∞" } ?? "above reach"
        let rules = WakeUpBreakdown(outcome: outcome, log: log, refreshDuration: options.refreshDuration).summary
        let literal = frontier.literalTarget(fresh: fresh.freshOpens, wakeUps: wakeUps)
        return String(
            format: "%@: %.1f/day, %.1f%% fresh (%d above free); frontier %@/day; ratio %@; §11 literal: oracle %.1f/day, %@; wake-ups/served: %@",
            trace.name.padding(toLength: 30, withPad: " ", startingAt: 0), Double(wakeUps) / trace.days,
            fresh.freshShare * 100, fresh.freshOpens - frontier.freeOpens,
            needed.map { String(format: "%.1f", Double($0) / trace.days) } ?? "–", ratio,
            Double(literal.oracleWakeUps) / trace.days, literal.met ? "met" : "MISSED", rules)
    }

    /// `policy` with every `--set knob=value` applied (a knob is a property name of ``AdaptivePolicy``).
    static func configured(_ policy: AdaptivePolicy, from arguments: [String]) throws -> AdaptivePolicy {
        var fields = try JSONSerialization.jsonObject(with: JSONEncoder().encode(policy)) as! [String: Any]
        for (index, argument) in arguments.enumerated() where argument == "--set" && index + 1 < arguments.count {
            let pair = arguments[index + 1].split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2, fields[pair[0]] != nil, let value = Double(pair[1]) else {
                throw TuningError(message: "--set \(arguments[index + 1]): expected knob=number with a knob of "
                    + fields.keys.sorted().joined(separator: ", "))
            }
            fields[pair[0]] = value
        }
        return try JSONDecoder().decode(AdaptivePolicy.self, from: JSONSerialization.data(withJSONObject: fields))
    }

    static func knobs(_ policy: AdaptivePolicy) -> String {
        let fields = (try? JSONSerialization.jsonObject(with: JSONEncoder().encode(policy))) as? [String: Any] ?? [:]
        return fields.keys.sorted().map { "\($0)=\(fields[$0]!)" }.joined(separator: " ")
    }

    struct TuningError: Error, CustomStringConvertible { var message: String; var description: String { message } }

    /// Lines filled in by concurrent workers, read in order.
    final class Results: @unchecked Sendable {
        private var lines: [String]
        private let lock = NSLock()
        init(count: Int) { lines = Array(repeating: "", count: count) }
        func set(_ index: Int, _ line: String) { lock.withLock { lines[index] = line } }
        var all: [String] { lock.withLock { lines } }
    }
}
