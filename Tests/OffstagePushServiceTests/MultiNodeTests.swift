import Foundation
import OffstagePush
import OffstagePushService
import PostgresNIO
import Synchronization
import Testing

/// Several nodes on one database: waking the node that holds a device's pull, claims, and shutting a node down
/// (SPEC NT-5).
@Suite(.postgres)
struct MultiNodeTests {
    typealias S = PostgresSuite

    @Test("a pull waiting on node B returns the push node A accepts for its device at once, through NOTIFY (NT-5)")
    func notifyWakesThePullOnAnotherNode() async throws {
        let database = try S.database()
        try await S.withStore(database, node: "a") { nodeA in
            try await S.withStore(database, node: "b") { nodeB in
                let (_, token) = try await S.enroll("phone", in: database, store: nodeA)
                let started = ContinuousClock.now
                let pull = Task { try await nodeB.pull(device: "phone", acknowledging: [], wait: .seconds(10)) }
                // The pull is waiting (it looked, found nothing, and recorded the device at node B).
                #expect(await S.eventually { nodeB.waitingPullCount == 1 })
                let push = S.push(to: token, device: "phone")
                #expect(try await nodeA.accept(push) == .stored)
                let batch = try await pull.value
                let took = ContinuousClock.now - started
                #expect(batch.map(\.apnsID) == [push.apnsID])
                // Woken by the notification, not by the end of its 10 s wait.
                #expect(took < .seconds(5), "the pull took \(took)")
            }
        }
    }

    @Test("a provider key added or removed by the admin is announced to every node, so each gateway forgets the tokens it verified with it (NT-3, NT-5)")
    func keyChangesReachEveryNode() async throws {
        let database = try S.database()
        try await S.withStore(database, node: "a") { nodeA in
            try await S.withStore(database, node: "b") { nodeB in
                let heard = Mutex<[String: [String?]]>([:])
                nodeA.onProviderKeysChanged { id in heard.withLock { $0["a", default: []].append(id) } }
                nodeB.onProviderKeysChanged { id in heard.withLock { $0["b", default: []].append(id) } }
                #expect(await S.eventually { nodeA.isListening && nodeB.isListening })
                let pair = ProviderKeyPair.generate()
                try await S.withAdmin(database) { admin in
                    try await admin.addProviderKey(ProviderKey(id: "KEY0000001", teamID: "TEAM123456", publicKeyPEM: pair.publicKeyPEM))
                    let removed = try await admin.removeProviderKey(id: "KEY0000001")
                    let again = try await admin.removeProviderKey(id: "KEY0000001")
                    #expect(removed && !again, "a key that is not there changes nothing")
                }
                #expect(await S.eventually { heard.withLock { ($0["a"] ?? []).count(where: { $0 != nil }) == 2 && ($0["b"] ?? []).count(where: { $0 != nil }) == 2 } })
                #expect(heard.withLock { $0["b"]?.compactMap { $0 } } == ["KEY0000001", "KEY0000001"])
            }
        }
    }

