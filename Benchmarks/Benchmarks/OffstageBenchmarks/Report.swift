import Benchmark
import Foundation
import OffstageBenchKit

/// The lines each benchmark prints: the figure, the baseline measured in the same run, their ratio and the
/// verdict against the target. The benchmark tool's own table shows the same samples as custom metrics.
enum Report {
    static func heading(_ title: String) {
        print("")
        print("== \(title) ==")
        print("   \(machine)")
    }

    /// One row of a latency distribution given in nanoseconds.
    static func latency(_ label: String, _ distribution: Distribution) {
        let cells = [distribution.p50, distribution.p90, distribution.p99, distribution.maximum].map(microseconds)
        print("   \(label.padding(toLength: 46, withPad: " ", startingAt: 0)) p50 \(cells[0])  p90 \(cells[1])  p99 \(cells[2])  max \(cells[3])  (n=\(distribution.count))")
    }

    static func line(_ text: String) { print("   " + text) }

    static func microseconds(_ nanoseconds: Double) -> String {
        // The unit is appended, not formatted: only ASCII goes through String(format:).
        String(format: "%8.1f", nanoseconds / 1000) + " µs"
    }

    static func ratio(_ figure: Double, _ baseline: Double) -> String {
        baseline > 0 ? String(format: "%.2f×", figure / baseline) : "n/a"
    }

    static func verdict(_ met: Bool) -> String { met ? "MET" : "MISSED" }

    /// CPU model, cores, kernel: what the figures were measured on.
    static let machine: String = {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces) } ?? "unknown CPU"
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3)
            .joined(separator: " ") ?? "?"
        return "machine: \(model), \(ProcessInfo.processInfo.activeProcessorCount) cores, Linux \(release); load average \(load)"
    }()

    /// Records every sample under a custom metric, so the benchmark tool's table shows its percentiles too.
    static func record(_ benchmark: Benchmark, _ metric: BenchmarkMetric, _ samples: [UInt64]) {
        for sample in samples { benchmark.measurement(metric, Int(clamping: sample)) }
    }
}

/// The custom metrics, one per figure and baseline. Latencies are in nanoseconds, memory in kB.
enum Metrics {
    static func latency(_ name: String) -> BenchmarkMetric { .custom(name + " (ns)", polarity: .prefersSmaller, useScalingFactor: false) }
    static func count(_ name: String) -> BenchmarkMetric { .custom(name, polarity: .prefersSmaller, useScalingFactor: false) }
    static func rate(_ name: String) -> BenchmarkMetric { .custom(name, polarity: .prefersLarger, useScalingFactor: false) }

    static let sdkPair = latency("SDK begin+end pair")
    static let sdkBegin = latency("SDK beginBackgroundTask")
    static let sdkEnd = latency("SDK endBackgroundTask")
    static let barePair = latency("bare Unix-socket pair")
    static let bareBegin = latency("bare round trip, begin sizes")
    static let bareEnd = latency("bare round trip, end sizes")

    static let homeFrozen = latency("home → app frozen")
    static let rawFreeze = latency("raw cgroup freeze")
    static let openActive = latency("open → did-become-active")
    static let rawThaw = latency("raw thaw + socket round trip")

    static let dataControlsThroughput = rate("curl in an app's cgroup with its rules (MB/s)")
    static let dataControlsBareThroughput = rate("curl in a cgroup without rules (MB/s)")
    static let settingToRule = latency("background data off → connections refused")
    static let rawRule = latency("the same rule added with libnftables")
    static let usageRSS = count("daemon VmRSS, 1,000 apps and 31 days of usage (kB)")
    static let usageBareRSS = count("daemon VmRSS, 1,000 apps and no usage (kB)")
    static let homeFrozenRuled = latency("home → frozen, a block each trip")
    static let openActiveRuled = latency("open → did-become-active, a lift each trip")

    static let voipWake = latency("VoIP socket data → handler runs")
    static let bareThawRead = latency("bare thaw + read")

    static let accessoryWake = latency("accessory data → handler runs")
    static let accessoryBareThawRead = latency("bare thaw + read, accessory run")

    static let rss = count("daemon VmRSS, 100 apps/10 launched (kB)")
    static let hwm = count("daemon VmHWM, 100 apps/10 launched (kB)")
    static let idleRSS = count("idle daemon VmRSS, 0 apps (kB)")
    static let idleHWM = count("idle daemon VmHWM, 0 apps (kB)")

    static let schedulerIncremental = latency("core input, 1,000 apps, incremental scheduler")
    static let schedulerFull = latency("core input, 1,000 apps, every app looked at")
    static let schedulerSmall = latency("core input, 10 apps, incremental scheduler")

    static let scaleRSS = count("daemon VmRSS, 1,000 apps/10,000 requests/100 running (kB)")
    static let scaleHWM = count("daemon VmHWM, 1,000 apps/10,000 requests/100 running (kB)")
    static let scaleIdleRSS = count("idle daemon VmRSS, 0 apps, scale run (kB)")
    static let restartAnswered = latency("restart → ListApps answers, 1,000 apps")
    static let restartReattached = latency("restart → 100 apps reattached")
    static let restartBaseline = latency("restart → ListApps answers, 0 apps")
    static let listAppsScale = latency("ListApps, 1,000 apps")
    static let listAppsSmall = latency("ListApps, 10 apps")
    static let cliAppsScale = latency("offstage apps end to end, 1,000 apps")
    static let cliAppsSmall = latency("offstage apps end to end, 10 apps")
    static let concurrentCall = latency("SDK call, 50 apps at once")
    static let aloneCall = latency("SDK call, 1 app alone")
    static let concurrentRate = BenchmarkMetric.custom("SDK calls/s, 50 apps at once", polarity: .prefersLarger, useScalingFactor: false)
    static let aloneRate = BenchmarkMetric.custom("SDK calls/s, 1 app alone", polarity: .prefersLarger, useScalingFactor: false)

