import Benchmark
import COffstageSystem
import Foundation
import OffstageBenchKit
import OffstageDaemon
import OffstageProtocol

/// Memory pressure (SPEC MEM-1) on the real daemon with an app memory budget, driven by real memory: the probe apps
/// hold a known amount each (`--hold-memory`), and a grower process of our own allocates inside a group the benchmark
/// makes under the daemon's instance memory group (`offstage.<instance>/bench-grower`), so the budget's usage (the
/// instance group's `memory.usage_in_bytes`) crosses the thresholds for real and the kernel signals the daemon.
///
/// 1. **Kernel pressure → first suspended app ended**, over ``rounds`` rounds with ``latencyApps`` suspended apps:
///    t0 is when the benchmark's own eventfd, registered on the instance group's `cgroup.event_control` at the
///    critical threshold (the daemon's threshold, to the byte), becomes readable (a thread of ours sleeps in poll on
///    it; the kernel signals every eventfd of a threshold in the same pass); t1 is when the first suspended app's
///    process is gone (a pidfd of each app's process, polled). The grower allocates just past critical (16 MiB
///    over), so ending one app is enough. Then the grower is killed, usage falls under the warning threshold, the
///    daemon logs the relief, and the ended app is opened and sent home again. The daemon's log entry for the kill
///    (CLOCK_REALTIME, brought onto CLOCK_MONOTONIC with an offset read in the same round) splits t1 − t0 in two.
///    Baselines, one sample per round in the same loop: a thread of ours woken by an eventfd another thread writes
///    (the bare wake-up), the same thread reading what the daemon reads per wake-up (the budget's usage and
///    `/proc/pressure/memory`), and the whole chain bare: wake-up, reading, SIGKILL of a frozen process of our own
///    holding the same memory as an app (frozen by a cgroup of our own), its pidfd readable.
/// 2. **One episode with ``episodeApps`` suspended apps** and a grower that grows ``stepMiB`` MiB every
///    ``stepMilliseconds`` ms to a size computed from the measured usage so that exactly two apps of the ending order
///    must go to get back under critical: for each ended app, its memory as the daemon's log recorded it and the drop
///    of the budget's usage around its exit (sampled every 2 ms, the grower's own group taken out), and the number of
///    apps ended against that minimum.
enum MemoryPressureBenchmark {
    /// The budget, and the thresholds (percent of it) the daemon is given.
    static let budgetMB = 256
    static let warningPercent = 50.0
    static let criticalPercent = 70.0
    /// MiB each probe app holds.
    static let heldMiB = 24
    static let rounds = 30
    static let warmup = 2
    static let latencyApps = 2
    static let episodeApps = 4
    /// The grower of the latency rounds goes this far past critical.
    static let overshootMiB = 16
    /// The episode's grower.
    static let stepMiB = 8
    static let stepMilliseconds = 100

    static func appID(_ index: Int) -> String { "bench.mem\(index)" }