    @Test("a provider key removed on one node's admin stops working at once on another node that had verified a token signed with it (NT-3, NT-5)")
    func removedKeyStopsWorkingOnEveryNode() async throws {
        let database = try S.database()
        let node = try await PushServiceNode.start(.init(database: database, node: "n2"))
        do {
            let pair = ProviderKeyPair.generate()
            try await S.withAdmin(database) { admin in
                try await admin.addProviderKey(ProviderKey(id: "KEY0000002", teamID: "TEAM123456", publicKeyPEM: pair.publicKeyPEM))
            }
            let (_, token) = try await S.enroll("phone", in: database, store: node.store)
            let appServer = try await APNsProviderClient.connect(
                .init(host: "127.0.0.1", port: node.port, credentials: .init(keyID: "KEY0000002", teamID: "TEAM123456", privateKeyPEM: pair.privateKeyPEM)))
            let notification = APNsNotification(deviceToken: token, topic: "com.example.news", payload: Data(#"{"aps":{"alert":"hi"}}"#.utf8))
            #expect(try await appServer.send(notification).status == 200)
            #expect(node.gateway.cachedProviderTokenCount == 1, "the node verified the token once and keeps it")
            let removed = try await S.withAdmin(database) { admin in try await admin.removeProviderKey(id: "KEY0000002") }
            #expect(removed)
            #expect(await S.eventually { node.gateway.cachedProviderTokenCount == 0 })
            // The same client, the same provider token: refused now, not in an hour.
            let refused = try await appServer.send(notification)
            #expect(refused.status == 403, "\(refused.status) \(refused.reason ?? "")")
            await appServer.close()
        } catch {
            await node.shutdown()
            throw error
        }
        await node.shutdown()
    }

    @Test("a row another node's pull holds is skipped, and sent on the next pull once released (NT-5)")
    func claimedRowsAreNotSentTwiceAtOnce() async throws {
        let database = try S.database()
        try await S.withStore(database) { store in
            let (_, token) = try await S.enroll("phone", in: database, store: store)
            let first = S.push(to: token, device: "phone", body: "one")
            let second = S.push(to: token, device: "phone", body: "two")
            for push in [first, second] { #expect(try await store.accept(push) == .stored) }
            // Another node's pull, in the middle of its claim: it holds the first row.
            let other = try await S.connection(database)
            do {
                try await other.query("BEGIN", logger: S.logger)
                let held = try await other.query(
                    "SELECT apns_id FROM stored_push ORDER BY delivery LIMIT 1 FOR UPDATE", logger: S.logger
                ).collect().map { try $0.decode(String.self) }
                #expect(held == [first.apnsID])
                let batch = try await store.pull(device: "phone", acknowledging: [], wait: .zero)
                #expect(batch.map(\.apnsID) == [second.apnsID])
                try await other.query("ROLLBACK", logger: S.logger)
            } catch {
                try? await other.close()
                throw error
            }
            try await other.close()
            // Released and not acknowledged: both are sent.
            let again = try await store.pull(device: "phone", acknowledging: [], wait: .zero)
            #expect(again.map(\.apnsID) == [first.apnsID, second.apnsID])
        }
    }

    @Test("a node whose LISTEN connection was dropped listens again, and its pulls are woken again (NT-5)")
    func listenerReconnects() async throws {
        let database = try S.database()
        try await S.withStore(database) { store in
            let (_, token) = try await S.enroll("phone", in: database, store: store)
            let admin = try await S.connection(database)
            do {
                let listeners = """
                    SELECT pid FROM pg_stat_activity
                    WHERE datname = current_database() AND query LIKE 'LISTEN "offstage_push_node_%' AND pid <> pg_backend_pid()
                    """
                let before = try await admin.query(PostgresQuery(unsafeSQL: listeners), logger: S.logger).collect().map { try $0.decode(Int32.self) }
                #expect(before.count == 1)
                try await admin.query(
                    PostgresQuery(unsafeSQL: "SELECT pg_terminate_backend(pid) FROM (\(listeners)) AS l"), logger: S.logger)
                // A new LISTEN connection, from another backend.
                #expect(
                    try await S.eventually {
                        let now = try await admin.query(PostgresQuery(unsafeSQL: listeners), logger: S.logger).collect()
                            .map { try $0.decode(Int32.self) }
                        return now.count == 1 && now != before && store.isListening
                    })
            } catch {
                try? await admin.close()
                throw error
            }
            try await admin.close()
            let started = ContinuousClock.now
            let pull = Task { try await store.pull(device: "phone", acknowledging: [], wait: .seconds(10)) }
            #expect(await S.eventually { store.waitingPullCount == 1 })
            let push = S.push(to: token, device: "phone")
            #expect(try await store.accept(push) == .stored)
            #expect(try await pull.value.map(\.apnsID) == [push.apnsID])
            #expect(ContinuousClock.now - started < .seconds(5))
        }
    }

    @Test("shutting a node down wakes its waiting pulls and deletes its device links (NT-5)")
    func shutdownWakesWaitersAndForgetsLinks() async throws {
        let database = try S.database()
        try await S.withStore(database, node: "a") { nodeA in
            _ = try await S.enroll("phone", in: database, store: nodeA)
            _ = try await S.enroll("tablet", in: database, store: nodeA)
            let nodeB = try await PostgresPushStore.open(database: database, configuration: .init(node: "b"), logger: S.logger)
            #expect(try await nodeA.pull(device: "tablet", acknowledging: [], wait: .zero).isEmpty)
            let started = ContinuousClock.now
            let pull = Task { try await nodeB.pull(device: "phone", acknowledging: [], wait: .seconds(10)) }
            #expect(await S.eventually { nodeB.waitingPullCount == 1 })
            await nodeB.close()
            #expect(try await pull.value.isEmpty)
            #expect(ContinuousClock.now - started < .seconds(5))
            let devices = try await S.withAdmin(database) { try await $0.devices() }
            #expect(devices.map(\.name) == ["phone", "tablet"])
            #expect(devices.map(\.connectedNode) == [nil, "a"])
            #expect(devices[0].lastSeenAt == nil)
        }
    }
}
