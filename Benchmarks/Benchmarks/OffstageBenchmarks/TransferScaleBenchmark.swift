import Benchmark
import Foundation
import OffstageBenchKit
import OffstageProtocol

/// Figure (SPEC TR-4, §11): 1,000 queued transfers across 100 apps — the daemon's VmRSS and CPU from their creation
/// until every app has handled its completions; against, in the same run, the same daemon with the same 100 apps
/// doing the same opens and no transfers for the same wall time, and curl fetching the same bytes (CPU per byte).
///
/// 100 copies of the probe app (`--transfers`) are installed and each opened once (no transfer) and sent home:
/// the starting point. Then, with the device's network set to none (`SetDevice`), each app is opened again and creates
/// 10 downloads of distinct 128 KiB files from a private nginx on loopback, and is sent home (suspended): 1,000 tasks
/// queued. The network is given back and the daemon runs them (`maximumRunning` 6, 4 per app, the defaults); as each
/// app's session finishes the daemon resumes the app for its events, and the app appends one line per task. The window
/// ends when all 1,000 lines are there, each with the right size. The daemon's VmRSS is sampled every 100 ms, its CPU
/// (utime + stime) read from /proc/PID/stat at both ends. The baseline window opens each app again with nothing to
/// create and lasts as long. curl then fetches the same 1,000 files, 6 at a time (`--parallel-max 6`).
enum TransferScaleBenchmark {
    static let apps = 100
    static let perApp = 10
    static let fileBytes = 128 << 10
    static let rssTarget = 64 * 1_024  // kB: the daemon's memory target (SPEC §11)

    static func appID(_ index: Int) -> String { "bench.tr\(index)" }
    static func file(_ index: Int) -> String { String(format: "/f%04d.bin", index) }

    /// The daemon's VmRSS samples (kB) and CPU (ns) over a window.
    struct Window {
        var seconds = 0.0
        var cpu: UInt64 = 0
        var rss: [Int] = []
        var peakRSS: Int { rss.max() ?? 0 }
    }

