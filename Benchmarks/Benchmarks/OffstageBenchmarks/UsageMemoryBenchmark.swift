import Benchmark
import Foundation
import OffstageBenchKit
import OffstageCore
@_spi(Benchmarks) import OffstageDaemon
import OffstageProtocol

/// The daemon's memory with 1,000 apps and 31 days of their usage (SPEC SET-3, §11 memory), against the same daemon
/// with the same apps and no usage, in the same run; and the time `offstage usage` takes to read it all.
///
/// The apps are 1,000 small bundles (a copy of `/bin/true`: they are installed, never launched). The usage is what
/// the daemon keeps at most: for each app and each of the 31 days kept, its four rows (in front or not, metered or
/// not) and a row of memory, written into the store while the daemon is stopped, as a month of use would leave it.
/// The daemon keeps none of it in memory between queries; a query reads the rows of its window.
enum UsageMemoryBenchmark {
    static let apps = 1_000
    static let days = 31

    static func run(_ benchmark: Benchmark) throws {
        let daemon = try DaemonFixture()
        defer { daemon.tearDown() }
        try daemon.start()
        for index in 0..<apps { try daemon.install(try tinyBundle(daemon, id: appID(index))) }
        // Baseline: the same daemon, restarted with the 1,000 apps and no usage.
        daemon.stop()
        try daemon.start()
        MonotonicClock.sleep(milliseconds: 2_000)
        let bare = FootprintBenchmarks.memory(daemon.pid)
        let bareQuery = try timedQuery(daemon)
        let bareAfter = FootprintBenchmarks.memory(daemon.pid)

        daemon.stop()
        let rows = try seedUsage(DaemonPaths(root: daemon.stateDirectory).store)
        try daemon.start()
        MonotonicClock.sleep(milliseconds: 2_000)
        let seeded = FootprintBenchmarks.memory(daemon.pid)
        let query = try timedQuery(daemon)
        let after = FootprintBenchmarks.memory(daemon.pid)
        let second = try timedQuery(daemon)
        let storeBytes = (try? FileManager.default.attributesOfItem(atPath: DaemonPaths(root: daemon.stateDirectory).store)[.size] as? Int) ?? -1

        benchmark.measurement(Metrics.usageRSS, seeded.rss)
        benchmark.measurement(Metrics.usageBareRSS, bare.rss)
        Report.heading("Usage: daemon memory with \(apps) apps and \(days) days of their usage (\(rows.figures) rows, \(rows.memory) of memory)")
        Report.line("with the usage, idle: VmRSS \(FootprintBenchmarks.megabytes(seeded.rss)) (\(FootprintBenchmarks.split(daemon.pid)))")
        Report.line("baseline, the same apps and no usage, idle: VmRSS \(FootprintBenchmarks.megabytes(bare.rss))")
        Report.line("ratio idle: \(Report.ratio(Double(seeded.rss), Double(bare.rss)))")
        Report.line(
            "offstage usage of every app over \(days) days: \(query.rows) rows in \(String(format: "%.1f", query.milliseconds)) ms "
                + "(again: \(String(format: "%.1f", second.milliseconds)) ms); VmRSS after \(FootprintBenchmarks.megabytes(after.rss)), "
                + "VmHWM \(FootprintBenchmarks.megabytes(after.hwm))")
        Report.line(
            "baseline query, no usage: \(String(format: "%.1f", bareQuery.milliseconds)) ms; VmRSS after \(FootprintBenchmarks.megabytes(bareAfter.rss)), VmHWM \(FootprintBenchmarks.megabytes(bareAfter.hwm))")
        Report.line("store file: \(FootprintBenchmarks.megabytes(storeBytes / 1024))")
        Report.line("§11 daemon memory ≤ 64 MB: \(Report.verdict(after.hwm <= 64 * 1024))")
    }

    static func appID(_ index: Int) -> String { "bench.usage" + String(format: "%04d", index) }

    /// A bundle whose executable is a copy of `/bin/true`: installable, never launched.
    static func tinyBundle(_ daemon: DaemonFixture, id: String) throws -> String {
        let folder = daemon.root + "/bundles/" + id
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let manifest: [String: Any] = ["CFBundleIdentifier": id, "CFBundleExecutable": "app"]
        try PropertyListSerialization.data(fromPropertyList: manifest, format: .xml, options: 0)
            .write(to: URL(fileURLWithPath: folder + "/Info.plist"))
        try? FileManager.default.removeItem(atPath: folder + "/app")
        try FileManager.default.copyItem(atPath: "/bin/true", toPath: folder + "/app")
        return folder
    }

    /// Writes `days` days of usage for every app into the store, through the store's own code.
    static func seedUsage(_ path: String) throws -> (figures: Int, memory: Int) {
        let store = try OffstageStore(path: path)
        let today = Int64(Date().timeIntervalSince1970 / 86_400)
        var total = (figures: 0, memory: 0)
        for day in (today - Int64(days) + 1)...today {
            var figures: [UsageKey: UsageFigures] = [:]
            var memory: [UsageDay: MemoryFigures] = [:]
            for index in 0..<apps {
                let app = AppID(stringLiteral: appID(index))
                for (foreground, metered) in [(true, true), (true, false), (false, true), (false, false)] {
                    figures[UsageKey(app: app, day: day, foreground: foreground, metered: metered)] = UsageFigures(
                        received: Int64(1_000_000 + index), sent: 20_000, transferReceived: foreground ? 0 : 5_000_000,
                        cpuMicroseconds: 3_000_000, seconds: 600, wakeUps: foreground ? 0 : 12)
                }
                memory[UsageDay(app: app, day: day)] = MemoryFigures(last: 40 << 20, peak: 80 << 20)
            }
            try store.addUsage(figures, memory: memory, firstDayKept: today - Int64(days) + 1)
            total.figures += figures.count
            total.memory += memory.count
        }
        return total
    }

    static func timedQuery(_ daemon: DaemonFixture) throws -> (rows: Int, milliseconds: Double) {
        let start = MonotonicClock.now()
        let reply = try daemon.call(
            ControlInterface.Method.usage, ControlInterface.UsageParameters(), as: ControlInterface.UsageReply.self)
        return (reply.rows.count, Double(MonotonicClock.now() - start) / 1e6)
    }
}
