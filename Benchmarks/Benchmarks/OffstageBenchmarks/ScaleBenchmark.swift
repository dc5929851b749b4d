import Benchmark
import Foundation
import OffstageBenchKit
import OffstageProtocol

/// Figure 6 (SPEC §11 scale, issue item 14): the real daemon holding 1,000 installed apps with 10,000 pending task
/// requests (10 per app, each submitted by the app itself through the SDK's `TaskScheduler`) and 100 running apps,
/// measured against a daemon with no apps in the same run:
///
/// 1. memory (VmRSS, VmHWM);
/// 2. restart recovery: kill -9, start again, time from the spawn to `ListApps` answering with every app, and to
///    the last of the 100 surviving apps reattaching (from the daemon's own log), over several restarts;
/// 3. `ListApps` (what `offstage apps` calls) on a persistent connection, and the real CLI end to end;
/// 4. 50 running apps calling `beginBackgroundTask`/`endBackgroundTask` at once, against 1 app calling alone.
///
/// The state is built as a user and apps would: 1,000 installs, then every app opened once; while launching, each
/// submits 1 refresh and 9 processing requests due hours ahead (so none runs). 900 apps then exit by themselves;
/// of the 100 that stay, 50 hold a background task once in the background and keep running (they make the
/// concurrent calls), 49 are suspended, and the last is in front. The daemon's configuration gives background
/// tasks a 10-hour budget so that the 50 keep running for the whole group.
enum ScaleBenchmark {
    static let installed = 1_000
    static let requestsPerApp = 10
    static let running = 100
    static let callers = 50
    static let restarts = 10
    static let listSamples = 500
    static let smallListSamples = 2_000
    static let cliSamples = 10
    static let smallApps = 10
    static let alonePairs = 2_000
    static let concurrentPairs = 200
    static let settings: [String: Double] = ["backgroundTaskBudget": 36_000]

    static func appID(_ index: Int) -> String { "bench.scale" + String(format: "%04d", index) }

    /// The first app that stays running; the callers are the `callers` apps from here on.
    static var firstRunning: Int { installed - running }

    static func run(_ benchmark: Benchmark) throws {
        Report.heading("Scale: \(installed) apps, \(installed * requestsPerApp) task requests, \(running) running")
        let baseline = try measureBaseline()
        let scale = try measureScale()
        report(benchmark, baseline: baseline, scale: scale)
    }

    // MARK: Figures

    struct RestartSample {
        /// From the spawn to `ListApps` answering with every app, ns.
        var answered: UInt64
        /// From the spawn to the last surviving app reattaching, ns (nil without apps).
        var allReattached: UInt64?
        /// From the spawn to the median app reattaching, ns.
        var medianReattached: UInt64?
    }

    struct BaselineFigures {
        var rss = 0
        var hwm = 0
        var split = ""
        var restarts: [RestartSample] = []
        var listApps: [UInt64] = []
        var listBytes = 0
        var cli: [UInt64] = []
    }

    struct ScaleFigures {
        var installSeconds = 0.0
        var openSeconds = 0.0
        var rss = 0
        var hwm = 0
        var split = ""
        var threads = 0
        var afterInstallRSS = 0
        var restartedRSS = 0
        var restartedHWM = 0
        var pendingRequests = 0
        var tasksBytes = 0
        var tasksCall: [UInt64] = []
        var states: [String: Int] = [:]
        var restarts: [RestartSample] = []
        var listApps: [UInt64] = []
        var listBytes = 0
        var cli: [UInt64] = []
        var cliTasks = ""
        var alone = ConcurrentCallsReport()
        var together: [ConcurrentCallsReport] = []
        var aloneDaemonCPU: UInt64 = 0
        var togetherDaemonCPU: UInt64 = 0
    }

    // MARK: Baseline

