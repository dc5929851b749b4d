import Benchmark
import Foundation
import OffstageBenchKit
import OffstageProtocol

/// Figure (SPEC TR-3, §11): a download completes in the daemon → the app's handler of the session's events runs
/// (`handleEventsForBackgroundURLSession`), for an app that is not running (launched into the background, reason
/// transfer-events) and for a suspended one (resumed); against, in the same run and the same rounds, the same app
/// launched or resumed for a refresh by `offstage run-task` (no transfer).
///
/// Each round opens the probe app (`--transfers`), which creates one 256 KiB download of ``HeldDownloadServer`` — or
/// submits a refresh request, for the baseline — and then either exits (not running) or is sent home and suspended.
/// The server holds the download's last 4 KiB until the app is gone or suspended, then the benchmark releases them (or
/// calls `RunTask`). The interval starts at the daemon's own moment, read from its event log (CLOCK_REALTIME): the
/// line `transfer N completed`, stamped by the core's input that ended the attempt (after the engine's fsync of the
/// part file; the journal write, the hand-over and the launch or thaw follow from that input) — or, for the baseline, the line `… started (…) — forced` of the run; it ends
/// when the app's handler begins (its first act is to read CLOCK_REALTIME). Rounds whose log says the app was woken
/// otherwise than measured ("running") are counted and left out.
///
/// The relaunch back-off (`relaunchDelay`, doubling per launch for transfers) is left at its defaults: every round
/// opens the app, which resets it, so every relaunch measured is a first one. The daemon runs with `suspendDelay` 0.
enum TransferWakeBenchmark {
    static let rounds = 40
    static let warmup = 3
    static let id = "bench.transfer.wake"
    static let refreshIdentifier = "bench.refresh"
    static let bodyBytes = 256 << 10

    enum Case: CaseIterable {
        case transferLaunched, refreshLaunched, transferResumed, refreshResumed

        var transfer: Bool { self == .transferLaunched || self == .transferResumed }
        var launched: Bool { self == .transferLaunched || self == .refreshLaunched }
        var how: String { launched ? "launched into the background" : "resumed" }
    }

    struct Samples {
        /// The daemon's moment → the handler began (ns).
        var handler: [Case: [UInt64]] = [:]
        /// The benchmark's release of the last bytes, or its `RunTask` call → the handler began (ns).
        var fromTrigger: [Case: [UInt64]] = [:]
        /// Rounds left out, with what the daemon's log said.
        var leftOut: [String] = []
    }

    static func run(_ benchmark: Benchmark) throws {
        let daemon = try DaemonFixture(settings: ["suspendDelay": 0])
        defer { daemon.tearDown() }
        try daemon.start()
        let server = try HeldDownloadServer(bodyBytes: bodyBytes)
        defer { server.stop() }
        let reportPath = daemon.root + "/report.sock"
        let reports = try UnixSocket.bindDatagram(path: reportPath)
        defer { close(reports) }
        let plan = daemon.root + "/plan"
        let manifest: [String: Any] = ["UIBackgroundModes": ["fetch"], "BGTaskSchedulerPermittedIdentifiers": [refreshIdentifier]]
        try daemon.install(
            try daemon.probeBundle(
                id: id, arguments: ["--transfers", plan, "--report", reportPath, "--refresh-task", refreshIdentifier], extra: manifest))

        var samples = Samples()
        var generation = 0
        let loadAtStart = NotificationLatenessBenchmark.loadAverage()
        let cpuBefore = MonotonicClock.processCPU(daemon.pid) ?? 0
        for index in 0..<(warmup + rounds) {
            for kind in Case.allCases {
                generation += 1
                let measured = try round(kind, generation: generation, daemon: daemon, server: server, reports: reports, plan: plan)
                guard index >= warmup else { continue }
                switch measured {
                case .success(let (handler, trigger)):
                    samples.handler[kind, default: []].append(handler)
                    samples.fromTrigger[kind, default: []].append(trigger)
                case .failure(let reason):
                    samples.leftOut.append(reason.description)
                }
            }
        }
        let daemonCPU = (MonotonicClock.processCPU(daemon.pid) ?? cpuBefore) - cpuBefore
        let loadAtEnd = NotificationLatenessBenchmark.loadAverage()
        report(benchmark, samples, context: [
            "daemon defaults but suspendDelay 0; relaunch back-off at its defaults, reset by opening the app each round",
            "download: 256 KiB from a loopback server holding its last 4 KiB until the app has exited or is frozen",
            "load average \(loadAtStart) at the start, \(loadAtEnd) at the end; daemon CPU \(String(format: "%.2f", Double(daemonCPU) / 1e9)) s for \((warmup + rounds) * Case.allCases.count) rounds",
        ])
    }