    static func run(_ benchmark: Benchmark) throws {
        // No delay before suspension; apps ended at once at critical, then at most one per 0.2 s after a fresh reading.
        let daemon = try DaemonFixture(settings: [
            "suspendDelay": 0, "memoryBudgetMB": budgetMB,
            "machinePressure": ["budgetWarning": warningPercent, "budgetCritical": criticalPercent],
            "memory": ["warningGrace": 0, "endingInterval": 0.2],
        ])
        defer { daemon.tearDown() }
        try daemon.start()
        let budget = try BudgetGroup(daemon: daemon)
        defer { budget.tearDown() }
        let status = try daemon.status()
        let freezer = status.freezer
        let pressureLine = status.memoryPressure ?? "(not reported)"

        for index in 0..<episodeApps {
            try daemon.install(try daemon.probeBundle(id: appID(index), arguments: ["--hold-memory", "\(heldMiB)"]))
        }
        let latency = try measureLatency(daemon, budget)
        let episode = try measureEpisode(daemon, budget)

        Report.record(benchmark, Metrics.pressureEnded, latency.ended)
        Report.record(benchmark, Metrics.pressureReading, latency.reading)
        Report.record(benchmark, Metrics.pressureEventfdWake, latency.wake)
        Report.record(benchmark, Metrics.pressureBareChain, latency.bareChain)
        Report.record(benchmark, Metrics.pressureFreedPerKill, episode.kills.map { UInt64(max($0.dropBytes, 0) / 1024) })
        Report.record(benchmark, Metrics.pressureRecordedPerKill, episode.kills.compactMap { $0.recordedMiB.map { UInt64($0) * 1024 } })
        benchmark.measurement(Metrics.pressureAppsEnded, episode.kills.count)
        benchmark.measurement(Metrics.pressureAppsNeeded, episode.needed)

        let ended = Distribution(latency.ended)
        let reading = Distribution(latency.reading)
        let wake = Distribution(latency.wake)
        let chain = Distribution(latency.bareChain)
        Report.heading("Memory pressure: kernel signal (critical) → first suspended app ended, \(rounds) rounds after \(warmup) warm-up")
        Report.line("daemon: budget \(budgetMB) MB, warning \(warningPercent.formattedPercent) (\(mib(budget.warning))), critical \(criticalPercent.formattedPercent) (\(mib(budget.critical))); warningGrace 0, endingInterval 0.2 s")
        Report.line("daemon's memory line: \(pressureLine)")
        Report.line("apps: \(latencyApps) probe apps holding \(heldMiB) MiB each, suspended (freezer: \(freezer)); budget usage before each round \(mib(latency.usageBefore.p50)) (p50); grower: \(overshootMiB) MiB past critical at full speed, in \(budget.growerGroup)")
        Report.latency("kernel signal → first suspended app gone", ended)
        Report.latency("  of which signal → daemon's kill entry (its log)", Distribution(latency.toDecision))
        Report.latency("  of which daemon's kill entry → app gone", Distribution(latency.decisionToGone))
        Report.latency("baseline: the pressure reading alone", reading)
        Report.latency("baseline: bare eventfd wake-up (thread → thread)", wake)
        Report.latency("baseline: bare wake → reading → SIGKILL → gone", chain)
        Report.line("ratio to the reading: p50 \(Report.ratio(ended.p50, reading.p50)), p99 \(Report.ratio(ended.p99, reading.p99)); to wake-up + reading: p50 \(Report.ratio(ended.p50, wake.p50 + reading.p50)), p99 \(Report.ratio(ended.p99, wake.p99 + reading.p99)); to the bare chain: p50 \(Report.ratio(ended.p50, chain.p50)), p99 \(Report.ratio(ended.p99, chain.p99))")
        Report.line("apps ended per round: \(latency.endedPerRound.map(String.init).joined(separator: " ")); the one ended was ranked first in the daemon's ending order in \(latency.rankedFirst) of \(latency.endedPerRound.count) rounds")
        for line in latency.skipped { Report.line("not counted: " + line) }
        Report.line("memory the daemon recorded for the app it ended: \(latency.recordedMiB.isEmpty ? "none" : "\(latency.recordedMiB.min()!)–\(latency.recordedMiB.max()!) MB") (the app's group, read by the benchmark before the round: \(mib(latency.appBytes.p50)) p50)")
        Report.line("times the budget's limit was reached during the rounds (memory.failcnt of the instance group): \(latency.limitHits)")
        Report.line("target: none in SPEC §11 (recorded, issue MEM-1)")

        Report.heading("Memory pressure: one episode, \(episodeApps) suspended apps, grower +\(stepMiB) MiB every \(stepMilliseconds) ms")
        Report.line("apps in the ending order (benchmark's reading of each app's group before the episode): " + episode.order.map { "\($0.id) \(mib($0.bytes))" }.joined(separator: ", "))
        Report.line("budget usage before: \(mib(episode.usageBefore)); grower's final size \(episode.growerMiB) MiB; peak if nobody were ended \(mib(episode.peakIfNoneEnded)); critical \(mib(budget.critical))")
        for kill in episode.kills {
            let recorded = kill.recordedMiB.map { "\($0) MB" } ?? "not in the log"
            Report.line("ended \(kill.id): the daemon recorded \(recorded); the budget's usage fell by \(mib(kill.dropBytes)) around its exit (grower taken out; raw drop \(mib(kill.rawDropBytes))); its group before the episode: \(mib(kill.groupBytes))")
        }
        Report.line("apps ended in the episode: \(episode.kills.count); needed (ending order, from the apps' sizes and the usage): \(episode.needed); needed in any order: \(episode.neededAnyOrder)")
        Report.line("budget usage after the grower finished and the kills: \(mib(episode.usageAfter)) (\(episode.usageAfter >= budget.critical ? "still critical" : "under critical"))")
        Report.line("daemon's log: \(episode.relief ?? "no relief logged")")
        Report.line("times the budget's limit was reached in the episode (memory.failcnt): \(episode.limitHits)")
        Report.line(episode.kills.count > episode.needed ? "OVER-ENDED: \(episode.kills.count - episode.needed) app(s) more than needed" : episode.kills.count < episode.needed ? "UNDER-ENDED: \(episode.needed - episode.kills.count) app(s) fewer than needed" : "ended exactly as many as needed")
    }

