import Benchmark
import Foundation
import OffstageBenchKit
import OffstageProtocol

/// The test kit (issue KIT): how long an app developer's background tests take.
///
/// - Lifecycle story — install, open, home until suspended, open, force-quit — on the kit (`OffstageKitProbe`, a
///   process of its own) and on the real daemon with a real app process at its default timings, in the same run: the
///   ratio is what a developer saves on the one story both can run.
/// - A typical example test: launch, home, 24 virtual hours on battery with the app's refreshes, three background
///   pushes from its server and a reminder notification: wall and CPU time on the kit. The real daemon would take the
///   story's own 24 hours (not run); the ratio to that is the speed-up.
/// - A year of virtual time for one app: wall and CPU time.
enum KitBenchmark {
    static let lifecycleRounds = 20
    static let daemonLifecycleRounds = 5
    static let dayRounds = 10

    struct ProbeRun {
        var walls: [UInt64]
        var cpuSeconds: Double
        var counted: [String: Int]
    }

    static func run(_ benchmark: Benchmark) throws {
        let folder = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }

        Report.heading("Test kit: an app's background story on virtual time (KIT)")
        let kitLifecycle = try probe("lifecycle", rounds: lifecycleRounds, folder: folder)
        let daemonLifecycle = try daemonLifecycleWalls()
        let kitP50 = Distribution(kitLifecycle.walls).p50
        let daemonP50 = Distribution(daemonLifecycle).p50
        Report.latency("kit: install, open, home → suspended, open, quit", Distribution(kitLifecycle.walls))
        Report.latency("daemon: the same, real process, default timings", Distribution(daemonLifecycle))
        Report.line("daemon / kit (p50): \(Report.ratio(daemonP50, kitP50))")

        let day = try probe("day", rounds: dayRounds, folder: folder)
        let dayDistribution = Distribution(day.walls)
        Report.latency("kit: a typical example test (24 virtual h)", dayDistribution)
        Report.line(
            "kit: CPU per day story \(String(format: "%.1f ms", day.cpuSeconds * 1000 / Double(dayRounds))); counted \(day.counted)")
        Report.line("daemon at real speed: 86,400 s (the story's own day, not run); speed-up \(Report.ratio(86_400e9, dayDistribution.p50))")
        Report.line("target: a typical test in milliseconds (under 1 s): \(Report.verdict(dayDistribution.p50 < 1e9))")

        let year = try probe("year", rounds: 1, folder: folder)
        let yearWall = Double(year.walls.first ?? 0)
        Report.line(
            "kit: a year of virtual time for one app: \(String(format: "%.2f s", yearWall / 1e9)) wall, "
                + "\(String(format: "%.2f s", year.cpuSeconds)) CPU; counted \(year.counted)")
        Report.line("daemon at real speed: 31,536,000 s (not run); speed-up \(Report.ratio(31_536_000e9, yearWall))")

        Report.record(benchmark, Metrics.kitLifecycle, kitLifecycle.walls)
        Report.record(benchmark, Metrics.daemonLifecycle, daemonLifecycle)
        Report.record(benchmark, Metrics.kitDay, day.walls)
        Report.record(benchmark, Metrics.kitYear, year.walls)
    }

    /// Runs the kit probe's `story` `rounds` times in a process of its own and reads its report.
    static func probe(_ story: String, rounds: Int, folder: String) throws -> ProbeRun {
        let output = folder + "/kit-\(story).out"
        let child = try ChildProcess(try Products.path("OffstageKitProbe"), [story, String(rounds)], outputPath: output)
        guard child.wait(seconds: 600), child.exitCode == 0 else {
            child.stop()
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            throw BenchError("the kit probe's \(story) story failed (exit \(child.exitCode.map(String.init) ?? "none")): \(text.suffix(2000))")
        }
        let text = try String(contentsOfFile: output, encoding: .utf8)
        guard let line = text.split(separator: "\n").last(where: { $0.hasPrefix("{") }),
            let report = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let walls = report["walls"] as? [NSNumber], let cpu = report["cpuSeconds"] as? NSNumber
        else { throw BenchError("the kit probe's \(story) story printed no report: \(text.suffix(2000))") }
        let counted = (report["counted"] as? [String: NSNumber] ?? [:]).mapValues(\.intValue)
        return ProbeRun(walls: walls.map(\.uint64Value), cpuSeconds: cpu.doubleValue, counted: counted)
    }

    /// The lifecycle story on the real daemon, at its default timings, with the probe app: wall time of each round.
    static func daemonLifecycleWalls() throws -> [UInt64] {
        let daemon = try DaemonFixture()
        defer { daemon.tearDown() }
        try daemon.start()
        var walls: [UInt64] = []
        for round in 0..<daemonLifecycleRounds {
            let id = "bench.kit-lifecycle-\(round)"
            let bundle = try daemon.probeBundle(id: id)
            let start = MonotonicClock.now()
            try daemon.install(bundle)
            try daemon.open(id)
            try daemon.waitFor(id, "active")
            try daemon.home()
            try daemon.waitFor(id, "suspended")
            try daemon.open(id)
            try daemon.waitFor(id, "active")
            _ = try daemon.call(ControlInterface.Method.forceQuit, ControlInterface.AppParameters(id: id), as: EmptyReply.self)
            try daemon.waitFor(id, "notRunning")
            walls.append(MonotonicClock.now() - start)
        }
        return walls
    }

    static func makeFolder() throws -> String {
        var template = Array((NSTemporaryDirectory() + "/offstage-bench-kit-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchError("cannot make a folder in \(NSTemporaryDirectory())") }
        return String(cString: made)
    }
}

extension Metrics {
    static let kitLifecycle = latency("kit lifecycle story")
    static let daemonLifecycle = latency("daemon lifecycle story")
    static let kitDay = latency("kit day story")
    static let kitYear = latency("kit year story")
}