    /// One round of `kind`: the daemon's moment → handler, and the benchmark's trigger → handler (ns); or why the
    /// round is left out.
    static func round(
        _ kind: Case, generation: Int, daemon: DaemonFixture, server: HeldDownloadServer, reports: Int32, plan: String
    ) throws -> Result<(UInt64, UInt64), BenchError> {
        let appLog = { (try? String(contentsOfFile: daemon.stateDirectory + "/logs/\(id).log", encoding: .utf8)).map { String($0.suffix(2_000)) } ?? "" }
        try TransferPlan.write(
            plan, generation: "g\(generation)", [kind.transfer ? "download \(server.url())" : "refresh"] + (kind.launched ? ["exit"] : []))
        try daemon.open(id)
        let created = try TransferPlan.await(reports, "created g\(generation)", timeoutSeconds: 30) { "the app said: \(appLog())" }
        guard created.count == 1, !created[0].hasPrefix("error") else { throw BenchError("round \(generation): the app created \(created)") }
        if kind.launched {
            try daemon.waitFor(id, "notRunning", timeout: 30)
        } else {
            try daemon.home()
            try daemon.waitFor(id, "suspended", timeout: 30)
        }
        MonotonicClock.sleep(milliseconds: 20)
        let triggered = WallClock.now()
        if kind.transfer {
            server.release()
        } else {
            try daemon.runTask(id, refreshIdentifier)
        }
        let words = try TransferPlan.await(reports, kind.transfer ? "events" : "refresh", timeoutSeconds: 60) {
            "round \(generation) (\(kind)); the app is \((try? daemon.app(id).state) ?? "?"); it said: \(appLog())"
        }
        guard let began = words.first.flatMap(Int64.init) else { throw BenchError("a malformed report: \(words)") }

        // The daemon's moment, from its event log (written in bursts a few ms after the fact).
        let deadline = MonotonicClock.now() + 10_000_000_000
        var start: ControlInterface.LogLine?
        var woken: ControlInterface.LogLine?
        while MonotonicClock.now() < deadline {
            let lines = try daemon.log(app: id, limit: 40).filter { Int64($0.at * 1e9) >= triggered - 1_000_000_000 }
            if kind.transfer {
                start = lines.first { $0.message.hasPrefix("transfer \(created[0]) completed") }
                woken = lines.first { $0.message.contains("handle-events-for-background-session called (") }
            } else {
                start = lines.first { $0.message.contains(" started (") && $0.message.hasSuffix("— forced") }
                woken = start
            }
            if start != nil, woken != nil { break }
            MonotonicClock.sleep(milliseconds: 20)
        }
        guard let start, let woken else { throw BenchError("round \(generation) (\(kind)): the daemon's log has no start line") }

        // The round ends when the app is suspended again (its handler completed), the download handed over once.
        try daemon.waitFor(id, "suspended", timeout: 60)
        if kind.transfer {
            let lines = daemon.completions(id).filter { $0.hasPrefix("completed \(created[0]) ") || $0.hasPrefix("failed \(created[0]) ") }
            guard lines.count == 1, lines[0].hasPrefix("completed \(created[0]) \(bodyBytes) ") else {
                throw BenchError("round \(generation): download \(created[0]) ended \(lines), not once with \(bodyBytes) bytes")
            }
        }
        guard woken.message.contains("(\(kind.how))") else {
            return .failure(BenchError("round \(generation) (\(kind)): \(woken.message)"))
        }
        let startNanoseconds = Int64((start.at * 1e9).rounded())
        return .success((UInt64(max(0, began - startNanoseconds)), UInt64(max(0, began - triggered))))
    }

    static func report(_ benchmark: Benchmark, _ samples: Samples, context: [String]) {
        let series: [(Case, BenchmarkMetric, String)] = [
            (.transferLaunched, Metrics.transferWakeLaunched, "completed → handler, app not running"),
            (.refreshLaunched, Metrics.transferWakeRefreshLaunched, "baseline: run-task → handler, not running"),
            (.transferResumed, Metrics.transferWakeResumed, "completed → handler, app suspended"),
            (.refreshResumed, Metrics.transferWakeRefreshResumed, "baseline: run-task → handler, suspended"),
        ]
        Report.heading("Transfer: download completed → handle-events-for-background-session runs, \(rounds) rounds of each after \(warmup) warm-up")
        for line in context { Report.line(line) }
        Report.line("from the daemon's event-log moment (transfer completed / task run started):")
        for (kind, metric, label) in series {
            Report.record(benchmark, metric, samples.handler[kind] ?? [])
            Report.latency(label, Distribution(samples.handler[kind] ?? []))
        }
        Report.line("from the benchmark's trigger (last 4 KiB released / RunTask called):")
        for (kind, _, label) in series {
            Report.latency(label, Distribution(samples.fromTrigger[kind] ?? []))
        }
        func ratio(_ figure: Case, _ baseline: Case) -> String {
            let a = Distribution(samples.handler[figure] ?? [])
            let b = Distribution(samples.handler[baseline] ?? [])
            return "p50 \(Report.ratio(a.p50, b.p50)), p99 \(Report.ratio(a.p99, b.p99))"
        }
        Report.line("ratio to the run-task baseline: not running \(ratio(.transferLaunched, .refreshLaunched)); suspended \(ratio(.transferResumed, .refreshResumed))")
        Report.line("rounds left out (woken otherwise than measured): \(samples.leftOut.count)\(samples.leftOut.isEmpty ? "" : ": " + samples.leftOut.prefix(3).joined(separator: "; "))")
        Report.line("target: none in §11 for this figure (reported against the baseline)")
    }
}
