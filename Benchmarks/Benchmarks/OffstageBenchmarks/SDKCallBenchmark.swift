import Benchmark
import Foundation
import OffstageBenchKit

/// Figure 1: one SDK call to the daemon and back. The probe app, launched by the real daemon (so the daemon knows
/// it by SO_PEERCRED like any app), times `beginBackgroundTask` and `endBackgroundTask` through the SDK, and in
/// alternating blocks times bare round trips of the same byte sizes to a blocking echo server in another process.
enum SDKCallBenchmark {
    static let calls = 10_000
    static let warmup = 500

    static func run(_ benchmark: Benchmark) throws {
        let daemon = try DaemonFixture()
        defer { daemon.tearDown() }
        try daemon.start()

        let echoPath = daemon.root + "/echo.sock"
        let echo = try daemon.spawnHelper(["echo", echoPath], output: "echo.log")
        try waitForSocket(echoPath)

        let out = daemon.root + "/calls.json"
        let bundle = try daemon.probeBundle(
            id: "bench.calls",
            arguments: ["--calls", "--count", "\(calls)", "--warmup", "\(warmup)", "--echo", echoPath, "--out", out])
        try daemon.install(bundle)
        try daemon.open("bench.calls")

        let report = try waitForReport(out, daemon: daemon)
        // Everything the echo server did was answer bare round trips (warm-up included).
        let echoCPU = MonotonicClock.processCPU(echo.pid) ?? 0
        guard report.invalidTasks == 0 else {
            throw BenchError("\(report.invalidTasks) beginBackgroundTask calls returned the invalid identifier")
        }

        Report.record(benchmark, Metrics.sdkPair, report.pair)
        Report.record(benchmark, Metrics.sdkBegin, report.begin)
        Report.record(benchmark, Metrics.sdkEnd, report.end)
        Report.record(benchmark, Metrics.barePair, report.barePair)
        Report.record(benchmark, Metrics.bareBegin, report.bareBegin)
        Report.record(benchmark, Metrics.bareEnd, report.bareEnd)

        let pair = Distribution(report.pair)
        let begin = Distribution(report.begin)
        let end = Distribution(report.end)
        let barePair = Distribution(report.barePair)
        let bareBegin = Distribution(report.bareBegin)
        let bareEnd = Distribution(report.bareEnd)
        let sizes = report.sizes

        Report.heading("SDK call round trip: a real app → offstaged → back, \(calls) pairs after \(warmup) warm-up")
        Report.latency("SDK beginBackgroundTask", begin)
        Report.latency("SDK endBackgroundTask", end)
        Report.latency("SDK begin + end pair", pair)
        Report.latency("baseline: bare RT \(sizes[0]) B → \(sizes[1]) B (begin sizes)", bareBegin)
        Report.latency("baseline: bare RT \(sizes[2]) B → \(sizes[3]) B (end sizes)", bareEnd)
        Report.latency("baseline: bare pair", barePair)
        Report.line("ratio p50: begin \(Report.ratio(begin.p50, bareBegin.p50)), end \(Report.ratio(end.p50, bareEnd.p50)), pair \(Report.ratio(pair.p50, barePair.p50))")
        Report.line("ratio p99: begin \(Report.ratio(begin.p99, bareBegin.p99)), end \(Report.ratio(end.p99, bareEnd.p99)), pair \(Report.ratio(pair.p99, barePair.p99))")
        // A daemon whose per-call work grows (with its event log, say) shows here as a later median above an earlier one.
        let tenth = max(report.begin.count / 10, 1)
        let first = Distribution(Array(report.begin.prefix(tenth))).p50
        let last = Distribution(Array(report.begin.suffix(tenth))).p50
        Report.line("beginBackgroundTask p50, first tenth of the run \(Report.microseconds(first).trimmingCharacters(in: .whitespaces)), last tenth \(Report.microseconds(last).trimmingCharacters(in: .whitespaces))")
        let calls = Double(2 * report.pair.count)
        let bareCalls = Double(2 * (report.barePair.count + warmup))
        func perCall(_ nanoseconds: UInt64, _ count: Double) -> String {
            String(format: "%.1f", Double(nanoseconds) / count / 1000) + " µs"
        }
        Report.line("CPU per SDK call: app side (SDK) \(perCall(report.sdkClientCPU, calls)), daemon \(perCall(report.daemonCPU, calls)); per bare round trip: client \(perCall(report.bareClientCPU, calls)), echo server \(perCall(echoCPU, bareCalls))")
        let worstP99 = max(begin.p99, end.p99)
        let worstRatioP99 = max(begin.p99 / max(bareBegin.p99, 1), end.p99 / max(bareEnd.p99, 1))
        let worstRatioP50 = max(begin.p50 / max(bareBegin.p50, 1), end.p50 / max(bareEnd.p50, 1))
        Report.line("target p99 ≤ 50 µs per call: worst call p99 \(Report.microseconds(worstP99).trimmingCharacters(in: .whitespaces)) → \(Report.verdict(worstP99 <= 50_000))")
        // Judged at the median too: the bare tail is mostly scheduling noise, which flatters a p99-only ratio.
        Report.line("target within 3× of the bare round trip, per call: at p99 \(String(format: "%.2f×", worstRatioP99)) → \(Report.verdict(worstRatioP99 <= 3)); at p50 \(String(format: "%.2f×", worstRatioP50)) → \(Report.verdict(worstRatioP50 <= 3))")
    }

    static func waitForSocket(_ path: String) throws {
        let deadline = MonotonicClock.now() + 10_000_000_000
        while MonotonicClock.now() < deadline {
            if let fd = try? UnixSocket.connect(path: path) {
                close(fd)
                return
            }
            MonotonicClock.sleep(milliseconds: 10)
        }
        throw BenchError("the echo helper did not listen at \(path)")
    }

    static func waitForReport(_ path: String, daemon: DaemonFixture) throws -> CallsReport {
        let deadline = MonotonicClock.now() + 180_000_000_000
        while MonotonicClock.now() < deadline {
            if let data = FileManager.default.contents(atPath: path) {
                if let report = try? JSONDecoder().decode(CallsReport.self, from: data) { return report }
                throw BenchError("the probe failed: \(String(decoding: data, as: UTF8.self))")
            }
            MonotonicClock.sleep(milliseconds: 50)
        }
        let output = (try? String(contentsOfFile: daemon.stateDirectory + "/logs/bench.calls.log", encoding: .utf8)) ?? ""
        throw BenchError("the probe wrote no report within 180 s; its output:\n\(output)")
    }
}
