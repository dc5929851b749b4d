import Benchmark
import Foundation
import OffstageBenchKit
import OffstageCore

/// SPEC §11 scale, in the core: what one input costs the decision-making core when 1,000 apps are installed with
/// 10,000 pending task requests and 100 of them running, against the same inputs with 10 and 100 apps (growth) and
/// the same inputs with the scheduler made to look at every app, as it did before it kept a view per app (the
/// baseline, measured in the same run).
///
/// The inputs are what a busy device sends: the user opening a running app and going home, alternately, each
/// followed by the shell's question for the next deadline. Time moves 10 ms per input, so no hold lifts by itself.
enum SchedulerScaleBenchmark {
    static let inputs = 4_000
    static let warmup = 200

    static func run(_ benchmark: Benchmark) {
        Report.heading("Scheduler: the cost of one core input as apps grow (SPEC §11 scale)")
        var results: [Int: Distribution] = [:]
        for apps in [10, 100, 1_000] {
            let incremental = measure(apps: apps, lookingAtEveryApp: false)
            results[apps] = Distribution(incremental)
            Report.latency("\(apps) apps, incremental scheduler", Distribution(incremental))
            if apps == 1_000 { Report.record(benchmark, Metrics.schedulerIncremental, incremental) }
            if apps == 10 { Report.record(benchmark, Metrics.schedulerSmall, incremental) }
        }
        let full = measure(apps: 1_000, lookingAtEveryApp: true)
        Report.latency("1,000 apps, every app looked at (baseline)", Distribution(full))
        Report.record(benchmark, Metrics.schedulerFull, full)
        let large = results[1_000]!, small = results[10]!
        Report.line("p99 at 1,000 apps: \(Report.ratio(large.p99, Distribution(full).p99)) of the baseline's; growth from 10 to 1,000 apps: \(Report.ratio(large.p99, small.p99)) at p99, \(Report.ratio(large.p50, small.p50)) at p50")
    }

    /// Nanoseconds per input (the input and the next-deadline query), after a warm-up.
    static func measure(apps count: Int, lookingAtEveryApp: Bool) -> [UInt64] {
        var now = Instant(secondsSinceEpoch: 1_800_000_000)
        var core = OffstageCore()
        let identifiers = (0..<10).map { "com.example.task\($0)" }
        for index in 0..<count {
            let id = AppID("com.example.app\(index)")
            let manifest = Manifest(
                id: id, executable: "app", backgroundModes: [.fetch, .processing], permittedTaskIdentifiers: identifiers)
            var durable = AppDurableState()
            for (number, identifier) in identifiers.enumerated() {
                durable.schedule.requests[identifier] = TaskRequest(
                    identifier: identifier, kind: number == 0 ? .appRefresh : .processing,
                    earliestBegin: now + .seconds(3_600 + number * 60), submittedAt: now)
            }
            core.restore(InstalledApp(manifest: manifest, bundlePath: "/bundles/\(id)", installedAt: now), durable: durable)
        }
        _ = core.recover(at: now)
        let running = max(1, count / 10)
        for index in 0..<running { _ = core.adopt(AppID("com.example.app\(index)"), pid: Int32(10_000 + index), at: now) }
        var samples: [UInt64] = []
        samples.reserveCapacity(inputs)
        for step in 0..<(warmup + inputs) {
            now = now + .milliseconds(10)
            let id = AppID("com.example.app\(step / 2 % running)")
            if lookingAtEveryApp { core.forgetSchedulingViews() }
            let start = DispatchTime.now().uptimeNanoseconds
            if step % 2 == 0 { _ = try? core.open(id, at: now) } else { _ = core.home(at: now) }
            blackHole(core.nextDeadline)
            let elapsed = DispatchTime.now().uptimeNanoseconds - start
            if step >= warmup { samples.append(elapsed) }
        }
        return samples
    }
}
