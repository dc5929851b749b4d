import Benchmark
import Foundation
import OffstageBenchKit

/// Figure (SPEC MODE-2): data arrives on the socket a VoIP app handed off while it is frozen → the app's handler
/// runs, on the real daemon, against a bare thaw + read of a frozen process of our own in the same loop.
///
/// - socket → handler: from just before the benchmark writes one byte to its end of the app's connection to the
///   timestamp the app takes on entering its wake-up handler (the daemon's watcher sees the data, the core thaws the
///   app and sends the callback, the SDK runs the handler).
/// - baseline: the echo helper, frozen by a cgroup of our own; from just before writing a request to its socket,
///   through thawing it, to its answer arriving (the helper wakes, reads, answers).
///
/// All timestamps are CLOCK_MONOTONIC, shared by every process of the machine.
enum VoIPWakeBenchmark {
    static let iterations = 300
    static let warmup = 10
    /// Between two steps, so each cgroup change stays clear of the kernel's limit on cgroup.events notifications.
    static let gapMilliseconds: UInt64 = 15

    static func run(_ benchmark: Benchmark) throws {
        // No delay before suspension and 50 ms to handle the data (the handler's watchdog too): the app is frozen
        // again soon after, ready for the next round.
        let daemon = try DaemonFixture(settings: ["suspendDelay": 0, "voipSocketEventTime": 0.05])
        defer { daemon.tearDown() }
        try daemon.start()
        let freezer = try daemon.status().freezer

        let listener = try UnixSocket.listen(path: daemon.root + "/voip.sock")
        defer { close(listener) }
        let reportPath = daemon.root + "/stamps.sock"
        let stamps = try UnixSocket.bindDatagram(path: reportPath)
        defer { close(stamps) }
        let id = "bench.voip"
        try daemon.install(
            try daemon.probeBundle(
                id: id, arguments: ["--voip", "--connect", daemon.root + "/voip.sock", "--report", reportPath],
                extra: ["UIBackgroundModes": ["voip"]]))
        try daemon.open(id)
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { throw BenchError("the probe did not connect") }
        defer { close(connection) }
        guard let appPid = try daemon.waitFor(id, "active").pid else { throw BenchError("\(id) has no pid") }
        let appObserver = try FreezeObservers.forApp(pid: appPid, freezer: freezer)
        try daemon.home()
        _ = try appObserver.wait(frozen: true, timeoutSeconds: 10)

        let baseline = try EchoBaseline(in: daemon)
        defer { baseline.tearDown() }
        let (raw, rawConnection) = (baseline.raw, baseline.connection)
        let rawRequest = EchoWire.request(size: 8, replySize: 2)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 8)
        defer { buffer.deallocate() }
        let wake: [UInt8] = [0x21]

        var handler: [UInt64] = []
        var bare: [UInt64] = []
        for iteration in 0..<(warmup + iterations) {
            let record = iteration >= warmup

            // Socket data → handler, with the app frozen.
            MonotonicClock.sleep(milliseconds: gapMilliseconds)
            _ = try appObserver.wait(frozen: true, timeoutSeconds: 10)
            let start = MonotonicClock.now()
            try wake.withUnsafeBytes { try UnixSocket.writeAll(connection, $0) }
            guard let bytes = try UnixSocket.receiveDatagram(stamps, timeoutMilliseconds: 10_000),
                let stamp = UInt64(String(decoding: bytes, as: UTF8.self))
            else {
                let said = (try? String(contentsOfFile: daemon.stateDirectory + "/logs/\(id).log", encoding: .utf8)) ?? ""
                let state = (try? daemon.app(id).state) ?? "?"
                throw BenchError("the probe's handler did not report within 10 s (round \(iteration), app \(state)); it said: \(said)")
            }
            if record { handler.append(stamp &- start) }

            // Bare: a frozen process of our own, thawed to read what came.
            MonotonicClock.sleep(milliseconds: gapMilliseconds)
            raw.observer.sync()
            try raw.freeze()
            _ = try raw.observer.wait(frozen: true, timeoutSeconds: 5)
            let bareStart = MonotonicClock.now()
            try rawRequest.withUnsafeBytes { try UnixSocket.writeAll(rawConnection, $0) }
            try raw.thaw()
            guard try UnixSocket.readMessage(rawConnection, into: buffer) > 0 else { throw BenchError("the raw helper hung up") }
            if record { bare.append(MonotonicClock.now() - bareStart) }
        }

        Report.record(benchmark, Metrics.voipWake, handler)
        Report.record(benchmark, Metrics.bareThawRead, bare)
        let woken = Distribution(handler)
        let bareThaw = Distribution(bare)
        Report.heading("VoIP socket wake-up: data on the handed-off socket → handler runs, \(iterations) rounds after \(warmup) warm-up")
        Report.line("daemon freezer: \(freezer); baseline freezer: \(raw.kind)")
        Report.latency("socket data → app's handler runs (app frozen)", woken)
        Report.latency("baseline: bare thaw + read (+ its answer)", bareThaw)
        Report.line("ratio: p50 \(Report.ratio(woken.p50, bareThaw.p50)), p99 \(Report.ratio(woken.p99, bareThaw.p99))")
    }
}
