import Benchmark
import Foundation
import NIOPosix
import OffstageBenchKit
@_spi(Benchmarks) import OffstageDaemon
import Synchronization

/// Figure (SPEC §11: transfers ≥ 95 % of curl's throughput on loopback): a 1 GiB download from a private nginx on
/// 127.0.0.1 by the daemon's transfer engine into a part file, against curl in the same run.
///
/// Each round runs, in an order that turns from round to round, curl into a file, curl into /dev/null (the network
/// path alone), and the engine into a file (on one event-loop thread, as the daemon gives it). The engine's figure is
/// taken when its last byte is in the part file (its last checkpoint), which is the work curl does into a file; its
/// complete attempt also fsyncs the part file (it must survive a crash, SPEC TR-6), so that time is reported too,
/// next to curl into a file followed by an fsync of it. Before every round the output file is removed and the page
/// cache written back (`sync`), so no round pays for the one before; the served file is read once first, so every
/// round reads it from the page cache.
enum TransferThroughputBenchmark {
    static let fileBytes: Int64 = 1 << 30
    static let rounds = 5

    /// What one round measured, in seconds; CPU in seconds.
    struct Round {
        var curlFile = 0.0
        var curlFileSynced = 0.0
        var curlNull = 0.0
        var engineWritten = 0.0
        var engineCompleted = 0.0
        var curlFileCPU = 0.0
        var curlNullCPU = 0.0
        var engineCPU = 0.0
    }

    static func run(_ benchmark: Benchmark) throws {
        let nginx = try NginxFixture()
        defer { nginx.stop() }
        let served = nginx.root + "/big.bin"
        try writeServedFile(served)
        let url = nginx.url("/big.bin")
        let output = nginx.folder + "/download.part"
        guard let curl = ["/usr/bin/curl", "/bin/curl"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw BenchError("curl is not installed; install the Debian package curl (scripts/ensure-packages does)")
        }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let engine = TransferBenchmarkEngine(eventLoopGroup: group)
        defer { _ = try? blocking { try await engine.shutdown() } }

        // Warm-up, not measured: the served file into the page cache, and one download of each kind.
        _ = try runCurl(curl, url, to: "/dev/null")
        _ = try runCurl(curl, url, to: output)
        try removeAndSync(output)
        _ = try runEngine(engine, url, to: output)
        try removeAndSync(output)

        let loadAtStart = NotificationLatenessBenchmark.loadAverage()
        var results: [Round] = []
        for index in 0..<rounds {
            var round = Round()
            let steps = ["curl-file", "curl-null", "engine"]
            for step in steps[(index % 3)...] + steps[..<(index % 3)] {
                switch step {
                case "curl-file":
                    let measured = try runCurl(curl, url, to: output)
                    let syncStart = MonotonicClock.now()
                    try fsyncFile(output)
                    let synced = Double(MonotonicClock.now() - syncStart) / 1e9
                    try checkSize(output, "curl")
                    round.curlFile = measured.seconds
                    round.curlFileSynced = measured.seconds + synced
                    round.curlFileCPU = measured.cpu
                    try removeAndSync(output)
                case "curl-null":
                    let measured = try runCurl(curl, url, to: "/dev/null")
                    round.curlNull = measured.seconds
                    round.curlNullCPU = measured.cpu
                default:
                    let measured = try runEngine(engine, url, to: output)
                    round.engineWritten = measured.written
                    round.engineCompleted = measured.completed
                    round.engineCPU = measured.cpu
                    try removeAndSync(output)
                }
            }
            results.append(round)
        }
        let loadAtEnd = NotificationLatenessBenchmark.loadAverage()

        func rate(_ seconds: Double) -> Double { seconds > 0 ? Double(fileBytes) / seconds / 1e6 : 0 }
        func median(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
        }
        let engineRate = median(results.map { rate($0.engineWritten) })
        let engineCompletedRate = median(results.map { rate($0.engineCompleted) })
        let curlFileRate = median(results.map { rate($0.curlFile) })
        let curlSyncedRate = median(results.map { rate($0.curlFileSynced) })
        let curlNullRate = median(results.map { rate($0.curlNull) })
        benchmark.measurement(Metrics.transferEngineRate, Int(engineRate.rounded()))
        benchmark.measurement(Metrics.transferEngineCompletedRate, Int(engineCompletedRate.rounded()))
        benchmark.measurement(Metrics.transferCurlFileRate, Int(curlFileRate.rounded()))
        benchmark.measurement(Metrics.transferCurlNullRate, Int(curlNullRate.rounded()))

        Report.heading("Transfer: 1 GiB download from nginx on loopback, engine against curl, \(rounds) rounds, median MB/s")
        Report.line("nginx with sendfile at 127.0.0.1:\(nginx.port); files in \(nginx.folder); load average \(loadAtStart) at the start, \(loadAtEnd) at the end")
        func row(_ label: String, _ figure: Double, _ perRound: [Double], cpu: [Double]) {
            let rounds = perRound.map { String(format: "%.0f", rate($0)) }.joined(separator: ", ")
            let cpuPerGiB = median(cpu) / (Double(fileBytes) / Double(1 << 30))
            Report.line(
                "\(label.padding(toLength: 44, withPad: " ", startingAt: 0)) \(String(format: "%7.0f", figure)) MB/s (rounds: \(rounds))"
                    + (cpu.isEmpty ? "" : String(format: "; CPU %.2f s per GiB", cpuPerGiB)))
        }
        row("engine → file, last byte written", engineRate, results.map(\.engineWritten), cpu: results.map(\.engineCPU))
        row("engine → file, completed (fsynced)", engineCompletedRate, results.map(\.engineCompleted), cpu: [])
        row("baseline: curl → file", curlFileRate, results.map(\.curlFile), cpu: results.map(\.curlFileCPU))
        row("baseline: curl → file, then fsync", curlSyncedRate, results.map(\.curlFileSynced), cpu: [])
        row("baseline: curl → /dev/null", curlNullRate, results.map(\.curlNull), cpu: results.map(\.curlNullCPU))
        let ratio = curlFileRate > 0 ? engineRate / curlFileRate : 0
        let syncedRatio = curlSyncedRate > 0 ? engineCompletedRate / curlSyncedRate : 0
        Report.line(
            "ratio engine / curl → file: \(Report.ratio(engineRate, curlFileRate)) (target ≥ 0.95×: \(Report.verdict(ratio >= 0.95)))")
        Report.line(
            "ratio engine completed / curl → file then fsync: \(Report.ratio(engineCompletedRate, curlSyncedRate)) (\(Report.verdict(syncedRatio >= 0.95)))")
    }