    /// The same daemon binary with no apps: memory, restarts; then with 10 installed apps: `ListApps` and the CLI.
    static func measureBaseline() throws -> BaselineFigures {
        var figures = BaselineFigures()
        let daemon = try DaemonFixture(settings: settings)
        defer { daemon.tearDown() }
        try daemon.start()
        MonotonicClock.sleep(milliseconds: 1_000)
        (figures.rss, figures.hwm) = FootprintBenchmarks.memory(daemon.pid)
        figures.split = FootprintBenchmarks.split(daemon.pid)
        for _ in 0..<restarts {
            figures.restarts.append(try restart(daemon, apps: 0, survivors: 0))
            MonotonicClock.sleep(milliseconds: 200)
        }
        for index in 0..<smallApps {
            try daemon.install(try daemon.probeBundle(id: "bench.small\(index)"))
        }
        (figures.listApps, figures.listBytes) = try timeListApps(daemon, samples: smallListSamples, apps: smallApps)
        figures.cli = try timeCLI(daemon, samples: cliSamples)
        return figures
    }

    // MARK: The populated daemon

    static func measureScale() throws -> ScaleFigures {
        var figures = ScaleFigures()
        let daemon = try DaemonFixture(settings: settings)
        defer { daemon.tearDown() }
        try daemon.start()
        let readyPath = daemon.root + "/ready.sock"
        let ready = try UnixSocket.bindDatagram(path: readyPath)
        defer { close(ready) }
        try FileManager.default.createDirectory(atPath: daemon.root + "/listen", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: daemon.root + "/calls", withIntermediateDirectories: true)

        // 1,000 installs.
        let identifiers = (0..<requestsPerApp).map { "bench.task\($0)" }
        let manifest: [String: Any] = [
            "UIBackgroundModes": ["fetch", "processing"], "BGTaskSchedulerPermittedIdentifiers": identifiers,
        ]
        var start = MonotonicClock.now()
        for index in 0..<installed {
            var arguments = ["--scale", "--report", readyPath, "--submit", "\(requestsPerApp)"]
            if index < firstRunning {
                arguments.append("--exit")
            } else if index < firstRunning + callers {
                arguments += ["--hold-task", "--listen", listenPath(daemon, index)]
            }
            try daemon.install(try daemon.probeBundle(id: appID(index), arguments: arguments, extra: manifest))
        }
        figures.installSeconds = Double(MonotonicClock.now() - start) / 1e9
        figures.afterInstallRSS = FootprintBenchmarks.memory(daemon.pid).rss

        // Every app opened once; each submits its requests while launching and says so once active.
        let openProfile = PhaseProfile("open", pid: daemon.pid)
        start = MonotonicClock.now()
        for index in 0..<installed {
            try daemon.open(appID(index))
            guard let bytes = try UnixSocket.receiveDatagram(ready, timeoutMilliseconds: 30_000),
                let message = ScaleReady(decoding: bytes)
            else {
                throw BenchError("\(appID(index)) did not report within 30 s; see \(daemon.stateDirectory)/logs/\(appID(index)).log")
            }
            guard message.app == appID(index), message.submitted == requestsPerApp else {
                throw BenchError("\(message.app) submitted \(message.submitted) of \(requestsPerApp) requests: \(message.firstError)")
            }
        }
        figures.openSeconds = Double(MonotonicClock.now() - start) / 1e9
        openProfile?.stop()
        try waitForSteadyState(daemon)
        MonotonicClock.sleep(milliseconds: 2_000)

        // 1. Memory, and what the daemon holds.
        (figures.rss, figures.hwm) = FootprintBenchmarks.memory(daemon.pid)
        figures.split = FootprintBenchmarks.split(daemon.pid)
        figures.threads = ProcReader.threads(daemon.pid).count
        for app in try daemon.apps() { figures.states[app.state, default: 0] += 1 }
        let tasksConnection = try RawVarlink(daemon.socket)
        let tasksRequest = try VarlinkCodec.encodeCall(ControlInterface.Method.tasks, ControlInterface.TasksParameters())
        var tasks: [UInt8] = []
        for _ in 0..<5 {
            let start = MonotonicClock.now()
            tasks = try tasksConnection.call(tasksRequest)
            figures.tasksCall.append(MonotonicClock.now() - start)
        }
        figures.tasksBytes = tasks.count
        if let keep = ProcessInfo.processInfo.environment["OFFSTAGE_SCALE_KEEP_STORE"], !keep.isEmpty {
            // A copy of the populated store, to profile a daemon's start on it by hand.
            try? FileManager.default.createDirectory(atPath: keep, withIntermediateDirectories: true)
            for suffix in ["", "-wal", "-shm"] {
                let source = daemon.stateDirectory + "/offstage.sqlite" + suffix
                try? FileManager.default.removeItem(atPath: keep + "/offstage.sqlite" + suffix)
                try? FileManager.default.copyItem(atPath: source, toPath: keep + "/offstage.sqlite" + suffix)
            }
        }
        let decoded = try JSONDecoder().decode(Reply<ControlInterface.TasksReply>.self, from: Data(tasks)).parameters
        figures.pendingRequests = decoded.tasks.filter { $0.kind != "fetch" && $0.state == "pending" }.count
        figures.cliTasks = try runCLIOnce(daemon, ["tasks"])

        // 3. ListApps on a persistent connection, then the CLI.
        let listProfile = PhaseProfile("listapps", pid: daemon.pid)
        (figures.listApps, figures.listBytes) = try timeListApps(daemon, samples: listSamples, apps: installed)
        listProfile?.stop()
        figures.cli = try timeCLI(daemon, samples: cliSamples)

        // 4. Concurrent SDK calls: a warm-up round, one app alone, then the 50 at once.
        let callerIndices = Array(firstRunning..<(firstRunning + callers))
        _ = try callRound(daemon, callerIndices, pairs: 20, round: "warmup")
        var cpu = MonotonicClock.processCPU(daemon.pid) ?? 0
        figures.alone = try callRound(daemon, [firstRunning], pairs: alonePairs, round: "alone")[0]
        figures.aloneDaemonCPU = (MonotonicClock.processCPU(daemon.pid) ?? cpu) - cpu
        let concurrentProfile = PhaseProfile("concurrent", pid: daemon.pid)
        cpu = MonotonicClock.processCPU(daemon.pid) ?? 0
        figures.together = try callRound(daemon, callerIndices, pairs: concurrentPairs, round: "together")
        figures.togetherDaemonCPU = (MonotonicClock.processCPU(daemon.pid) ?? cpu) - cpu
        concurrentProfile?.stop()

        // 2. Restarts: kill -9, start, time until it answers and until every surviving app has reattached.
        let restartProfile = PhaseProfile("restart", pid: nil)
        for _ in 0..<restarts {
            MonotonicClock.sleep(milliseconds: 1_500)  // the thawed apps are suspended again meanwhile
            figures.restarts.append(try restart(daemon, apps: installed, survivors: running))
        }
        restartProfile?.stop()
        try waitForSteadyState(daemon)
        (figures.restartedRSS, figures.restartedHWM) = FootprintBenchmarks.memory(daemon.pid)
        return figures
    }