    // MARK: 1. Latency rounds

    struct LatencyResult {
        var ended: [UInt64] = []
        /// Of which: the kernel's signal → the instant of the daemon's kill entry in its log, and that → gone.
        var toDecision: [Double] = []
        var decisionToGone: [Double] = []
        var reading: [UInt64] = []
        var wake: [UInt64] = []
        var bareChain: [UInt64] = []
        var endedPerRound: [Int] = []
        /// Rounds not counted, and why.
        var skipped: [String] = []
        var rankedFirst = 0
        var recordedMiB: [Int] = []
        var appBytesSamples: [Double] = []
        var usageBeforeSamples: [Double] = []
        var limitHits: Int64 = 0
        var usageBefore: Distribution { Distribution(usageBeforeSamples) }
        var appBytes: Distribution { Distribution(appBytesSamples) }
    }

    static func measureLatency(_ daemon: DaemonFixture, _ budget: BudgetGroup) throws -> LatencyResult {
        let ids = (0..<latencyApps).map(appID)
        for id in ids { try openAndSuspend(daemon, id) }
        let bare = try BareChain(budget: budget, daemon: daemon)
        defer { bare.tearDown() }
        var result = LatencyResult()
        let failuresBefore = budget.failCount()
        // Until `rounds` are counted (a round another cause ended first is not; at most 10 of those).
        var round = -1
        while result.ended.count < rounds && round < warmup + rounds + 10 {
            round += 1
            let record = round >= warmup
            let apps = try ids.map { try daemon.app($0) }
            let rankedFirst = apps.first { $0.memoryEndingRank == 1 }?.id
            let pids = try apps.map { app -> pid_t in
                guard app.state == "suspended", let pid = app.pid else {
                    throw BenchError("\(app.id) is \(app.state), not suspended, before round \(round)")
                }
                return pid
            }
            let watched = try PidWatch(pids)
            defer { watched.close() }
            let appBytes = apps.first { $0.id == rankedFirst }.flatMap { $0.pid.flatMap(budget.groupUsage(of:)) }
            let lastLog = try lastLogID(daemon)
            MonotonicClock.sleep(milliseconds: 50)
            let offset = WallClock.now() - Int64(MonotonicClock.now())
            let usage = budget.usage()
            let growMiB = Int((budget.critical - usage) >> 20) + overshootMiB
            let start = MonotonicClock.now()
            let grower = try daemon.spawnHelper(
                ["grow", budget.growerGroup + "/cgroup.procs", "\(growMiB)", "\(growMiB)", "0"], output: "grower.log")
            let firstGone: (Int, UInt64)? = watched.first(timeoutMilliseconds: 10_000)
            // The thread of ours on the eventfd may run after the main thread on a busy machine: its stamp is waited for.
            var signalled = budget.crossings.first(after: start)
            let stampDeadline = MonotonicClock.now() + 2_000_000_000
            while signalled == nil && MonotonicClock.now() < stampDeadline {
                MonotonicClock.sleep(milliseconds: 1)
                signalled = budget.crossings.first(after: start)
            }
            grower.signal(SIGKILL)
            grower.wait(seconds: 5)
            guard let firstGone else {
                throw BenchError("no suspended app ended within 10 s of the grower crossing critical (round \(round), usage \(mib(budget.usage()))); see \(daemon.root)")
            }
            let (index, gone) = firstGone
            var counted = false
            if let signalled, gone >= signalled {
                counted = record
                if record { result.ended.append(gone - signalled) }
            } else if record {
                // Not a figure of this chain: something else (the machine's own PSI, say) ended the app first.
                let after = signalled.map { "it came \(Report.microseconds(Double($0 - gone))) after" } ?? "none came"
                result.skipped.append("round \(round): \(ids[index]) gone before the critical threshold's signal (\(after))")
            }
            try waitForRelief(daemon, budget, after: lastLog, round: round)
            let endedIDs = ids.indices.filter { watched.exited($0) }.map { ids[$0] }
            if counted, let signalled {
                result.endedPerRound.append(endedIDs.count)
                if ids[index] == rankedFirst { result.rankedFirst += 1 }
                let kills = try killsLogged(daemon, after: lastLog)
                result.recordedMiB += kills.compactMap { $0.recordedMiB }
                if let decided = kills.first?.at {
                    // The log's instant is CLOCK_REALTIME; brought onto CLOCK_MONOTONIC with the offset of this round.
                    let decidedMonotonic = decided * 1e9 - Double(offset)
                    result.toDecision.append(decidedMonotonic - Double(signalled))
                    result.decisionToGone.append(Double(gone) - decidedMonotonic)
                }
                if let appBytes { result.appBytesSamples.append(Double(appBytes)) }
                result.usageBeforeSamples.append(Double(usage))
            }
            for id in endedIDs { try openAndSuspend(daemon, id) }

            // The baselines, once per counted round.
            guard counted else { continue }
            let sample = try bare.sample()
            do {
                result.wake.append(sample.wake)
                result.reading.append(sample.reading)
                result.bareChain.append(sample.chain)
            }
        }
        result.limitHits = budget.failCount() - failuresBefore
        return result
    }

