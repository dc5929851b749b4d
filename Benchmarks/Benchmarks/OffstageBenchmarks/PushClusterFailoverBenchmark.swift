import Benchmark
import Foundation
import NIOPosix
import OffstageBenchKit
import OffstageProtocol
import OffstagePush

/// Figure (SPEC NT-3, NT-5: no accepted push lost): pushes the gateway answered 200 and still held, unacknowledged,
/// when the node holding the device's link was killed with SIGKILL, and how long after the kill the last of them was
/// in the device's inbox. Three `offstage-push` nodes over one PostgreSQL (durability defaults), a real daemon linked
/// to them as the device (trying n1, n2, n3 in turn), 8 probe apps registered for remote notifications (the pushes
/// go to their tokens in turn: 125 a token a round, under the gateway's per-token burst of 200 at each node).
///
/// Each round: the node holding the link is found (`offstage-push status`); the daemon is stopped with SIGSTOP, so
/// that nothing sent now can be taken and acknowledged; 1,000 alert pushes with ids of their own go to the two other
/// nodes (two connections, 16 streams each), counting the 200s; the node holding the link is killed with SIGKILL
/// and the daemon resumed with SIGCONT at once; the benchmark then reads the daemon's push records
/// (`io.offstage.PushControl.Status`, as `offstage push-status` does: the newest 1,000) every 50 ms until every id
/// answered 200 is there. The killed node is started again on its port before the next round, which kills the next link holder.
enum PushClusterFailoverBenchmark {
    static let pushes = 1_000
    static let rounds = 3
    static let apps = 8

    struct Round {
        var killed = ""
        var accepted = 0
        var refused = 0
        var storedAtKill = 0
        var delivered = 0
        var duplicates = 0
        /// Kill → the last id answered 200 read in the inbox, ns (nil when some never came).
        var lastInInbox: UInt64?
        var relinkedTo = ""
    }