    static func listenPath(_ daemon: DaemonFixture, _ index: Int) -> String { daemon.root + "/listen/\(index).sock" }

    /// Waits until only the 100 apps run, the 49 without a task are suspended, and the rest have exited.
    static func waitForSteadyState(_ daemon: DaemonFixture) throws {
        let deadline = MonotonicClock.now() + 60_000_000_000
        var last = ""
        while MonotonicClock.now() < deadline {
            let apps = try daemon.apps()
            let runningNow = apps.filter { $0.pid != nil }.count
            let suspended = apps.filter { $0.state == "suspended" }.count
            if apps.count == installed, runningNow == running, suspended == running - callers - 1 { return }
            last = "\(apps.count) installed, \(runningNow) running, \(suspended) suspended"
            MonotonicClock.sleep(milliseconds: 200)
        }
        throw BenchError("the daemon did not settle with \(running) apps running (\(last)); see \(daemon.root)")
    }

    // MARK: Restart

    /// kill -9 of the daemon, then a new one on the same state: from its spawn, how long until `ListApps` answers
    /// with `apps` apps, and until `survivors` apps have reattached (the daemon logs "reattached after a daemon
    /// restart" with the time it handled each reattach, on the same wall clock as the spawn's).
    static func restart(_ daemon: DaemonFixture, apps: Int, survivors: Int) throws -> RestartSample {
        daemon.crash()
        let wall = wallSeconds()
        let spawned = MonotonicClock.now()
        let process = try daemon.spawn()
        var answered: UInt64?
        let request = try VarlinkCodec.encodeCall(ControlInterface.Method.listApps, NoParameters())
        while answered == nil {
            guard MonotonicClock.now() - spawned < 30_000_000_000, process.isRunning else {
                throw BenchError("the restarted daemon did not answer within 30 s; see \(daemon.root)/daemon.log")
            }
            if let connection = try? RawVarlink(daemon.socket), let reply = try? connection.call(request) {
                let now = MonotonicClock.now()
                let count = try JSONDecoder().decode(Reply<ControlInterface.AppsReply>.self, from: Data(reply)).parameters.apps.count
                guard count == apps else { throw BenchError("the restarted daemon lists \(count) apps, not \(apps)") }
                answered = now - spawned
            } else {
                MonotonicClock.sleep(milliseconds: 1)
            }
        }
        guard survivors > 0 else { return RestartSample(answered: answered!) }
        var reattached: [String: Double] = [:]
        while reattached.count < survivors {
            guard MonotonicClock.now() - spawned < 60_000_000_000 else {
                throw BenchError("only \(reattached.count) of \(survivors) apps reattached within 60 s of the restart")
            }
            MonotonicClock.sleep(milliseconds: 100)
            let log = try daemon.call(
                ControlInterface.Method.log, ControlInterface.LogParameters(limit: 4 * survivors + 500),
                as: ControlInterface.LogReply.self)
            for line in log.entries
            where line.at >= wall && line.kind == "attach" && line.message.hasPrefix("reattached after a daemon restart") {
                if let app = line.app, reattached[app] == nil { reattached[app] = line.at }
            }
        }
        let times = reattached.values.map { UInt64(max(0, ($0 - wall) * 1e9)) }.sorted()
        return RestartSample(answered: answered!, allReattached: times.last, medianReattached: times[times.count / 2])
    }