    static func run(_ benchmark: Benchmark) throws {
        let nginx = try NginxFixture()
        defer { nginx.stop() }
        for index in 0..<(apps * perApp) { try TransferPlan.writeRandom(nginx.root + file(index), bytes: fileBytes) }
        let daemon = try DaemonFixture(settings: ["suspendDelay": 0])
        defer { daemon.tearDown() }
        try daemon.start()
        let reportPath = daemon.root + "/report.sock"
        let reports = try UnixSocket.bindDatagram(path: reportPath)
        defer { close(reports) }
        try FileManager.default.createDirectory(atPath: daemon.root + "/plans", withIntermediateDirectories: true)
        func plan(_ index: Int) -> String { daemon.root + "/plans/" + appID(index) }
        for index in 0..<apps {
            try daemon.install(
                try daemon.probeBundle(id: appID(index), arguments: ["--transfers", plan(index), "--report", reportPath]))
        }
        let loadAtStart = NotificationLatenessBenchmark.loadAverage()

        /// Opens every app with generation `generation` (downloads when `downloads`), then goes home.
        func openAll(_ generation: String, downloads: Bool, window: inout Window) throws {
            for index in 0..<apps {
                let steps = downloads ? (0..<perApp).map { "download " + nginx.url(file(index * perApp + $0)) } : []
                try TransferPlan.write(plan(index), generation: generation, steps)
                try daemon.open(appID(index))
                let created = try TransferPlan.await(reports, "created \(generation)", timeoutSeconds: 60) { "app \(appID(index))" }
                guard created.count == steps.count, !created.contains(where: { $0.hasPrefix("error") }) else {
                    throw BenchError("\(appID(index)) created \(created)")
                }
                window.rss.append(FootprintBenchmarks.memory(daemon.pid).rss)
            }
            try daemon.home()
        }

        // The starting point: every app launched once, then suspended.
        var setup = Window()
        try openAll("g0", downloads: false, window: &setup)
        for index in 0..<apps { try daemon.waitFor(appID(index), "suspended", timeout: 60) }
        MonotonicClock.sleep(milliseconds: 1_000)
        let before = FootprintBenchmarks.memory(daemon.pid)

        // 1,000 transfers: created while the network is off, then run.
        var transfers = Window()
        var start = MonotonicClock.now()
        let profile = PhaseProfile("transfer-scale", pid: daemon.pid)
        var cpuStart = MonotonicClock.processCPU(daemon.pid) ?? 0
        _ = try daemon.call(
            ControlInterface.Method.setDevice, ControlInterface.SetDeviceParameters(network: "none"), as: ControlInterface.DeviceReply.self)
        try openAll("g1", downloads: true, window: &transfers)
        let queued = try daemon.transfers().filter { $0.state == "waiting" }.count
        let queuedRSS = FootprintBenchmarks.memory(daemon.pid).rss
        let createdSeconds = Double(MonotonicClock.now() - start) / 1e9
        let createdCPU = (MonotonicClock.processCPU(daemon.pid) ?? cpuStart) - cpuStart
        _ = try daemon.call(
            ControlInterface.Method.setDevice, ControlInterface.SetDeviceParameters(clear: ["network"]), as: ControlInterface.DeviceReply.self)
        let runStart = MonotonicClock.now()
        let deadline = runStart + 600_000_000_000
        var done = 0
        var polls = 0
        while MonotonicClock.now() < deadline {
            transfers.rss.append(FootprintBenchmarks.memory(daemon.pid).rss)
            TransferPlan.drain(reports)
            polls += 1
            if polls % 5 == 0 {
                done = (0..<apps).reduce(0) { $0 + daemon.completions(appID($1)).count }
                if done >= apps * perApp { break }
            }
            MonotonicClock.sleep(milliseconds: 100)
        }
        transfers.cpu = (MonotonicClock.processCPU(daemon.pid) ?? cpuStart) - cpuStart
        profile?.stop()
        transfers.seconds = Double(MonotonicClock.now() - start) / 1e9
        let runSeconds = Double(MonotonicClock.now() - runStart) / 1e9
        let after = FootprintBenchmarks.memory(daemon.pid)
        var wrong: [String] = []
        for index in 0..<apps {
            let lines = daemon.completions(appID(index))
            let good = lines.filter { $0.hasPrefix("completed ") && $0.split(separator: " ").dropFirst(2).first == "\(fileBytes)" }
            if lines.count != perApp || good.count != perApp { wrong.append("\(appID(index)): \(lines)") }
        }
        guard wrong.isEmpty else {
            throw BenchError("\(done) of \(apps * perApp) completion lines; not \(perApp) completed of \(fileBytes) bytes: \(wrong.prefix(3))")
        }

        // The baseline: the same opens, no transfers, for the same wall time.
        var idle = Window()
        start = MonotonicClock.now()
        cpuStart = MonotonicClock.processCPU(daemon.pid) ?? 0
        try openAll("g2", downloads: false, window: &idle)
        let end = start + UInt64(transfers.seconds * 1e9)
        while MonotonicClock.now() < end {
            idle.rss.append(FootprintBenchmarks.memory(daemon.pid).rss)
            TransferPlan.drain(reports)
            MonotonicClock.sleep(milliseconds: 100)
        }
        idle.cpu = (MonotonicClock.processCPU(daemon.pid) ?? cpuStart) - cpuStart
        idle.seconds = Double(MonotonicClock.now() - start) / 1e9
        let loadAtEnd = NotificationLatenessBenchmark.loadAverage()

        let curl = try runCurl(nginx)
        let megabytes = Double(apps * perApp * fileBytes) / 1e6

        benchmark.measurement(Metrics.transferScaleRSS, transfers.peakRSS)
        benchmark.measurement(Metrics.transferScaleHWM, after.hwm)
        benchmark.measurement(Metrics.transferScaleIdleRSS, idle.peakRSS)
        benchmark.measurement(Metrics.transferScaleCPU, Int(transfers.cpu / 1_000_000))
        benchmark.measurement(Metrics.transferScaleIdleCPU, Int(idle.cpu / 1_000_000))
        benchmark.measurement(Metrics.transferScaleCurlCPU, Int(curl.cpu * 1_000))

        let extraCPU = Double(transfers.cpu) / 1e9 - Double(idle.cpu) / 1e9
        func mb(_ kilobytes: Int) -> String { String(format: "%.1f MB", Double(kilobytes) / 1_024) }
        func median(_ values: [Int]) -> Int { values.isEmpty ? 0 : values.sorted()[values.count / 2] }
        Report.heading("Transfer: 1,000 queued transfers across \(apps) apps, daemon VmRSS and CPU until all completed")
        Report.line("nginx at 127.0.0.1:\(nginx.port), \(apps * perApp) files of \(fileBytes >> 10) KiB (\(String(format: "%.1f", megabytes)) MB); transfer limits at their defaults; load average \(loadAtStart) at the start, \(loadAtEnd) at the end")
        Report.line("before: \(apps) apps launched once and suspended, no transfer: VmRSS \(mb(before.rss)), VmHWM \(mb(before.hwm))")
        Report.line("1,000 transfers: created in \(String(format: "%.1f", createdSeconds)) s (\(queued) waiting for the network; VmRSS then \(mb(queuedRSS))), run and handled in \(String(format: "%.1f", runSeconds)) s; window \(String(format: "%.1f", transfers.seconds)) s")
        Report.line("  daemon VmRSS while they ran: peak \(mb(transfers.peakRSS)), median \(mb(median(transfers.rss))); VmHWM at the end \(mb(after.hwm)); VmRSS at the end \(mb(after.rss))")
        Report.line("  daemon CPU \(String(format: "%.2f", Double(transfers.cpu) / 1e9)) s (\(String(format: "%.1f", Double(transfers.cpu) / 1e9 / transfers.seconds * 100)) % of one core): \(String(format: "%.2f", Double(createdCPU) / 1e9)) s while the apps opened and created them, \(String(format: "%.2f", Double(transfers.cpu - createdCPU) / 1e9)) s while they ran and were handled")
        Report.line("baseline: same daemon, same \(apps) apps opened again, no transfers, \(String(format: "%.1f", idle.seconds)) s: VmRSS peak \(mb(idle.peakRSS)), median \(mb(median(idle.rss))); CPU \(String(format: "%.2f", Double(idle.cpu) / 1e9)) s")
        Report.line("baseline: curl, the same \(apps * perApp) files, 6 at a time: \(String(format: "%.2f", curl.seconds)) s, CPU \(String(format: "%.2f", curl.cpu)) s")
        Report.line("CPU per MB: daemon beyond the baseline \(String(format: "%.1f", extraCPU / megabytes * 1e3)) ms/MB (\(String(format: "%.1f", extraCPU * 1e3 / Double(apps * perApp))) ms per transfer); curl \(String(format: "%.2f", curl.cpu / megabytes * 1e3)) ms/MB; ratio \(Report.ratio(extraCPU, curl.cpu))")
        Report.line("VmRSS peak over `before`: +\(mb(transfers.peakRSS - before.rss)); over the no-transfer window's (memory the allocator kept): +\(mb(transfers.peakRSS - idle.peakRSS))")
        Report.line("daemon memory target ≤ 64 MB: \(Report.verdict(max(transfers.peakRSS, after.hwm) <= rssTarget)) (peak \(mb(max(transfers.peakRSS, after.hwm))))")
        Report.line("all \(apps * perApp) completed, each \(fileBytes) bytes, one completion line each")
    }

