import Benchmark
import Foundation
import OffstageBenchKit

/// Figures 3 and 4: the daemon's memory with 100 installed apps of which 10 were launched, and its wake-ups while
/// nothing is due; each against a baseline measured in the same run.
enum FootprintBenchmarks {
    static let installed = 100
    static let launched = 10
    static let idleSeconds: UInt64 = 60
    /// The idle benchmark's daemon has an app memory budget (SPEC MEM-1), large enough that its apps leave memory
    /// normal: every memory wake-up is armed (the PSI triggers and the budget's usage thresholds on an eventfd), and
    /// none may wake it while nothing happens.
    static let idleBudgetMB = 1024

    /// A daemon (default settings, and `settings`) with `installed` probe apps installed and the first `launched`
    /// opened one after another: the last is in front, the others went to the background and were suspended.
    static func populatedDaemon(settings: [String: Any] = [:]) throws -> (DaemonFixture, afterInstall: (rss: Int, hwm: Int)) {
        let daemon = try DaemonFixture(settings: settings)
        do {
            try daemon.start()
            for index in 0..<installed {
                try daemon.install(try daemon.probeBundle(id: appID(index)))
            }
            let afterInstall = memory(daemon.pid)
            for index in 0..<launched {
                try daemon.open(appID(index))
                try daemon.waitFor(appID(index), "active")
            }
            for index in 0..<(launched - 1) { try daemon.waitFor(appID(index), "suspended") }
            // Let anything the last transitions started (store writes, log flushes) finish.
            MonotonicClock.sleep(milliseconds: 2_000)
            return (daemon, afterInstall)
        } catch {
            daemon.tearDown()
            throw error
        }
    }

    static func appID(_ index: Int) -> String { "bench.app" + String(format: "%03d", index) }

    static func memory(_ pid: pid_t) -> (rss: Int, hwm: Int) {
        (ProcReader.statusKilobytes(pid, "VmRSS") ?? -1, ProcReader.statusKilobytes(pid, "VmHWM") ?? -1)
    }

    /// VmRSS split into the daemon's own memory (RssAnon: heap, stacks) and mapped files (RssFile: mostly the
    /// shared libraries, shared with every other Swift process), for the report.
    static func split(_ pid: pid_t) -> String {
        let anonymous = ProcReader.statusKilobytes(pid, "RssAnon") ?? -1
        let file = ProcReader.statusKilobytes(pid, "RssFile") ?? -1
        return "RssAnon \(megabytes(anonymous)) + RssFile \(megabytes(file))"
    }

    static func megabytes(_ kilobytes: Int) -> String { String(format: "%.1f MB", Double(kilobytes) / 1024) }

    // MARK: Memory

    static func runMemory(_ benchmark: Benchmark) throws {
        // Baseline: the same daemon binary, idle with no apps, in the same run.
        let idle = try DaemonFixture()
        let idleMemory: (rss: Int, hwm: Int)
        let idleSplit: String
        do {
            defer { idle.tearDown() }
            try idle.start()
            MonotonicClock.sleep(milliseconds: 1_000)
            idleMemory = memory(idle.pid)
            idleSplit = split(idle.pid)
        }

        let (daemon, afterInstall) = try populatedDaemon()
        defer { daemon.tearDown() }
        let populated = memory(daemon.pid)
        let populatedSplit = split(daemon.pid)
        let threads = ProcReader.threads(daemon.pid).count

        benchmark.measurement(Metrics.rss, populated.rss)
        benchmark.measurement(Metrics.hwm, populated.hwm)
        benchmark.measurement(Metrics.idleRSS, idleMemory.rss)
        benchmark.measurement(Metrics.idleHWM, idleMemory.hwm)

        Report.heading("Daemon memory: \(installed) apps installed, \(launched) launched (1 in front, \(launched - 1) suspended)")
        Report.line("daemon VmRSS \(megabytes(populated.rss)), VmHWM \(megabytes(populated.hwm)) (\(threads) threads; \(populatedSplit))")
        Report.line("  after the \(installed) installs, before any launch: VmRSS \(megabytes(afterInstall.rss)), VmHWM \(megabytes(afterInstall.hwm))")
        Report.line("baseline: idle daemon, 0 apps: VmRSS \(megabytes(idleMemory.rss)), VmHWM \(megabytes(idleMemory.hwm)) (\(idleSplit))")
        Report.line("ratio VmRSS: \(Report.ratio(Double(populated.rss), Double(idleMemory.rss))); growth \(megabytes(populated.rss - idleMemory.rss)) for \(installed) apps ≈ \(String(format: "%.0f", Double(populated.rss - idleMemory.rss) / Double(installed))) kB per app")
        Report.line("later target ≤ 64 MB with 1,000 apps (not measured here): at \(installed) apps VmRSS is \(Report.verdict(populated.rss <= 64 * 1024)) against 64 MB")
    }