    static func wallSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    // MARK: ListApps and the CLI

    /// `ListApps` timed on one connection kept open, from writing the request to reading the reply's last byte (the
    /// reply is not decoded: the figure is the daemon's and the socket's). Returns the samples and the reply size.
    static func timeListApps(_ daemon: DaemonFixture, samples: Int, apps: Int) throws -> ([UInt64], Int) {
        let connection = try RawVarlink(daemon.socket)
        let request = try VarlinkCodec.encodeCall(ControlInterface.Method.listApps, NoParameters())
        let first = try connection.call(request)
        let listed = try JSONDecoder().decode(Reply<ControlInterface.AppsReply>.self, from: Data(first)).parameters.apps.count
        guard listed == apps else { throw BenchError("ListApps returned \(listed) apps, not \(apps)") }
        for _ in 0..<20 { _ = try connection.call(request) }
        var times: [UInt64] = []
        times.reserveCapacity(samples)
        for _ in 0..<samples {
            let start = MonotonicClock.now()
            _ = try connection.call(request)
            times.append(MonotonicClock.now() - start)
        }
        return (times, first.count + 1)
    }

    /// `offstage apps` end to end: the real CLI process, from its spawn to its exit.
    static func timeCLI(_ daemon: DaemonFixture, samples: Int) throws -> [UInt64] {
        _ = try runCLIOnce(daemon, ["apps"])
        var times: [UInt64] = []
        for _ in 0..<samples {
            let start = MonotonicClock.now()
            let status = try runCLI(daemon, ["apps"], output: "/dev/null")
            times.append(MonotonicClock.now() - start)
            guard status == 0 else { throw BenchError("offstage apps exited with status \(status)") }
        }
        return times
    }

    /// Runs the CLI once with its output kept; returns a one-line summary (exit status, lines, first error line).
    static func runCLIOnce(_ daemon: DaemonFixture, _ arguments: [String]) throws -> String {
        let output = daemon.root + "/cli-\(arguments[0]).out"
        let status = try runCLI(daemon, arguments, output: output)
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        let lines = text.split(separator: "\n")
        if status != 0 {
            return "`offstage \(arguments.joined(separator: " "))` exited with status \(status): \(lines.first ?? "")"
        }
        return "`offstage \(arguments.joined(separator: " "))` exit 0, \(lines.count) lines"
    }

