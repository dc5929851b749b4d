import Benchmark
import Foundation
import NIOPosix
import OffstageBenchKit
import OffstagePush

/// Figure (SPEC NT-4, §11: push accepted → handler running in a suspended app, p99 ≤ 5 ms on loopback): a background
/// push sent by an app server to the daemon's embedded gateway (h2c on loopback) → the remote-notification handler of
/// the frozen app begins, on the real daemon, against a bare HTTP/2 round trip with the same client in the same loop.
///
/// - push → handler: from just before the provider client sends the push (`APNsProviderClient.send`, a new stream on
///   its open connection, a provider token signed at connect and reused) to the timestamp the app takes on entering
///   its handler. The gateway checks the request, the token and the device token, writes the push to the device's
///   inbox and answers 200; the engine decides the wake, thaws the app and sends the `remoteNotification` callback;
///   the SDK calls the delegate.
/// - push → 200: the same send, until the client has the gateway's answer.
/// - baseline: the same push with the same client library to ``BareHTTP2Server`` (answers 200 at once), send → 200.
///
/// Each round waits until the daemon lists the app as suspended and its cgroup is frozen, so every round wakes a
/// suspended app. The daemon runs with `suspendDelay` 0 and a background-push budget large enough for every round
/// (`backgroundPushBurst` 10,000 and `backgroundPushesPerHour` 1,000,000; the defaults are 3 and 3), so that none is
/// held. All timestamps are CLOCK_MONOTONIC, shared by every process of the machine.
enum PushWakeBenchmark {
    static let iterations = 300
    static let warmup = 10
    static let gapMilliseconds: UInt64 = 15
    static let target: Double = 5_000_000
    static let id = "bench.push"
    static let payload = Data(#"{"aps":{"content-available":1},"bench":"wake"}"#.utf8)

    struct Rounds {
        /// send → the app's handler began (ns).
        var handler: [UInt64] = []
        /// send → 200 from the gateway (ns).
        var accepted: [UInt64] = []
        /// send → 200 from the bare server (ns).
        var bare: [UInt64] = []
    }

    static func run(_ benchmark: Benchmark) throws {
        let settings: [String: Any] = [
            "suspendDelay": 0, "backgroundPushBurst": 10_000, "backgroundPushesPerHour": 1_000_000,
        ]
        let daemon = try DaemonFixture(settings: settings)
        defer { daemon.tearDown() }
        try daemon.start()
        let freezer = try daemon.status().freezer
        let reportPath = daemon.root + "/stamps.sock"
        let stamps = try UnixSocket.bindDatagram(path: reportPath)
        defer { close(stamps) }

        let token = try PushFixture.installAndRegister(daemon, id: id, reports: stamps, reportPath: reportPath, exit: false)
        guard let appPid = try daemon.waitFor(id, "active").pid else { throw BenchError("\(id) has no pid") }
        let appObserver = try FreezeObservers.forApp(pid: appPid, freezer: freezer)
        try daemon.home()
        try daemon.waitFor(id, "suspended")
        _ = try appObserver.wait(frozen: true, timeoutSeconds: 10)

        let credentials = try PushFixture.addKey(daemon, topics: [id])
        let gateway = try PushFixture.gateway(daemon)
        let bareServer = try BareHTTP2Server()
        defer { bareServer.shutdown() }
        // The app server's event loop: one thread for both connections, as `offstage push` has.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let client = try PushFixture.connect(host: gateway.host, port: gateway.port, credentials: credentials, group: group)
        let bareClient = try PushFixture.connect(host: "127.0.0.1", port: bareServer.port, credentials: credentials, group: group)
        defer {
            _ = try? blocking {
                await client.close()
                await bareClient.close()
            }
        }
        let notification = APNsNotification(
            deviceToken: token, topic: id, payload: payload, pushType: .background, priority: .powerConsidered)

        /// Sends `notification` through `client`; the send's start and the 200's arrival.
        func send(_ client: APNsProviderClient) throws -> (start: UInt64, answered: UInt64) {
            let (start, answered, response) = try blocking {
                let start = MonotonicClock.now()
                let response = try await client.send(notification)
                return (start, MonotonicClock.now(), response)
            }
            guard response.status == 200 else {
                throw BenchError("the push was answered \(response.status) \(response.reason ?? "") (\(String(decoding: response.body, as: UTF8.self)))")
            }
            return (start, answered)
        }

        var rounds = Rounds()
        let loadAtStart = NotificationLatenessBenchmark.loadAverage()
        let cpuBefore = MonotonicClock.processCPU(daemon.pid) ?? 0
        for iteration in 0..<(warmup + iterations) {
            let record = iteration >= warmup

            // Push → handler, with the app suspended and frozen.
            MonotonicClock.sleep(milliseconds: gapMilliseconds)
            try daemon.waitFor(id, "suspended", timeout: 10)
            _ = try appObserver.wait(frozen: true, timeoutSeconds: 10)
            let sent = try send(client)
            guard let bytes = try UnixSocket.receiveDatagram(stamps, timeoutMilliseconds: 10_000),
                let stamp = UInt64(String(decoding: bytes, as: UTF8.self))
            else {
                let said = (try? String(contentsOfFile: daemon.stateDirectory + "/logs/\(id).log", encoding: .utf8)) ?? ""
                throw BenchError("the probe's handler did not report within 10 s (round \(iteration), app \((try? daemon.app(id).state) ?? "?")); it said: \(said)")
            }
            if record {
                rounds.handler.append(stamp &- sent.start)
                rounds.accepted.append(sent.answered - sent.start)
            }

            // Bare: the same push to a server that answers at once.
            MonotonicClock.sleep(milliseconds: gapMilliseconds)
            let bare = try send(bareClient)
            if record { rounds.bare.append(bare.answered - bare.start) }
        }
        let daemonCPU = (MonotonicClock.processCPU(daemon.pid) ?? cpuBefore) - cpuBefore
        let loadAtEnd = NotificationLatenessBenchmark.loadAverage()

        // What the daemon recorded: every push handled with new data, none held.
        let status = try PushFixture.status(daemon, app: id, limit: warmup + iterations + 10)
        let outcomes = Dictionary(grouping: status.records) { "\($0.outcome ?? $0.state) \($0.detail ?? "")" }
            .mapValues(\.count)

        Report.record(benchmark, Metrics.pushWake, rounds.handler)
        Report.record(benchmark, Metrics.pushAccepted, rounds.accepted)
        Report.record(benchmark, Metrics.pushBareRoundTrip, rounds.bare)
        let woken = Distribution(rounds.handler)
        let accepted = Distribution(rounds.accepted)
        let bare = Distribution(rounds.bare)
        Report.heading("Push: background push sent → handler runs in a suspended app, \(iterations) rounds after \(warmup) warm-up")
        Report.line("daemon freezer: \(freezer); gateway h2c at \(gateway.host):\(gateway.port); load average \(loadAtStart) at the start, \(loadAtEnd) at the end")
        Report.latency("push sent → app's handler runs (app frozen)", woken)
        Report.latency("push sent → 200 from the gateway", accepted)
        Report.latency("baseline: bare HTTP/2 round trip (200 at once)", bare)
        Report.line("ratio to the bare round trip: handler p50 \(Report.ratio(woken.p50, bare.p50)), p99 \(Report.ratio(woken.p99, bare.p99)); 200 p50 \(Report.ratio(accepted.p50, bare.p50)), p99 \(Report.ratio(accepted.p99, bare.p99))")
        let cpuPerRound = String(format: "%.0f", Double(daemonCPU) / 1e3 / Double(warmup + iterations))
        Report.line("daemon CPU: \(cpuPerRound) µs per round (push, wake, completion, suspension, and the state polls)")
        Report.line("the daemon's records of these pushes: \(outcomes.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")); held now: \(status.held)")
        Report.line("§11 push accepted → handler running in a suspended app, p99 ≤ 5 ms on loopback: \(Report.verdict(woken.p99 <= target)) (p99 \(Report.microseconds(woken.p99)))")
    }
}
