import Benchmark
import Foundation
import NIOPosix
import OffstageBenchKit
import OffstagePush

/// Figure (SPEC NT-5, §11): alert pushes accepted per second by the multi-device gateway, three `offstage-push`
/// nodes over one PostgreSQL, against one node over the same database and the same load on ``BareHTTP2Server``, all in
/// the same run, with ``PushThroughputBenchmark``'s load: 8 connections of `APNsProviderClient` × 32 streams, alert
/// pushes through 64 device tokens, a 1 s warm-up and 5 s windows on fresh connections, windows alternating.
///
/// For three nodes the connections are divided over them (3, 3, 2); for one node all go to n1. The tokens are those
/// of 64 probe apps on a real daemon linked to the nodes as the device (`push.remote`), so every push accepted is also
/// pulled by the device over its link, written to its inbox, acknowledged (deleted from PostgreSQL) and shown. After
/// each gateway window the benchmark waits until PostgreSQL holds nothing more for the device, so every window starts
/// with an empty backlog; the CPU time of the nodes, PostgreSQL and the daemon is read from /proc over the window and
/// that wait, and divided by every 200 the window's load got. PostgreSQL runs with its durability defaults (`fsync`
/// on, `synchronous_commit` on); a second phase repeats the windows after `ALTER SYSTEM SET synchronous_commit = off`.
enum PushClusterThroughputBenchmark {
    typealias Window = PushThroughputBenchmark.Window
    /// Rounds per phase; each round is a one-node, a three-node and a bare window.
    static let rounds = 2

    /// The windows of one kind (a node count in a phase), with what they cost.
    struct Row {
        var label: String
        var windows: [Window] = []
        var nodesCPU: UInt64 = 0
        var postgresCPU: UInt64 = 0
        var daemonCPU: UInt64 = 0
        /// Pushes PostgreSQL held for the device at the end of each window, and how long the device took to clear them.
        var backlogs: [Int] = []
        var drains: [Double] = []
        var total: Window { PushThroughputBenchmark.merge(windows) }
    }

    static func run(_ benchmark: Benchmark) throws {
        let cluster = try PushClusterFixture(nodes: 3)
        defer { cluster.tearDown() }
        let daemon = try cluster.linkedDaemon(settings: ["suspendDelay": 0])
        let reportPath = daemon.root + "/reports.sock"
        let reports = try UnixSocket.bindDatagram(path: reportPath)
        defer { close(reports) }
        var targets: [(token: String, topic: String)] = []
        for index in 0..<PushThroughputBenchmark.apps {
            let id = String(format: "bench.pushcluster%03d", index)
            let token = try PushFixture.installAndRegister(daemon, id: id, reports: reports, reportPath: reportPath, exit: true)
            targets.append((token, id))
        }
        for (_, id) in targets { try NotificationLatenessBenchmark.waitUntilExited(daemon, id) }
        let notifications = targets.map {
            APNsNotification(
                deviceToken: $0.token, topic: $0.topic, payload: PushThroughputBenchmark.payload, pushType: .alert, priority: .immediate)
        }
        let bareServer = try BareHTTP2Server()
        defer { bareServer.shutdown() }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        defer { try? group.syncShutdownGracefully() }
        let settingsQuery = "SELECT 'fsync ' || current_setting('fsync') || ', synchronous_commit ' || current_setting('synchronous_commit')"

        let loadAtStart = NotificationLatenessBenchmark.loadAverage()
        var phases: [(settings: String, rows: [Row], bare: Row)] = []
        for phase in 0..<2 {
            if phase == 1 {
                try cluster.postgres.sql("ALTER SYSTEM SET synchronous_commit = off")
                try cluster.postgres.sql("SELECT pg_reload_conf()")
                try cluster.waitUntil("synchronous_commit off", seconds: 10) {
                    try cluster.postgres.sql("SHOW synchronous_commit") == "off"
                }
            }
            let settings = try cluster.postgres.sql(settingsQuery)
            var rows = [Row(label: "one node (n1)"), Row(label: "three nodes (n1–n3)")]
            var bare = Row(label: "baseline: bare HTTP/2 server")
            for _ in 0..<rounds {
                for (index, ports) in [[cluster.ports[0]], cluster.ports].enumerated() {
                    try gatewayWindow(&rows[index], cluster: cluster, daemon: daemon, ports: ports, notifications: notifications, group: group)
                }
                bare.windows.append(
                    try PushThroughputBenchmark.load(
                        host: "127.0.0.1", ports: [bareServer.port], credentials: cluster.credentials, notifications: notifications,
                        group: group))
            }
            phases.append((settings, rows, bare))
        }
        let loadAtEnd = NotificationLatenessBenchmark.loadAverage()

        let (onRows, onBare) = (phases[0].rows, phases[0].bare.total)
        benchmark.measurement(Metrics.pushClusterRate, Int(onRows[1].total.rate.rounded()))
        benchmark.measurement(Metrics.pushClusterOneNodeRate, Int(onRows[0].total.rate.rounded()))
        benchmark.measurement(Metrics.pushClusterBareRate, Int(onBare.rate.rounded()))
        benchmark.measurement(Metrics.pushClusterAsyncRate, Int(phases[1].rows[1].total.rate.rounded()))
        Report.record(benchmark, Metrics.pushClusterLatency, onRows[1].total.latencies)
        Report.record(benchmark, Metrics.pushClusterOneNodeLatency, onRows[0].total.latencies)

        Report.heading(
            "Gateway cluster: alert pushes accepted per second, offstage-push over PostgreSQL, \(PushThroughputBenchmark.connections) connections × \(PushThroughputBenchmark.streamsPerConnection) streams, \(rounds) × \(Int(PushThroughputBenchmark.windowSeconds)) s per row")
        Report.line(
            "nodes h2c at \(cluster.ports.map(String.init).joined(separator: ", ")); \(targets.count) device tokens of a linked daemon; load average \(loadAtStart) at the start, \(loadAtEnd) at the end")
        for (settings, rows, bare) in phases {
            Report.line("-- PostgreSQL \(settings)")
            for row in rows { describe(row, bare: bare.total) }
            describe(bare, bare: bare.total)
        }
    }