    /// Runs `offstage ARGUMENTS --socket …` and waits for it (blocking `waitpid`, so the exit is seen at once).
    static func runCLI(_ daemon: DaemonFixture, _ arguments: [String], output: String) throws -> Int32 {
        let child = try ChildProcess(try Products.path("offstage"), arguments + ["--socket", daemon.socket], outputPath: output)
        var status: Int32 = 0
        while waitpid(child.pid, &status, 0) < 0 {
            guard errno == EINTR else { throw SystemCallError("waitpid") }
        }
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    // MARK: Concurrent calls

    /// Sends `go PAIRS FILE` to each app's socket, as close together as the benchmark can, and collects the
    /// reports.
    static func callRound(
        _ daemon: DaemonFixture, _ indices: [Int], pairs: Int, round: String
    ) throws -> [ConcurrentCallsReport] {
        let sender = try UnixSocket.datagram()
        defer { close(sender) }
        let files = indices.map { daemon.root + "/calls/\(round)-\($0).json" }
        for (index, file) in zip(indices, files) {
            try UnixSocket.send(sender, datagram: Array("go \(pairs) \(file)".utf8), to: listenPath(daemon, index))
        }
        let deadline = MonotonicClock.now() + 180_000_000_000
        var reports: [ConcurrentCallsReport?] = Array(repeating: nil, count: files.count)
        while reports.contains(where: { $0 == nil }) {
            guard MonotonicClock.now() < deadline else { throw BenchError("the \(round) round did not finish within 180 s") }
            MonotonicClock.sleep(milliseconds: 20)
            for (position, file) in files.enumerated() where reports[position] == nil {
                guard let data = FileManager.default.contents(atPath: file) else { continue }
                reports[position] = try JSONDecoder().decode(ConcurrentCallsReport.self, from: data)
            }
        }
        let result = reports.compactMap { $0 }
        let invalid = result.map(\.invalidTasks).reduce(0, +)
        guard invalid == 0 else { throw BenchError("\(invalid) beginBackgroundTask calls returned the invalid identifier") }
        return result
    }

    // MARK: Report

    static func report(_ benchmark: Benchmark, baseline: BaselineFigures, scale: ScaleFigures) {
        let mb = FootprintBenchmarks.megabytes
        func ms(_ nanoseconds: Double) -> String { String(format: "%.1f ms", nanoseconds / 1e6) }
        func percentiles(_ samples: [UInt64]) -> String {
            let d = Distribution(samples)
            return "p50 \(ms(d.p50))  p99 \(ms(d.p99))  max \(ms(d.maximum))  (n=\(d.count))"
        }

        Report.line("built: \(installed) installs in \(String(format: "%.1f", scale.installSeconds)) s, \(installed) opens in \(String(format: "%.1f", scale.openSeconds)) s; states: \(scale.states.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", "))")
        Report.line("pending task requests (io.offstage.Control.Tasks): \(scale.pendingRequests), reply \(scale.tasksBytes / 1024) kB in \(percentiles(scale.tasksCall)); CLI: \(scale.cliTasks)")

        // 1. Memory.
        benchmark.measurement(Metrics.scaleRSS, scale.rss)
        benchmark.measurement(Metrics.scaleHWM, scale.hwm)
        benchmark.measurement(Metrics.scaleIdleRSS, baseline.rss)
        Report.line("")
        Report.line("1. daemon memory: VmRSS \(mb(scale.rss)), VmHWM \(mb(scale.hwm)) (\(scale.threads) threads; \(scale.split))")
        Report.line("   after the \(installed) installs, before any launch: VmRSS \(mb(scale.afterInstallRSS)); after the \(restarts) restarts (state read back from the store): VmRSS \(mb(scale.restartedRSS)), VmHWM \(mb(scale.restartedHWM))")
        Report.line("   baseline: idle daemon, 0 apps: VmRSS \(mb(baseline.rss)), VmHWM \(mb(baseline.hwm)) (\(baseline.split))")
        Report.line("   ratio VmRSS \(Report.ratio(Double(scale.rss), Double(baseline.rss))); growth \(mb(scale.rss - baseline.rss)) ≈ \(String(format: "%.1f", Double(scale.rss - baseline.rss) / Double(installed))) kB per app")
        let worstMemory = max(scale.rss, scale.restartedRSS)
        Report.line("   target VmRSS ≤ 64 MB: \(Report.verdict(worstMemory <= 64 * 1024)) (VmHWM \(scale.hwm <= 64 * 1024 ? "also" : "NOT") within)")

        // 2. Restart recovery.
        let answered = scale.restarts.map(\.answered)
        let reattached = scale.restarts.compactMap(\.allReattached)
        let median = scale.restarts.compactMap(\.medianReattached)
        let baseAnswered = baseline.restarts.map(\.answered)
        Report.record(benchmark, Metrics.restartAnswered, answered)
        Report.record(benchmark, Metrics.restartReattached, reattached)
        Report.record(benchmark, Metrics.restartBaseline, baseAnswered)
        Report.line("")
        Report.line("2. restart recovery (kill -9, start; \(restarts) restarts, times from the spawn):")
        Report.line("   ListApps answers with \(installed) apps:     \(percentiles(answered))")
        Report.line("   last of \(running) apps reattached:          \(percentiles(reattached))")
        Report.line("   median app reattached:              \(percentiles(median))")
        Report.line("   baseline: 0 apps, ListApps answers: \(percentiles(baseAnswered))")
        let worstRecovery = Double(reattached.max() ?? .max)
        Report.line("   ratio p50 answer \(Report.ratio(Distribution(answered).p50, Distribution(baseAnswered).p50)); target ≤ 500 ms to every app reattached (max): \(Report.verdict(worstRecovery <= 500e6)); to answering: \(Report.verdict(Double(answered.max() ?? .max) <= 500e6))")

        // 3. ListApps.
        Report.record(benchmark, Metrics.listAppsScale, scale.listApps)
        Report.record(benchmark, Metrics.listAppsSmall, baseline.listApps)
        Report.record(benchmark, Metrics.cliAppsScale, scale.cli)
        Report.record(benchmark, Metrics.cliAppsSmall, baseline.cli)
        let list = Distribution(scale.listApps)
        let cli = Distribution(scale.cli)
        Report.line("")
        Report.line("3. ListApps (offstage apps):")
        Report.latency("call, \(installed) apps (\(scale.listBytes / 1024) kB reply)", list)
        Report.latency("baseline: call, \(smallApps) apps (\(baseline.listBytes) B reply)", Distribution(baseline.listApps))
        Report.latency("offstage apps end to end, \(installed) apps", cli)
        Report.latency("baseline: offstage apps, \(smallApps) apps", Distribution(baseline.cli))
        Report.line("   ratio call p50 \(Report.ratio(list.p50, Distribution(baseline.listApps).p50)), CLI p50 \(Report.ratio(cli.p50, Distribution(baseline.cli).p50))")
        Report.line("   target < 50 ms: call p99 \(Report.verdict(list.p99 < 50e6)); CLI end to end p99 \(Report.verdict(cli.p99 < 50e6))")

        // 4. Concurrent calls.
        let aloneSamples = scale.alone.begin + scale.alone.end
        let togetherSamples = scale.together.flatMap { $0.begin + $0.end }
        let aloneSeconds = Double(scale.alone.finish - scale.alone.start) / 1e9
        let togetherStart = scale.together.map(\.start).min() ?? 0
        let togetherFinish = scale.together.map(\.finish).max() ?? 0
        let togetherSeconds = Double(togetherFinish - togetherStart) / 1e9
        let aloneRate = Double(aloneSamples.count) / aloneSeconds
        let togetherRate = Double(togetherSamples.count) / togetherSeconds
        Report.record(benchmark, Metrics.concurrentCall, togetherSamples)
        Report.record(benchmark, Metrics.aloneCall, aloneSamples)
        benchmark.measurement(Metrics.concurrentRate, Int(togetherRate))
        benchmark.measurement(Metrics.aloneRate, Int(aloneRate))
        let starts = scale.together.map { Double($0.start - togetherStart) / 1e6 }
        Report.line("")
        Report.line("4. concurrent SDK calls (beginBackgroundTask/endBackgroundTask) with \(installed) apps installed:")
        Report.latency("\(callers) apps at once, per call", Distribution(togetherSamples))
        Report.latency("baseline: 1 app alone, per call", Distribution(aloneSamples))
        Report.line("   \(callers) apps: \(togetherSamples.count) calls in \(String(format: "%.2f", togetherSeconds)) s = \(Int(togetherRate)) calls/s (starts spread over \(String(format: "%.1f", starts.max() ?? 0)) ms); daemon CPU \(String(format: "%.1f", Double(scale.togetherDaemonCPU) / Double(togetherSamples.count) / 1000)) µs per call, \(String(format: "%.0f", Double(scale.togetherDaemonCPU) / 1e7 / togetherSeconds)) % of a core")
        Report.line("   baseline: 1 app: \(aloneSamples.count) calls in \(String(format: "%.2f", aloneSeconds)) s = \(Int(aloneRate)) calls/s; daemon CPU \(String(format: "%.1f", Double(scale.aloneDaemonCPU) / Double(aloneSamples.count) / 1000)) µs per call, \(String(format: "%.0f", Double(scale.aloneDaemonCPU) / 1e7 / aloneSeconds)) % of a core")
        Report.line("   ratio calls/s \(Report.ratio(togetherRate, aloneRate)); p99 per call \(Report.ratio(Distribution(togetherSamples).p99, Distribution(aloneSamples).p99))")
    }
}

/// A Varlink reply's envelope, to decode a raw reply.
struct Reply<Parameters: Decodable>: Decodable {
    var parameters: Parameters
}

/// One Varlink connection used without the protocol's client: the request's bytes go out as they are and the
/// reply is read up to its NUL and not decoded, so a timing holds the daemon and the socket only, and no client-side
/// size limit applies.
final class RawVarlink {
    let fd: Int32
    /// Bytes read past the end of the last reply.
    private var pending: [UInt8] = []