    // MARK: 2. One episode

    struct Kill {
        var id: String
        var recordedMiB: Int?
        var dropBytes: Int64
        var rawDropBytes: Int64
        var groupBytes: Int64
    }

    struct EpisodeResult {
        var order: [(id: String, bytes: Int64)] = []
        var usageBefore: Int64 = 0
        var growerMiB = 0
        var peakIfNoneEnded: Int64 = 0
        var kills: [Kill] = []
        var needed = 0
        var neededAnyOrder = 0
        var usageAfter: Int64 = 0
        var relief: String?
        var limitHits: Int64 = 0
    }

    static func measureEpisode(_ daemon: DaemonFixture, _ budget: BudgetGroup) throws -> EpisodeResult {
        // Each app opened and sent home in turn: the first is the least recently used, first in the ending order.
        let ids = (0..<episodeApps).map(appID)
        for id in ids { try openAndSuspend(daemon, id) }
        MonotonicClock.sleep(milliseconds: 500)
        let apps = try ids.map { try daemon.app($0) }
        let ranked = apps.sorted { ($0.memoryEndingRank ?? .max) < ($1.memoryEndingRank ?? .max) }
        var result = EpisodeResult()
        result.order = ranked.map { ($0.id, $0.pid.flatMap(budget.groupUsage(of:)) ?? 0) }
        result.usageBefore = budget.usage() - budget.growerUsage()
        let sizes = result.order.map(\.bytes)
        guard sizes.count >= 2 else { throw BenchError("fewer than two apps run") }
        // The peak: critical plus the first app and half the second, so ending one leaves it critical (by half an app)
        // and ending two puts it under (by half an app).
        let wanted = budget.critical + sizes[0] + sizes[1] / 2 - result.usageBefore
        result.growerMiB = Int((wanted + (1 << 20) - 1) >> 20)
        result.peakIfNoneEnded = result.usageBefore + Int64(result.growerMiB) << 20
        guard result.peakIfNoneEnded < budget.limit - (8 << 20) else {
            throw BenchError("the episode would reach the budget's limit (\(mib(result.peakIfNoneEnded)) of \(mib(budget.limit))): raise budgetMB")
        }
        result.needed = minimumEnded(peak: result.peakIfNoneEnded, sizes: sizes, critical: budget.critical)
        result.neededAnyOrder = minimumEnded(peak: result.peakIfNoneEnded, sizes: sizes.sorted(by: >), critical: budget.critical)

        let pids = try apps.map { app -> pid_t in
            guard let pid = app.pid, app.state == "suspended" else { throw BenchError("\(app.id) is \(app.state)") }
            return pid
        }
        let lastLog = try lastLogID(daemon)
        let failuresBefore = budget.failCount()
        let sampler = try UsageSampler(budget: budget, pids: pids)
        let grower = try daemon.spawnHelper(
            ["grow", budget.growerGroup + "/cgroup.procs", "\(result.growerMiB)", "\(stepMiB)", "\(stepMilliseconds)"],
            output: "grower.log")
        // Until the grower has its full size, then 2 s more: a later kill would be one too many as well.
        let deadline = MonotonicClock.now() + 30_000_000_000
        while budget.growerUsage() < Int64(result.growerMiB) << 20 && MonotonicClock.now() < deadline {
            MonotonicClock.sleep(milliseconds: 20)
        }
        MonotonicClock.sleep(milliseconds: 2_000)
        result.usageAfter = budget.usage()
        let (samples, exits) = sampler.stop()
        grower.signal(SIGKILL)
        grower.wait(seconds: 5)
        try waitForRelief(daemon, budget, after: lastLog, round: -1)
        result.limitHits = budget.failCount() - failuresBefore

        let logged = try killsLogged(daemon, after: lastLog)
        result.relief = try logSince(daemon, lastLog).last { $0.message.contains("memory pressure relieved") }?.message
        for (index, gone) in exits.sorted(by: { $0.value < $1.value }) {
            let id = apps[index].id
            func appsUsage(_ sample: UsageSampler.Sample) -> Int64 { sample.budget - sample.grower }
            let before = samples.last { $0.at <= gone - 30_000_000 }
            let after = samples.first { $0.at >= gone + 30_000_000 }
            let drop = before.flatMap { b in after.map { appsUsage(b) - appsUsage($0) } } ?? 0
            let rawDrop = before.flatMap { b in after.map { b.budget - $0.budget } } ?? 0
            result.kills.append(
                Kill(
                    id: id, recordedMiB: logged.first { $0.app == id }?.recordedMiB, dropBytes: drop, rawDropBytes: rawDrop,
                    groupBytes: result.order.first { $0.id == id }?.bytes ?? 0))
        }
        return result
    }