    static func run(_ benchmark: Benchmark) throws {
        let cluster = try PushClusterFixture(nodes: 3)
        defer { cluster.tearDown() }
        let daemon = try cluster.linkedDaemon()
        let reportPath = daemon.root + "/reports.sock"
        let reports = try UnixSocket.bindDatagram(path: reportPath)
        defer { close(reports) }
        var targets: [(token: String, topic: String)] = []
        for index in 0..<apps {
            let id = "bench.pushfailover\(index)"
            targets.append((try PushFixture.installAndRegister(daemon, id: id, reports: reports, reportPath: reportPath, exit: true), id))
        }
        for (_, id) in targets { try NotificationLatenessBenchmark.waitUntilExited(daemon, id) }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        defer { try? group.syncShutdownGracefully() }
        guard let process = daemon.daemon else { throw BenchError("no daemon") }

        let loadAtStart = NotificationLatenessBenchmark.loadAverage()
        var results: [Round] = []
        for round in 0..<rounds {
            var result = Round()
            var holder: String?
            try cluster.waitUntil("the device's link is up", seconds: 30) {
                holder = try cluster.device().node
                return holder != nil
            }
            guard let holder, let victim = Int(holder.dropFirst()).map({ $0 - 1 }), cluster.ports.indices.contains(victim) else {
                throw BenchError("the device is linked to an unknown node \(holder ?? "nil")")
            }
            result.killed = holder
            let others = cluster.ports.indices.filter { $0 != victim }.map { cluster.ports[$0] }

            process.signal(SIGSTOP)
            let sent: (accepted: [String], refused: Int)
            do {
                sent = try send(round: round, targets: targets, ports: others, credentials: cluster.credentials, group: group)
                result.storedAtKill = try cluster.device().stored
            } catch {
                process.signal(SIGCONT)
                throw error
            }
            let killedAt = MonotonicClock.now()
            cluster.kill(victim)
            process.signal(SIGCONT)
            result.accepted = sent.accepted.count
            result.refused = sent.refused

            let wanted = Set(sent.accepted)
            let deadline = killedAt + 120_000_000_000
            var inInbox: Set<String> = []
            while MonotonicClock.now() < deadline {
                let records = (try? PushFixture.status(daemon, limit: pushes).records) ?? []
                let read = MonotonicClock.now()
                inInbox = Set(records.map(\.id)).intersection(wanted)
                result.duplicates = records.count - Set(records.map(\.id)).count
                if inInbox.count == wanted.count {
                    result.lastInInbox = read - killedAt
                    break
                }
                MonotonicClock.sleep(milliseconds: 50)
            }
            result.delivered = inInbox.count
            try cluster.startNode(victim)
            try cluster.waitUntil("the gateway held nothing more for the device", seconds: 60) { try cluster.device().stored == 0 }
            result.relinkedTo = (try? cluster.device().node) ?? "?"
            results.append(result)
        }
        let loadAtEnd = NotificationLatenessBenchmark.loadAverage()

        let accepted = results.reduce(0) { $0 + $1.accepted }
        let delivered = results.reduce(0) { $0 + $1.delivered }
        benchmark.measurement(Metrics.pushFailoverLost, accepted - delivered)
        Report.record(benchmark, Metrics.pushFailoverDelivery, results.compactMap(\.lastInInbox))
        Report.heading(
            "Gateway cluster: stored pushes delivered after kill -9 of the device's node, three offstage-push nodes over PostgreSQL, \(rounds) rounds of \(pushes)")
        Report.line(
            "PostgreSQL \(try cluster.postgres.sql("SELECT 'fsync ' || current_setting('fsync') || ', synchronous_commit ' || current_setting('synchronous_commit')")); load average \(loadAtStart) at the start, \(loadAtEnd) at the end")
        for (index, result) in results.enumerated() {
            let time = result.lastInInbox.map { String(format: "%.0f ms", Double($0) / 1e6) } ?? "never (within 120 s)"
            Report.line(
                "round \(index + 1): killed \(result.killed) holding the link; \(result.accepted) answered 200 (\(result.refused) not) through the other two, \(result.storedAtKill) stored at the kill; \(result.delivered) of \(result.accepted) in the inbox, kill → last \(time); \(result.duplicates) twice; link now on \(result.relinkedTo)")
        }
        Report.line("delivered / accepted: \(delivered) / \(accepted) — goal all: \(Report.verdict(delivered == accepted && accepted > 0))")
    }

    /// Sends `pushes` alerts with ids of their own to `ports` (one connection each, 16 streams per connection) and
    /// returns the ids answered 200 and how many were not.
    static func send(
        round: Int, targets: [(token: String, topic: String)], ports: [Int], credentials: APNsProviderClient.Configuration.Credentials,
        group: MultiThreadedEventLoopGroup
    ) throws -> (accepted: [String], refused: Int) {
        var clients: [APNsProviderClient] = []
        for port in ports { clients.append(try PushFixture.connect(host: "127.0.0.1", port: port, credentials: credentials, group: group)) }
        let all = clients
        let streams = all.count * 16
        return try blocking {
            let results = await withTaskGroup(of: ([String], Int).self) { tasks in
                for stream in 0..<streams {
                    tasks.addTask {
                        var accepted: [String] = []
                        var refused = 0
                        for index in stride(from: stream, to: pushes, by: streams) {
                            let id = UUID().uuidString.lowercased()
                            let target = targets[index % targets.count]
                            let notification = APNsNotification(
                                deviceToken: target.token, topic: target.topic,
                                payload: Data(#"{"aps":{"alert":{"title":"Round \#(round)","body":"\#(index)"}}}"#.utf8),
                                pushType: .alert, priority: .immediate, apnsID: id)
                            if let response = try? await all[stream % all.count].send(notification), response.status == 200 {
                                accepted.append(id)
                            } else {
                                refused += 1
                            }
                        }
                        return (accepted, refused)
                    }
                }
                var merged: ([String], Int) = ([], 0)
                for await (accepted, refused) in tasks { merged = (merged.0 + accepted, merged.1 + refused) }
                return merged
            }
            for client in all { await client.close() }
            return results
        }
    }
}
