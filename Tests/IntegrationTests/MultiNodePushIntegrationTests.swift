import Foundation
import Glibc
import OffstagePush
import OffstageProtocol
import Synchronization
import Testing

/// Push through a multi-device gateway (SPEC NT-3..5, decisions 0035 and 0036): three real `offstage-push` nodes over
/// a real PostgreSQL, a real daemon linked to them as a device, and the real messenger. App servers are aioapns and
/// pywebpush, clients nobody here wrote, and the gateway's own provider client for volume.
@Suite("Push through a three-node gateway over PostgreSQL (SPEC NT-3, NT-5)", .serialized)
struct MultiNodePushIntegrationTests {
    static let messenger = PushIntegrationTests.messenger

    /// A daemon linked to `cluster` (trying node 1 first), started; torn down by the caller.
    static func linkedDaemon(_ cluster: PushClusterHarness) throws -> DaemonHarness {
        var settings = DaemonHarness.fastTimings
        settings["push"] = cluster.remoteSettings(public: 1)
        let daemon = try DaemonHarness(settings: settings)
        do {
            try daemon.start()
        } catch {
            daemon.tearDown()
            throw error
        }
        return daemon
    }

    /// The messenger's token from its output.
    static func token(_ daemon: DaemonHarness) throws -> String {
        try daemon.waitUntil("the messenger registered") { daemon.output(messenger).contains("registered token=") }
        let line = try #require(daemon.output(messenger).split(separator: "\n").first { $0.contains("registered token=") })
        return String(try #require(line.split(separator: " ").first { $0.hasPrefix("token=") }).dropFirst(6))
    }

    /// The node `phone-1` is connected to, per `offstage-push status`.
    static func connectedNode(_ cluster: PushClusterHarness) throws -> (node: String?, stored: Int) {
        let devices = try cluster.status()["devices"] as? [[String: Any]] ?? []
        let device = devices.first { $0["name"] as? String == PushClusterHarness.device }
        return (device?["connectedNode"] as? String, device?["storedPushes"] as? Int ?? -1)
    }

    @Test("NT-3, NT-5: aioapns and pywebpush wake the frozen messenger through a three-node gateway over PostgreSQL, at whichever node they reach")
    func realClientsThroughThreeNodes() throws {
        let cluster = try PushClusterHarness()
        defer { cluster.tearDown() }
        let daemon = try Self.linkedDaemon(cluster)
        defer { daemon.tearDown() }
        let vapid = try WebPushIntegrationTests.vapidKey(daemon, "vapid.pem")
        let subscription = try WebPushIntegrationTests.installAndSubscribe(
            daemon, vapidPublicKey: vapid.publicKey, endpointPrefix: cluster.origin(1) + "/push/")
        let token = try Self.token(daemon)
        let status = try PushIntegrationTests.status(daemon)
        #expect(!status.gateway.embedded && status.gateway.tls && status.gateway.address == cluster.origin(1))
        #expect(status.connectedDevices == 1)
        try daemon.waitUntil("the device is linked to node n1") { try Self.connectedNode(cluster).node == "n1" }
        try daemon.ok("home")
        try daemon.waitFor(Self.messenger, "suspended")

        // aioapns reaches node 3; the device's link is on node 1.
        let sent = try PushClientInteropTests.aioapns(
            port: cluster.ports[2], folder: cluster.folder, key: cluster.key, token: token,
            payload: #"{"aps":{"content-available":1},"message":"m-7"}"#, type: "background", priority: 5)
        #expect(sent["successful"] as? Bool == true, "\(sent)")
        let id = try #require(sent["id"] as? String)
        let record = try PushIntegrationTests.record(daemon, id)
        #expect(record.outcome == "handled" && record.detail == "newData")
        #expect(daemon.output(Self.messenger).contains("fetched m-7 after push \(id)"))
        try daemon.waitFor(Self.messenger, "suspended")

        // The CLI sends as an app server would, to the gateway the device names (node 2), trusting the test's CA.
        let cliID = try PushIntegrationTests.push(
            daemon, cluster.key, #"{"aps":{"content-available":1},"message":"m-8"}"#, ["--ca", cluster.folder + "/ca.pem"])
        #expect(try PushIntegrationTests.record(daemon, cliID).outcome == "handled")
        #expect(daemon.output(Self.messenger).contains("fetched m-8 after push \(cliID)"))
        try daemon.waitFor(Self.messenger, "suspended")

        // pywebpush reaches node 2 (the endpoint's), which stores the message encrypted; the device decrypts it.
        let message = try WebPushIntegrationTests.send(
            subscription, key: vapid.path, #"{"message":"m-43"}"#, ttl: 120, urgency: "high", topic: "inbox",
            trustRoots: cluster.folder + "/ca.pem")
        #expect(message.status == 201, "\(message)")
        let messageID = try #require(message.id)
        let webRecord = try PushIntegrationTests.record(daemon, messageID)
        #expect(webRecord.outcome == "handled" && webRecord.collapseId == "inbox")
        #expect(daemon.output(Self.messenger).contains("fetched m-43 after push \(messageID)"))

        // A token the gateway never saw, and one revoked by uninstalling: APNs's answers, from any node.
        let unknown = try PushClientInteropTests.aioapns(
            port: cluster.ports[0], folder: cluster.folder, key: cluster.key, token: String(repeating: "0", count: 64),
            payload: #"{"aps":{"alert":"hi"}}"#, type: "alert", priority: 10)
        #expect(unknown["status"] as? String == "400" && unknown["description"] as? String == "BadDeviceToken", "\(unknown)")
        try daemon.ok("uninstall", Self.messenger)
        try daemon.waitUntil("the gateway knows the token is revoked") {
            let answer = try PushClientInteropTests.aioapns(
                port: cluster.ports[2], folder: cluster.folder, key: cluster.key, token: token,
                payload: #"{"aps":{"alert":"hi"}}"#, type: "alert", priority: 10)
            return answer["status"] as? String == "410" && answer["description"] as? String == "Unregistered"
        }
        try daemon.waitUntil("the gateway knows the subscription ended") {
            let gone = try WebPushIntegrationTests.send(
                subscription, key: vapid.path, #"{"message":"m-44"}"#, trustRoots: cluster.folder + "/ca.pem")
            return gone.status == 410
        }
        try daemon.waitUntil("every stored push was acknowledged") { try Self.connectedNode(cluster).stored == 0 }
    }

    /// Pushes sent with the gateway's provider client, recording which were answered 200.
    final class Sender: Sendable {
        let acknowledged = Mutex<[String]>([])
        let failed = Mutex(0)

        /// Sends `count` alert pushes to `port` on `streams` concurrent streams, until done or the connection fails;
        /// `acknowledged` runs after each 200 with the number so far.
        func send(
            _ count: Int, port: Int, token: String, cluster: PushClusterHarness, streams: Int = 4, label: String,
            acknowledged onAcknowledged: @escaping @Sendable (Int) -> Void = { _ in }
        ) async {
            let pem = (try? String(contentsOfFile: cluster.folder + "/push.p8", encoding: .utf8)) ?? ""
            let trust = (try? String(contentsOfFile: cluster.folder + "/ca.pem", encoding: .utf8)) ?? ""
            guard
                let client = try? await APNsProviderClient.connect(
                    .init(
                        host: "localhost", port: port, tls: .init(trustRootsPEM: trust),
                        credentials: .init(keyID: PushClusterHarness.keyID, teamID: PushClusterHarness.teamID, privateKeyPEM: pem)))
            else {
                failed.withLock { $0 += count }
                return
            }
            await withTaskGroup(of: Void.self) { group in
                for stream in 0..<streams {
                    group.addTask {
                        for index in stride(from: stream, to: count, by: streams) {
                            let notification = APNsNotification(
                                deviceToken: token, topic: MultiNodePushIntegrationTests.messenger,
                                payload: Data(#"{"aps":{"alert":{"title":"\#(label) \#(index)"}}}"#.utf8), pushType: .alert,
                                priority: .immediate, apnsID: UUID().uuidString.lowercased())
                            if let response = try? await client.send(notification), response.status == 200,
                                let id = response.apnsID
                            {
                                let count = self.acknowledged.withLock { list in
                                    list.append(id)
                                    return list.count
                                }
                                onAcknowledged(count)
                            } else {
                                self.failed.withLock { $0 += 1 }
                            }
                        }
                    }
                }
            }
            await client.close()
        }
    }

    @Test("NT-5: kill -9 of the device's node while app servers send loses nothing answered 200: the device reconnects to another node and every such push reaches its inbox once")
    func nodeKillLosesNothing() async throws {
        let cluster = try PushClusterHarness()
        defer { cluster.tearDown() }
        let daemon = try Self.linkedDaemon(cluster)
        defer { daemon.tearDown() }
        try daemon.install("Messenger", id: Self.messenger, ["UIBackgroundModes": ["remote-notification"]])
        try daemon.ok("open", Self.messenger)
        let token = try Self.token(daemon)
        try daemon.waitUntil("the device is linked to node n1") { try Self.connectedNode(cluster).node == "n1" }

        // Sending to node 1, the device's own, on four streams, and killing it with SIGKILL right after its 30th 200,
        // with the other streams' pushes in flight.
        let sender = Sender()
        let node1 = cluster.nodes[0].pid
        await sender.send(400, port: cluster.ports[0], token: token, cluster: cluster, label: "n1") { count in
            if count == 30 { kill(node1, SIGKILL) }
        }
        cluster.kill(0)
        let cutOff = sender.failed.withLock { $0 }
        #expect(cutOff > 0, "pushes were in flight or refused when node 1 died")
        // Meanwhile app servers go on at node 3, while the device finds a node again.
        await sender.send(40, port: cluster.ports[2], token: token, cluster: cluster, label: "n3")
        let acknowledged = sender.acknowledged.withLock { $0 }
        #expect(acknowledged.count >= 70 && Set(acknowledged).count == acknowledged.count)

        try daemon.waitUntil("the device is linked to another node", timeout: 30) {
            ["n2", "n3"].contains(try Self.connectedNode(cluster).node ?? "")
        }
        var missing: Set<String> = []
        try daemon.waitUntil("every push answered 200 is in the device's inbox", timeout: 30) {
            let ids = Set(try PushIntegrationTests.status(daemon, limit: 10_000).records.map(\.id))
            missing = Set(acknowledged).subtracting(ids)
            return missing.isEmpty
        }
        #expect(missing.isEmpty, "lost: \(missing.sorted().prefix(5))")
        let records = try PushIntegrationTests.status(daemon, limit: 10_000).records
        #expect(records.count == Set(records.map(\.id)).count, "none twice")
        try daemon.waitUntil("the gateway holds nothing more for the device") { try Self.connectedNode(cluster).stored == 0 }
    }

    @Test("NT-5: kill -9 of the device's daemon while pushes flow loses nothing answered 200 and delivers nothing twice: the restarted daemon takes again what it had not acknowledged")
    func daemonKillLosesNothing() async throws {
        let cluster = try PushClusterHarness()
        defer { cluster.tearDown() }
        let daemon = try Self.linkedDaemon(cluster)
        defer { daemon.tearDown() }
        try daemon.install("Messenger", id: Self.messenger, ["UIBackgroundModes": ["remote-notification"]])
        try daemon.ok("open", Self.messenger)
        let token = try Self.token(daemon)
        try daemon.waitUntil("the device is linked") { try Self.connectedNode(cluster).node != nil }

        // The app server goes on at node 2 while the device's daemon is killed after the 40th 200 and started again.
        let sender = Sender()
        let crashed = Mutex(false)
        await sender.send(300, port: cluster.ports[1], token: token, cluster: cluster, label: "d") { count in
            if count == 40 {
                daemon.crash()
                crashed.withLock { $0 = true }
            }
        }
        #expect(crashed.withLock { $0 })
        let stored = try Self.connectedNode(cluster).stored
        try daemon.start()
        let acknowledged = sender.acknowledged.withLock { $0 }
        #expect(acknowledged.count == 300, "the gateway takes pushes while the device is away: \(sender.failed.withLock { $0 }) failed")
        #expect(stored > 0, "pushes waited at the gateway for the device")
        var missing: Set<String> = []
        try daemon.waitUntil("every push answered 200 is in the restarted daemon's inbox, finished", timeout: 30) {
            let done = Set(try PushIntegrationTests.status(daemon, limit: 10_000).records.filter { $0.state == "done" }.map(\.id))
            missing = Set(acknowledged).subtracting(done)
            return missing.isEmpty
        }
        #expect(missing.isEmpty, "lost: \(missing.sorted().prefix(5))")
        // None was finished twice: at most one "push <id>: …" line in the app's event log, across both daemons (the
        // killed one's last lines may be lost with it, never doubled).
        let finished = try daemon.log(Self.messenger).compactMap { line -> String? in
            guard line.kind == "push", line.message.hasPrefix("push "), let colon = line.message.firstIndex(of: ":") else { return nil }
            return String(line.message[line.message.index(line.message.startIndex, offsetBy: 5)..<colon])
        }
        let twice = Dictionary(finished.map { ($0, 1) }, uniquingKeysWith: +).filter { $0.value > 1 }
        #expect(twice.isEmpty, "finished twice: \(twice.keys.sorted().prefix(5))")
        #expect(finished.count >= acknowledged.count - 50, "the log has at least the pushes finished after the restart (the kill came at the 40th 200, four streams in flight)")
        try daemon.waitUntil("the gateway holds nothing more for the device") { try Self.connectedNode(cluster).stored == 0 }
    }
}
