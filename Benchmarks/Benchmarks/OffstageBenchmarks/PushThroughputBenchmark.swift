import Benchmark
import Foundation
import NIOPosix
import OffstageBenchKit
import OffstagePush

/// Figure (SPEC NT-3, one node): alert pushes accepted per second by the daemon's embedded gateway (h2c on loopback)
/// under many concurrent HTTP/2 streams, against the same load on ``BareHTTP2Server`` in the same run.
///
/// The load: 8 connections of OffstagePush's `APNsProviderClient` (the app server's client) with 32 streams in flight
/// on each, every stream sending its next push as soon as the previous one is answered. The pushes are alerts
/// (`apns-push-type: alert`, priority 10) to the device tokens of 64 installed apps that registered and exited, in
/// turn, so that the gateway's per-token limit (100 a second, 200 at once) does not bind below 6,400 a second; each
/// push accepted is stored in the device's inbox before its 200, then shown (the apps are not running). Only 200s are
/// counted, in the windows after a 1 s warm-up on fresh connections; windows of the gateway and of the bare server
/// alternate, so both see the same machine. Answers other than 200 are counted by status.
///
/// The three-node figure (`offstage-push` nodes over PostgreSQL) is ``PushClusterThroughputBenchmark``, with the same
/// load.
enum PushThroughputBenchmark {
    static let connections = 8
    static let streamsPerConnection = 32
    static let apps = 64
    static let windowSeconds = 5.0
    static let warmupSeconds = 1.0
    /// Windows per target, alternating gateway and bare server.
    static let windowsPerTarget = 2
    static let payload = Data(#"{"aps":{"alert":{"title":"Bench","body":"A message"}},"bench":"load"}"#.utf8)

    /// What one window of load gave.
    struct Window: Sendable {
        var accepted = 0
        /// Every 200, warm-up and stragglers after the window included (what the servers' CPU time was spent on).
        var acceptedInAll = 0
        var seconds = 0.0
        /// 200s per whole second of the window.
        var perSecond: [Int] = []
        var otherStatuses: [Int: Int] = [:]
        var errors = 0
        var firstError = ""
        /// send → 200, ns, of the 200s counted.
        var latencies: [UInt64] = []
        var rate: Double { seconds > 0 ? Double(accepted) / seconds : 0 }
    }

    static func run(_ benchmark: Benchmark) throws {
        let daemon = try DaemonFixture(settings: ["suspendDelay": 0])
        defer { daemon.tearDown() }
        try daemon.start()
        let reportPath = daemon.root + "/reports.sock"
        let reports = try UnixSocket.bindDatagram(path: reportPath)
        defer { close(reports) }
        var targets: [(token: String, topic: String)] = []
        for index in 0..<apps {
            let id = String(format: "bench.pushload%03d", index)
            let token = try PushFixture.installAndRegister(daemon, id: id, reports: reports, reportPath: reportPath, exit: true)
            targets.append((token, id))
        }
        for (_, id) in targets { try NotificationLatenessBenchmark.waitUntilExited(daemon, id) }
        let credentials = try PushFixture.addKey(daemon, topics: nil)
        let gateway = try PushFixture.gateway(daemon)
        let bareServer = try BareHTTP2Server()
        defer { bareServer.shutdown() }
        let notifications = targets.map {
            APNsNotification(deviceToken: $0.token, topic: $0.topic, payload: payload, pushType: .alert, priority: .immediate)
        }
        // The app servers' event loops: two threads for the eight connections.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        defer { try? group.syncShutdownGracefully() }

        let loadAtStart = NotificationLatenessBenchmark.loadAverage()
        var gatewayWindows: [Window] = []
        var bareWindows: [Window] = []
        var daemonCPU: UInt64 = 0
        for _ in 0..<windowsPerTarget {
            let cpuBefore = MonotonicClock.processCPU(daemon.pid) ?? 0
            gatewayWindows.append(
                try load(host: gateway.host, ports: [gateway.port], credentials: credentials, notifications: notifications, group: group))
            daemonCPU += (MonotonicClock.processCPU(daemon.pid) ?? cpuBefore) - cpuBefore
            bareWindows.append(
                try load(host: "127.0.0.1", ports: [bareServer.port], credentials: credentials, notifications: notifications, group: group))
        }
        let loadAtEnd = NotificationLatenessBenchmark.loadAverage()
        let status = try PushFixture.status(daemon, limit: 0)

        let gatewayTotal = merge(gatewayWindows)
        let bareTotal = merge(bareWindows)
        benchmark.measurement(Metrics.pushRate, Int(gatewayTotal.rate.rounded()))
        benchmark.measurement(Metrics.pushBareRate, Int(bareTotal.rate.rounded()))
        Report.record(benchmark, Metrics.pushLoadLatency, gatewayTotal.latencies)
        Report.record(benchmark, Metrics.pushBareLoadLatency, bareTotal.latencies)

        Report.heading(
            "Push: alert pushes accepted per second, one node, \(connections) connections × \(streamsPerConnection) streams in flight, \(windowsPerTarget) × \(Int(windowSeconds)) s per target")
        Report.line("gateway h2c at \(gateway.host):\(gateway.port); \(apps) device tokens; load average \(loadAtStart) at the start, \(loadAtEnd) at the end")
        func describe(_ label: String, _ windows: [Window], _ total: Window) {
            let perWindow = windows.map { String(format: "%.0f", $0.rate) }.joined(separator: ", ")
            let seconds = windows.flatMap(\.perSecond)
            Report.line(
                "\(label.padding(toLength: 30, withPad: " ", startingAt: 0)) \(String(format: "%8.0f", total.rate)) accepted/s (windows: \(perWindow); whole seconds \(seconds.min() ?? 0)–\(seconds.max() ?? 0)); \(total.accepted) 200s in \(String(format: "%.1f", total.seconds)) s")
            let others = total.otherStatuses.sorted { $0.key < $1.key }.map { "\($0.value) × \($0.key)" }.joined(separator: ", ")
            if !others.isEmpty || total.errors > 0 {
                Report.line("   not accepted: \(others.isEmpty ? "none" : others); client errors \(total.errors) \(total.firstError)")
            }
        }
        describe("embedded gateway (daemon)", gatewayWindows, gatewayTotal)
        describe("baseline: bare HTTP/2 server", bareWindows, bareTotal)
        Report.latency("gateway: send → 200 under this load", Distribution(gatewayTotal.latencies))
        Report.latency("bare: send → 200 under this load", Distribution(bareTotal.latencies))
        Report.line("ratio gateway / bare: \(Report.ratio(gatewayTotal.rate, bareTotal.rate))")
        let pushesDuringGateway = gatewayWindows.reduce(0) { $0 + $1.accepted }
        let cpuSeconds = String(format: "%.2f", Double(daemonCPU) / 1e9)
        let cpuPerPush = String(format: "%.0f", Double(daemonCPU) / 1e3 / Double(max(pushesDuringGateway, 1)))
        Report.line(
            "daemon CPU in the gateway windows (warm-ups included): \(cpuSeconds) s, \(cpuPerPush) µs per push counted; "
                + "pushes stored and not yet done with at the end: \(status.stored)")
        Report.line("three nodes over PostgreSQL: \"Gateway cluster.*\" (offstage-push)")
    }

    /// One window: connects the clients (connection `i` to `ports[i % ports.count]`), runs the load for the warm-up
    /// and the window, counts the 200s that arrive within the window.
    static func load(
        host: String, ports: [Int], credentials: APNsProviderClient.Configuration.Credentials, notifications: [APNsNotification],
        group: MultiThreadedEventLoopGroup
    ) throws -> Window {
        var clients: [APNsProviderClient] = []
        for index in 0..<connections {
            clients.append(try PushFixture.connect(host: host, port: ports[index % ports.count], credentials: credentials, group: group))
        }
        let allClients = clients
        defer {
            _ = try? blocking {
                for client in allClients { await client.close() }
            }
        }
        let windowStart = MonotonicClock.now() + UInt64(warmupSeconds * 1e9)
        let windowEnd = windowStart + UInt64(windowSeconds * 1e9)
        let streams = connections * streamsPerConnection
        let seconds = Int(windowSeconds.rounded(.up))
        return try blocking {
            await withTaskGroup(of: Window.self) { tasks in
                for stream in 0..<streams {
                    let client = allClients[stream % connections]
                    tasks.addTask {
                        var window = Window()
                        window.perSecond = Array(repeating: 0, count: seconds)
                        var next = stream
                        while true {
                            let start = MonotonicClock.now()
                            guard start < windowEnd else { break }
                            let notification = notifications[next % notifications.count]
                            next += 1
                            do {
                                let response = try await client.send(notification)
                                let answered = MonotonicClock.now()
                                if response.status == 200 { window.acceptedInAll += 1 }
                                guard answered >= windowStart, answered < windowEnd else { continue }
                                if response.status == 200 {
                                    window.accepted += 1
                                    window.perSecond[Int((answered - windowStart) / 1_000_000_000)] += 1
                                    window.latencies.append(answered - start)
                                } else {
                                    window.otherStatuses[response.status, default: 0] += 1
                                }
                            } catch {
                                if window.errors == 0 { window.firstError = "\(error)" }
                                window.errors += 1
                                // A closed connection fails at once: do not spin on it.
                                if !client.isConnected { break }
                            }
                        }
                        return window
                    }
                }
                var total = Window()
                total.perSecond = Array(repeating: 0, count: seconds)
                for await window in tasks {
                    let perSecond = zip(total.perSecond, window.perSecond).map(+)
                    total = merge([total, window])
                    total.perSecond = perSecond
                }
                total.seconds = windowSeconds
                return total
            }
        }
    }

    /// The windows added up, their per-second counts one after the other.
    static func merge(_ windows: [Window]) -> Window {
        var total = Window()
        for window in windows {
            total.accepted += window.accepted
            total.acceptedInAll += window.acceptedInAll
            total.seconds += window.seconds
            total.perSecond += window.perSecond
            for (status, count) in window.otherStatuses { total.otherStatuses[status, default: 0] += count }
            if total.errors == 0 { total.firstError = window.firstError }
            total.errors += window.errors
            total.latencies += window.latencies
        }
        return total
    }
}