    /// 1 GiB of random bytes (a 16 MiB random block, repeated: nothing compresses it), written once.
    static func writeServedFile(_ path: String) throws {
        var block = [UInt8](repeating: 0, count: 16 << 20)
        var generator = SystemRandomNumberGenerator()
        for index in block.indices { block[index] = generator.next() }
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else { throw BenchError("cannot write \(path)") }
        defer { try? handle.close() }
        for _ in 0..<(Int(fileBytes) / block.count) { try handle.write(contentsOf: block) }
    }

    /// Runs curl (`-s -o output`) to its end: wall seconds and CPU seconds (user + system).
    static func runCurl(_ curl: String, _ url: String, to output: String) throws -> (seconds: Double, cpu: Double) {
        let before = childrenCPU()
        let start = MonotonicClock.now()
        let process = try ChildProcess(curl, ["-s", "-S", "-f", "-o", output, url], outputPath: "/dev/null")
        var status: Int32 = 0
        while waitpid(process.pid, &status, 0) < 0, errno == EINTR {}
        let seconds = Double(MonotonicClock.now() - start) / 1e9
        guard status == 0 else { throw BenchError("curl \(url) → \(output) failed: wait status \(status)") }
        return (seconds, childrenCPU() - before)
    }

    /// One download by the engine: seconds until its last byte was written, until it completed (fsynced), and the
    /// process's CPU seconds meanwhile (the benchmark does nothing else then).
    static func runEngine(_ engine: TransferBenchmarkEngine, _ url: String, to output: String) throws -> (written: Double, completed: Double, cpu: Double) {
        let lastByte = Mutex<UInt64>(0)
        let total = fileBytes
        let before = selfCPU()
        let start = MonotonicClock.now()
        let download = try blocking {
            await engine.download(url, to: output) { bytes in
                if bytes == total { lastByte.withLock { $0 = MonotonicClock.now() } }
            }
        }
        let completed = MonotonicClock.now()
        let cpu = selfCPU() - before
        guard download.completed, download.bytes == total else { throw BenchError("the engine's download of \(url) ended \(download.outcome)") }
        let written = lastByte.withLock { $0 }
        guard written > 0 else { throw BenchError("the engine reported no checkpoint at \(total) bytes") }
        return (Double(written - start) / 1e9, Double(completed - start) / 1e9, cpu)
    }

    static func checkSize(_ path: String, _ who: String) throws {
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64) ?? -1
        guard size == fileBytes else { throw BenchError("\(who) wrote \(size) bytes into \(path), not \(fileBytes)") }
    }

    static func fsyncFile(_ path: String) throws {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw SystemCallError("open \(path)") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw SystemCallError("fsync \(path)") }
    }

    /// Removes `path` and writes the page cache back, so the next download starts on a quiet disk.
    static func removeAndSync(_ path: String) throws {
        try? FileManager.default.removeItem(atPath: path)
        sync()
    }

    static func childrenCPU() -> Double { cpu(RUSAGE_CHILDREN.rawValue) }
    static func selfCPU() -> Double { cpu(RUSAGE_SELF.rawValue) }

    private static func cpu(_ who: Int32) -> Double {
        var usage = rusage()
        getrusage(who, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
