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
        let wake: [UInt8] = [0x21]
        let rounds = try WakeRounds.measure(
            app: appObserver, stamps: stamps, baseline: baseline,
            trigger: { try wake.withUnsafeBytes { try UnixSocket.writeAll(connection, $0) } },
            failure: { round in
                let said = (try? String(contentsOfFile: daemon.stateDirectory + "/logs/\(id).log", encoding: .utf8)) ?? ""
                let state = (try? daemon.app(id).state) ?? "?"
                return "the probe's handler did not report within 10 s (round \(round), app \(state)); it said: \(said)"
            })
        rounds.report(
            benchmark, handlerMetric: Metrics.voipWake, bareMetric: Metrics.bareThawRead,
            heading: "VoIP socket wake-up: data on the handed-off socket → handler runs",
            context: ["daemon freezer: \(freezer); baseline freezer: \(baseline.raw.kind)"],
            handlerLabel: "socket data → app's handler runs (app frozen)")
    }
}
