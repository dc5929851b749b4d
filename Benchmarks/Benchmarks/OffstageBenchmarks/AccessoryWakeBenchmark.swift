import Benchmark
import COffstageSystem
import Foundation
import OffstageBenchKit
import OffstageProtocol

/// Figure (SPEC MODE-4): data arrives on the session an accessory app handed off while it is frozen → the app's
/// handler runs, on the real daemon, against a bare thaw + read of a frozen process of our own in the same loop.
///
/// - accessory data → handler: from just before the benchmark writes one byte to the master of the pseudo-terminal
///   standing in for a serial accessory to the timestamp the app takes on entering its
///   `accessoryManager(_:didReceiveDataFrom:)` (the daemon's watcher sees the data on its duplicate of the app's
///   session, the core thaws the app and sends the callback, the SDK runs the delegate method).
/// - baseline: the echo helper, frozen by a cgroup of our own; from just before writing a request to its socket,
///   through thawing it, to its answer arriving (the helper wakes, reads, answers), as in ``VoIPWakeBenchmark``.
///
/// All timestamps are CLOCK_MONOTONIC, shared by every process of the machine.
enum AccessoryWakeBenchmark {
    static func run(_ benchmark: Benchmark) throws {
        // No delay before suspension and 50 ms to handle the data: the app is frozen again soon after, ready for the
        // next round.
        let daemon = try DaemonFixture(settings: ["suspendDelay": 0, "accessoryEventTime": 0.05])
        // The port exists before the app registers it, so the app finds it connected and opens its session at launch.
        let port: StandInPort
        do {
            port = try StandInPort(linkedAt: daemon.root + "/bench-tty")
        } catch {
            daemon.tearDown()
            throw error
        }
        defer {
            daemon.tearDown()
            // After the daemon: closing the port first would be a disconnection the app is woken for.
            port.close()
        }
        try daemon.start()
        let freezer = try daemon.status().freezer
        let reportPath = daemon.root + "/stamps.sock"
        let stamps = try UnixSocket.bindDatagram(path: reportPath)
        defer { close(stamps) }
        let id = "bench.accessory"
        try daemon.install(
            try daemon.probeBundle(
                id: id, arguments: ["--accessory", port.link, "--report", reportPath],
                extra: ["UIBackgroundModes": ["external-accessory"]]))
        try daemon.open(id)
        guard let appPid = try daemon.waitFor(id, "active").pid else { throw BenchError("\(id) has no pid") }
        try waitForSession(daemon, id)
        let appObserver = try FreezeObservers.forApp(pid: appPid, freezer: freezer)
        try daemon.home()
        _ = try appObserver.wait(frozen: true, timeoutSeconds: 10)

        let baseline = try EchoBaseline(in: daemon)
        defer { baseline.tearDown() }
        let data: [UInt8] = [0x21]
        let rounds = try WakeRounds.measure(
            app: appObserver, stamps: stamps, baseline: baseline, trigger: { try port.send(data) },
            failure: { round in
                let state = (try? daemon.app(id).state) ?? "?"
                return "the probe's handler did not report within 10 s (round \(round), app \(state)); "
                    + "it said: \(appLog(daemon, id))"
            })
        rounds.report(
            benchmark, handlerMetric: Metrics.accessoryWake, bareMetric: Metrics.accessoryBareThawRead,
            heading: "Accessory wake-up: data on the handed-off session → handler runs",
            context: [
                "daemon freezer: \(freezer); baseline freezer: \(baseline.raw.kind)",
                "port: \(port.slave), linked at bench-tty in the daemon's folder",
            ],
            handlerLabel: "accessory data → handler runs (app frozen)")
    }

    /// Waits until the daemon holds the session the app handed off (it does in did-finish-launching).
    static func waitForSession(_ daemon: DaemonFixture, _ id: String) throws {
        let deadline = MonotonicClock.now() + 10_000_000_000
        while MonotonicClock.now() < deadline {
            let links = try daemon.call(
                ModesControlInterface.Method.accessories, NoParameters(),
                as: ModesControlInterface.AccessoryLinksReply.self
            ).accessories
            if links.contains(where: { $0.app == id && $0.name == "bench" && $0.session }) { return }
            MonotonicClock.sleep(milliseconds: 10)
        }
        throw BenchError("\(id) did not hand off its accessory session within 10 s; it said: \(appLog(daemon, id))")
    }

    /// What the app printed (the daemon keeps each app's output in its log folder).
    static func appLog(_ daemon: DaemonFixture, _ id: String) -> String {
        (try? String(contentsOfFile: daemon.stateDirectory + "/logs/\(id).log", encoding: .utf8)) ?? ""
    }
}

/// A pseudo-terminal standing in for a serial accessory, as the `ScannerDevice` example makes one: the slave is
/// reachable through a symbolic link, as udev's `/dev/serial/by-id/…` links reach real serial ports, and a descriptor
/// of the slave held here keeps the line up and puts it in raw mode, so a byte written to the master is readable at
/// once (not held back until a newline) and is not echoed.
final class StandInPort {
    let master: Int32
    let held: Int32
    let slave: String
    let link: String

    init(linkedAt path: String) throws {
        var name = [CChar](repeating: 0, count: 128)
        master = offstage_open_pty(&name, name.count)
        guard master >= 0 else { throw SystemCallError("offstage_open_pty") }
        slave = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        link = path
        held = open(slave, O_RDWR | O_NOCTTY | O_CLOEXEC)
        var settings = termios()
        guard held >= 0, tcgetattr(held, &settings) == 0 else {
            let error = SystemCallError("open \(slave)")
            if held >= 0 { Glibc.close(held) }
            Glibc.close(master)
            throw error
        }
        cfmakeraw(&settings)
        guard tcsetattr(held, TCSANOW, &settings) == 0, symlink(slave, path) == 0 else {
            let error = SystemCallError("raw mode or link for \(slave)")
            Glibc.close(held)
            Glibc.close(master)
            throw error
        }
    }

    /// Writes `bytes` to the master: what the accessory sends (a pseudo-terminal is no socket, so `write`, not `send`).
    func send(_ bytes: [UInt8]) throws {
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { write(master, $0.baseAddress! + written, $0.count - written) }
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else { throw SystemCallError("write \(slave)'s master") }
            written += result
        }
    }

    /// Removes the link and closes both ends (a hang-up for whoever still has the port open).
    func close() {
        unlink(link)
        Glibc.close(held)
        Glibc.close(master)
    }
}