    /// One gateway window on `ports`, then the wait until the device has taken every stored push; adds both to `row`.
    static func gatewayWindow(
        _ row: inout Row, cluster: PushClusterFixture, daemon: DaemonFixture, ports: [Int], notifications: [APNsNotification],
        group: MultiThreadedEventLoopGroup
    ) throws {
        let before = (cluster.nodesCPU(), cluster.postgres.cpu(), MonotonicClock.processCPU(daemon.pid) ?? 0)
        row.windows.append(
            try PushThroughputBenchmark.load(
                host: "127.0.0.1", ports: ports, credentials: cluster.credentials, notifications: notifications, group: group))
        let drainStart = MonotonicClock.now()
        row.backlogs.append(try cluster.device().stored)
        try cluster.waitUntil("the device took every stored push", seconds: 300) { try cluster.device().stored == 0 }
        row.drains.append(Double(MonotonicClock.now() - drainStart) / 1e9)
        row.nodesCPU += cluster.nodesCPU() - before.0
        row.postgresCPU += cluster.postgres.cpu() - before.1
        row.daemonCPU += (MonotonicClock.processCPU(daemon.pid) ?? before.2) - before.2
    }

    static func describe(_ row: Row, bare: Window) {
        let total = row.total
        let perWindow = row.windows.map { String(format: "%.0f", $0.rate) }.joined(separator: ", ")
        let seconds = row.windows.flatMap(\.perSecond)
        Report.line(
            "\(row.label.padding(toLength: 30, withPad: " ", startingAt: 0)) \(String(format: "%7.0f", total.rate)) accepted/s (windows: \(perWindow); whole seconds \(seconds.min() ?? 0)–\(seconds.max() ?? 0)); ratio to bare \(Report.ratio(total.rate, bare.rate))")
        let latency = Distribution(total.latencies)
        Report.line(
            "   send → 200 under load: p50 \(String(format: "%.1f", latency.p50 / 1e6)) ms, p99 \(String(format: "%.1f", latency.p99 / 1e6)) ms (n=\(latency.count))")
        let others = total.otherStatuses.sorted { $0.key < $1.key }.map { "\($0.value) × \($0.key)" }.joined(separator: ", ")
        if !others.isEmpty || total.errors > 0 {
            Report.line("   not accepted: \(others.isEmpty ? "none" : others); client errors \(total.errors) \(total.firstError)")
        }
        guard !row.backlogs.isEmpty else { return }
        let pushes = Double(max(total.acceptedInAll, 1))
        func perPush(_ cpu: UInt64) -> String { String(format: "%.0f µs", Double(cpu) / 1e3 / pushes) }
        Report.line(
            "   CPU per push (all \(total.acceptedInAll) 200s, window and drain): nodes \(perPush(row.nodesCPU)), PostgreSQL \(perPush(row.postgresCPU)), daemon \(perPush(row.daemonCPU))")
        Report.line(
            "   stored for the device at each window's end: \(row.backlogs.map(String.init).joined(separator: ", ")); cleared in \(row.drains.map { String(format: "%.1f s", $0) }.joined(separator: ", "))")
    }
}