    /// curl fetching the same files, 6 at a time into a folder: wall and CPU seconds; sizes checked.
    static func runCurl(_ nginx: NginxFixture) throws -> (seconds: Double, cpu: Double) {
        guard let curl = ["/usr/bin/curl", "/bin/curl"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw BenchError("curl is not installed; install the Debian package curl (scripts/ensure-packages does)")
        }
        let folder = nginx.folder + "/curl"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let last = apps * perApp - 1
        let before = TransferThroughputBenchmark.childrenCPU()
        let start = MonotonicClock.now()
        let process = try ChildProcess(
            curl, ["-s", "-S", "-f", "--parallel", "--parallel-max", "6", "-o", folder + "/#1.bin", nginx.url(String(format: "/f[0000-%04d].bin", last))],
            outputPath: nginx.folder + "/curl.out")
        var status: Int32 = 0
        while waitpid(process.pid, &status, 0) < 0, errno == EINTR {}
        let seconds = Double(MonotonicClock.now() - start) / 1e9
        let cpu = TransferThroughputBenchmark.childrenCPU() - before
        guard status == 0 else { throw BenchError("curl failed: wait status \(status)") }
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        let sizes = files.compactMap { try? FileManager.default.attributesOfItem(atPath: folder + "/" + $0)[.size] as? Int }
        guard files.count == apps * perApp, sizes.allSatisfy({ $0 == fileBytes }) else {
            throw BenchError("curl fetched \(files.count) files, sizes \(Set(sizes))")
        }
        return (seconds, cpu)
    }
}