    static let notificationUserLateness = latency("notification due → delivered to the user")
    static let notificationAppLateness = latency("notification due → app's will-present handler")
    static let notificationBareLateness = latency("bare NIO timer due → fired")

    static let notificationScaleRSS = count("daemon VmRSS, 64,000 pending notifications (kB)")
    static let notificationScaleReadBackRSS = count("daemon VmRSS, 64,000 pending, read back (kB)")
    static let notificationEmptyRSS = count("daemon VmRSS, 1,000 apps, 0 notifications (kB)")
    static let notificationEmptyReadBackRSS = count("daemon VmRSS, 1,000 apps, 0 notifications, read back (kB)")
    static let notificationRestartAnswered = latency("restart → answers, 64,000 pending")
    static let notificationRestartListed = latency("restart → 64,000 pending listed")
    static let notificationRestartEmpty = latency("restart → answers, 0 notifications")
    static let notificationAddScale = latency("add one notification, 64,000 pending")
    static let notificationAddEmpty = latency("add one notification, 0 pending")

    static let pushWake = latency("push sent → handler runs (suspended app)")
    static let pushAccepted = latency("push sent → 200 from the gateway")
    static let pushBareRoundTrip = latency("bare HTTP/2 round trip")
    static let pushRate = BenchmarkMetric.custom("pushes/s accepted, embedded gateway", polarity: .prefersLarger, useScalingFactor: false)
    static let pushBareRate = BenchmarkMetric.custom("requests/s answered, bare HTTP/2 server", polarity: .prefersLarger, useScalingFactor: false)
    static let pushLoadLatency = latency("push sent → 200 under load, gateway")
    static let pushBareLoadLatency = latency("request → 200 under load, bare HTTP/2 server")
    static let pushClusterRate = BenchmarkMetric.custom("pushes/s accepted, three nodes over PostgreSQL", polarity: .prefersLarger, useScalingFactor: false)
    static let pushClusterOneNodeRate = BenchmarkMetric.custom("pushes/s accepted, one node over PostgreSQL", polarity: .prefersLarger, useScalingFactor: false)
    static let pushClusterAsyncRate = BenchmarkMetric.custom("pushes/s accepted, three nodes, synchronous_commit off", polarity: .prefersLarger, useScalingFactor: false)
    static let pushClusterBareRate = BenchmarkMetric.custom("requests/s answered, bare HTTP/2 server, cluster run", polarity: .prefersLarger, useScalingFactor: false)
    static let pushClusterLatency = latency("push sent → 200 under load, three nodes")
    static let pushClusterOneNodeLatency = latency("push sent → 200 under load, one node over PostgreSQL")
    static let pushFailoverLost = count("pushes answered 200 and not delivered after kill -9 of the device's node")
    static let pushFailoverDelivery = latency("kill -9 of the device's node → last stored push in the inbox")

    static let transferEngineRate = BenchmarkMetric.custom("MB/s, transfer engine → file, last byte written", polarity: .prefersLarger, useScalingFactor: false)
    static let transferEngineCompletedRate = BenchmarkMetric.custom("MB/s, transfer engine → file, completed (fsynced)", polarity: .prefersLarger, useScalingFactor: false)
    static let transferCurlFileRate = BenchmarkMetric.custom("MB/s, curl → file", polarity: .prefersLarger, useScalingFactor: false)
    static let transferCurlNullRate = BenchmarkMetric.custom("MB/s, curl → /dev/null", polarity: .prefersLarger, useScalingFactor: false)

    static let transferKillWritten = count("bytes written again per kill -9 of the daemon")
    static let transferKillSent = count("bytes sent again by nginx per kill -9 of the daemon")
    static let transferScaleRSS = count("daemon VmRSS peak, 1,000 transfers across 100 apps (kB)")
    static let transferScaleHWM = count("daemon VmHWM, 1,000 transfers across 100 apps (kB)")
    static let transferScaleIdleRSS = count("daemon VmRSS peak, 100 apps, no transfers (kB)")
    static let transferScaleCPU = count("daemon CPU, 1,000 transfers across 100 apps (ms)")
    static let transferScaleIdleCPU = count("daemon CPU, 100 apps, no transfers, same wall time (ms)")
    static let transferScaleCurlCPU = count("curl CPU, the same 1,000 files (ms)")
    static let transferWakeLaunched = latency("download completed → events handler, app not running")
    static let transferWakeRefreshLaunched = latency("run-task → refresh handler, app not running")
    static let transferWakeResumed = latency("download completed → events handler, app suspended")
    static let transferWakeRefreshResumed = latency("run-task → refresh handler, app suspended")

    static let pressureEnded = latency("memory pressure signalled (critical) → first suspended app gone")
    static let pressureReading = latency("pressure reading: budget usage + /proc/pressure/memory")
    static let pressureEventfdWake = latency("bare eventfd wake-up, thread to thread")
    static let pressureBareChain = latency("bare eventfd wake → reading → SIGKILL of a frozen process → gone")
    static let pressureFreedPerKill = count("budget usage freed per app ended for memory (kB)")
    static let pressureRecordedPerKill = count("app memory the daemon recorded per app ended (kB)")
    static let pressureAppsEnded = count("apps ended in the memory episode")
    static let pressureAppsNeeded = count("apps needed to end in the memory episode")

    static let wakeups = count("daemon wake-ups in 60 s, 100 apps")
    static let emptyWakeups = count("daemon wake-ups in 60 s, 0 apps")
    static let tickWakeups = count("1 Hz timer wake-ups in 60 s")
}