    // MARK: Wake-ups

    /// Sums the context switches of every thread of `pid`: a sleeping thread that wakes ends its run in a voluntary
    /// switch (it blocks again) or an involuntary one (it is preempted), so the difference over a window counts
    /// wake-ups. Threads that start and end inside the window would be missed, so the thread sets are compared too.
    static func runWakeups(_ benchmark: Benchmark) throws {
        let (daemon, _) = try populatedDaemon(settings: ["memoryBudgetMB": idleBudgetMB])
        defer { daemon.tearDown() }
        let memoryLine = try daemon.status().memoryPressure ?? "(not reported)"
        // Two baselines in the same window: a daemon with no apps, and a process with a 1 Hz timer.
        let empty = try DaemonFixture()
        defer { empty.tearDown() }
        try empty.start()
        let ticker = try daemon.spawnHelper(["tick"], output: "tick.log")
        MonotonicClock.sleep(milliseconds: 1_000)

        let watched = [daemon.pid, empty.pid, ticker.pid]
        let before = watched.map(ProcReader.threads)
        let start = MonotonicClock.now()
        MonotonicClock.sleep(nanoseconds: idleSeconds * 1_000_000_000)
        let elapsed = Double(MonotonicClock.now() - start) / 1e9
        let after = watched.map(ProcReader.threads)

        func wakeups(_ index: Int) -> (total: Int, busy: [String], changedThreads: Bool) {
            var total = 0
            var busy: [String] = []
            for (tid, thread) in after[index] {
                let delta = thread.switches - (before[index][tid]?.switches ?? 0)
                total += delta
                if delta > 0 { busy.append("\(thread.name)[\(tid)]: \(delta)") }
            }
            return (total, busy.sorted(), Set(after[index].keys) != Set(before[index].keys))
        }
        let populated = wakeups(0)
        let bare = wakeups(1)
        let tick = wakeups(2)

        benchmark.measurement(Metrics.wakeups, populated.total)
        benchmark.measurement(Metrics.emptyWakeups, bare.total)
        benchmark.measurement(Metrics.tickWakeups, tick.total)

        Report.heading("Idle wake-ups over \(String(format: "%.1f", elapsed)) s: \(installed) apps installed, \(launched) launched, nothing due")
        Report.line("daemon's memory (app memory budget \(idleBudgetMB) MB): \(memoryLine)")
        Report.line("daemon: \(populated.total) wake-ups (\(after[0].count) threads\(populated.changedThreads ? ", thread set changed" : ""))\(populated.busy.isEmpty ? "" : ": " + populated.busy.joined(separator: ", "))")
        Report.line("baseline: daemon with 0 apps: \(bare.total) wake-ups\(bare.busy.isEmpty ? "" : ": " + bare.busy.joined(separator: ", "))")
        Report.line("baseline: 1 Hz timer process: \(tick.total) wake-ups")
        Report.line("ratio daemon / 1 Hz timer: \(Report.ratio(Double(populated.total), Double(tick.total)))")
        Report.line("target 0 periodic wake-ups: \(Report.verdict(populated.total == 0))")
    }
}