    /// The fewest apps, taken in the order given, whose ending brings `peak` under `critical`.
    static func minimumEnded(peak: Int64, sizes: [Int64], critical: Int64) -> Int {
        var usage = peak
        var count = 0
        for size in sizes where usage >= critical {
            usage -= size
            count += 1
        }
        return count
    }

    // MARK: Steps

    static func openAndSuspend(_ daemon: DaemonFixture, _ id: String) throws {
        try daemon.open(id)
        try daemon.waitFor(id, "active")
        try daemon.home()
        try daemon.waitFor(id, "suspended")
    }

    /// Waits until the budget's usage is under the warning threshold and the daemon has logged the episode's end.
    static func waitForRelief(_ daemon: DaemonFixture, _ budget: BudgetGroup, after id: Int64, round: Int) throws {
        let deadline = MonotonicClock.now() + 30_000_000_000
        while MonotonicClock.now() < deadline {
            if budget.usage() < budget.warning,
                try logSince(daemon, id).contains(where: { $0.message.contains("memory pressure relieved") })
            {
                return
            }
            MonotonicClock.sleep(milliseconds: 20)
        }
        throw BenchError("no relief within 30 s (round \(round), usage \(mib(budget.usage()))); see \(daemon.root)")
    }

    static func lastLogID(_ daemon: DaemonFixture) throws -> Int64 {
        try daemon.call(ControlInterface.Method.log, ControlInterface.LogParameters(limit: 1), as: ControlInterface.LogReply.self)
            .entries.last?.id ?? 0
    }

    static func logSince(_ daemon: DaemonFixture, _ id: Int64) throws -> [ControlInterface.LogLine] {
        try daemon.call(ControlInterface.Method.log, ControlInterface.LogParameters(limit: 500), as: ControlInterface.LogReply.self)
            .entries.filter { $0.id > id }
    }

    /// The apps the daemon ended for memory since log entry `id`, with the memory it recorded (`…, 35 MB`).
    static func killsLogged(_ daemon: DaemonFixture, after id: Int64) throws -> [(app: String, recordedMiB: Int?, at: Double)] {
        try logSince(daemon, id).filter { $0.message.contains("ended for memory") }.map { entry in
            let words = entry.message.split(separator: " ")
            let megabytes = words.firstIndex(of: "MB").flatMap { $0 > 0 ? Int(words[$0 - 1]) : nil }
            return (entry.app ?? "?", megabytes, entry.at)
        }
    }

    static func mib(_ bytes: Int64) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
    static func mib(_ bytes: Double) -> String { String(format: "%.1f MiB", bytes / 1_048_576) }
}

extension Double {
    fileprivate var formattedPercent: String { String(format: "%.0f %%", self) }
}