    init(_ path: String) throws { fd = try UnixSocket.connect(path: path) }
    deinit { close(fd) }

    func call<Parameters: Encodable>(_ method: String, _ parameters: Parameters) throws -> [UInt8] {
        try call(try VarlinkCodec.encodeCall(method, parameters))
    }

    /// Sends `request` (JSON without its NUL) and returns the reply's JSON.
    func call(_ request: Data) throws -> [UInt8] {
        var bytes = [UInt8](request)
        bytes.append(0)
        try bytes.withUnsafeBytes { try UnixSocket.writeAll(fd, $0) }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var scanned = 0
        while true {
            if let end = pending[scanned...].firstIndex(of: 0) {
                let reply = Array(pending[..<end])
                pending.removeSubrange(...end)
                return reply
            }
            scanned = pending.count
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw SystemCallError("read from the daemon", code: count == 0 ? EPIPE : errno) }
            pending.append(contentsOf: chunk[..<count])
        }
    }
}

/// `perf record -g` of one phase, when `OFFSTAGE_SCALE_PERF` names a folder to write `<phase>.data` in (off by
/// default: the figures are taken without it). Attached to one pid, or the whole machine when the phase spans
/// daemon restarts. Read the result with `perf report -i <phase>.data --comm offstaged --no-children`.
final class PhaseProfile {
    let recorder: ChildProcess

    init?(_ phase: String, pid: pid_t?) {
        guard let folder = ProcessInfo.processInfo.environment["OFFSTAGE_SCALE_PERF"], !folder.isEmpty else { return nil }
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let target = pid.map { ["-p", "\($0)"] } ?? ["-a"]
        guard
            let recorder = try? ChildProcess(
                "/usr/bin/perf", ["record", "-g", "-F", "999", "-o", folder + "/\(phase).data"] + target,
                outputPath: folder + "/\(phase).log")
        else { return nil }
        self.recorder = recorder
        MonotonicClock.sleep(milliseconds: 500)  // perf is attached before the phase starts
    }

    func stop() {
        recorder.signal(SIGINT)
        if !recorder.wait(seconds: 60) { recorder.stop(grace: 1) }
    }
}
