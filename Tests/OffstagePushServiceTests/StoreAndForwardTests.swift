import Foundation
import OffstagePush
import OffstagePushService
import Testing

/// One node's store: schema, accepting pushes, pulling and acknowledging them, registrations and secrets, against a
/// real PostgreSQL (SPEC NT-3, NT-5).
@Suite(.postgres)
struct StoreAndForwardTests {
    typealias S = PostgresSuite

    @Test("migrations run once per database, also when two nodes start at once (NT-5)")
    func migrationsAreIdempotentAndSafeConcurrently() async throws {
        let database = try S.database()
        async let first = PushStoreMigrations.run(database, logger: S.logger)
        async let second = PushStoreMigrations.run(database, logger: S.logger)
        let applied = try await [first, second]
        #expect(applied.flatMap { $0 } == [PushStoreMigrations.latestVersion])
        #expect(try await PushStoreMigrations.run(database, logger: S.logger).isEmpty)
        // And a store opens on the migrated database.
        try await S.withStore(database) { store in #expect(store.isListening) }
    }

    @Test("a pushed message is pulled, acknowledged ones are deleted and unacknowledged ones are sent again (NT-5)")
    func acceptPullAcknowledge() async throws {
        let database = try S.database()
        try await S.withStore(database) { store in
            let (_, token) = try await S.enroll("phone", in: database, store: store)
            let first = S.push(to: token, device: "phone", body: "one")
            let second = S.push(to: token, device: "phone", body: "two")
            #expect(try await store.accept(first) == .stored)
            #expect(try await store.accept(second) == .stored)
            let batch = try await store.pull(device: "phone", acknowledging: [], wait: .zero)
            #expect(batch.map(\.apnsID) == [first.apnsID, second.apnsID])
            #expect(batch.first?.payload == first.payload)
            #expect(batch.first?.token == token && batch.first?.pushType == "alert" && batch.first?.priority == 10)
            // The device stored only the first: the second is sent again.
            let again = try await store.pull(device: "phone", acknowledging: [batch[0].delivery], wait: .zero)
            #expect(again.map(\.apnsID) == [second.apnsID])
            #expect(again.first?.delivery == batch[1].delivery)
            // Acks that are not numbers, or not this device's, are ignored.
            let last = try await store.pull(device: "phone", acknowledging: ["x", "-1", again[0].delivery], wait: .zero)
            #expect(last.isEmpty)
            let status = try await S.withAdmin(database) { try await $0.devices() }
            #expect(status.first?.storedPushes == 0 && status.first?.connectedNode == "a")
        }
    }

    @Test("a retry with the same apns-id is acknowledged again and stored once (NT-3)")
    func retryIsStoredOnce() async throws {
        let database = try S.database()
        try await S.withStore(database) { store in
            let (_, token) = try await S.enroll("phone", in: database, store: store)
            let push = S.push(to: token, device: "phone", collapseID: "score")
            #expect(try await store.accept(push) == .stored)
            #expect(try await store.accept(push) == .stored)
            let batch = try await store.pull(device: "phone", acknowledging: [], wait: .zero)
            #expect(batch.map(\.apnsID) == [push.apnsID])
            let records = try await S.withAdmin(database) { try await $0.records() }
            #expect(records.isEmpty)
        }
    }

    @Test("only the newest push per collapse id is kept, with a record of the one it replaced (NT-3)")
    func collapseKeepsNewest() async throws {
        let database = try S.database()
        try await S.withStore(database) { store in
            let (_, token) = try await S.enroll("phone", in: database, store: store)
            let old = S.push(to: token, device: "phone", collapseID: "score", body: "1-0")
            let other = S.push(to: token, device: "phone", collapseID: "weather", body: "sun")
            let new = S.push(to: token, device: "phone", collapseID: "score", body: "2-0")
            for push in [old, other, new] { #expect(try await store.accept(push) == .stored) }
            let batch = try await store.pull(device: "phone", acknowledging: [], wait: .zero)
            #expect(batch.map(\.apnsID) == [other.apnsID, new.apnsID])
            let records = try await S.withAdmin(database) { try await $0.records() }
            #expect(records.map(\.what) == ["collapsed"])
            #expect(records.first?.apnsID == old.apnsID && records.first?.detail.contains(new.apnsID) == true)
        }
    }

    @Test("an expired push is deleted with a record instead of sent (NT-3)")
    func expiredIsDroppedOnPull() async throws {
        let database = try S.database()
        try await S.withStore(database) { store in
            let (_, token) = try await S.enroll("phone", in: database, store: store)
            let stale = S.push(to: token, device: "phone", expiration: Date().addingTimeInterval(-1))
            let fresh = S.push(to: token, device: "phone", expiration: Date().addingTimeInterval(3600))
            #expect(try await store.accept(stale) == .stored)
            #expect(try await store.accept(fresh) == .stored)
            let batch = try await store.pull(device: "phone", acknowledging: [], wait: .zero)
            #expect(batch.map(\.apnsID) == [fresh.apnsID])
            #expect(batch.first?.expiresAtMillis != nil)
            let records = try await S.withAdmin(database) { try await $0.records() }
            #expect(records.map(\.what) == ["expired"] && records.first?.apnsID == stale.apnsID)
        }
    }

    @Test("expiration 0 for a device away is not stored, with a record; for a connected device it is (NT-3, NT-5)")
    func attemptOnceNeedsAConnectedDevice() async throws {
        let database = try S.database()
        try await S.withStore(database) { store in
            let (_, token) = try await S.enroll("phone", in: database, store: store)
            let away = S.push(to: token, device: "phone", attemptOnce: true)
            #expect(try await store.accept(away) == .stored)
            let records = try await S.withAdmin(database) { try await $0.records() }
            #expect(records.map(\.what) == ["dropped"] && records.first?.apnsID == away.apnsID)
            // The device pulls (nothing is there), so it is connected to this node now.
            #expect(try await store.pull(device: "phone", acknowledging: [], wait: .zero).isEmpty)
            let connected = S.push(to: token, device: "phone", attemptOnce: true)
            #expect(try await store.accept(connected) == .stored)
            let batch = try await store.pull(device: "phone", acknowledging: [], wait: .zero)
            #expect(batch.map(\.apnsID) == [connected.apnsID])
        }
    }

    @Test("a push to a token revoked since its lookup is refused Unregistered with the revocation time, and a revocation is for good (NT-3)")
    func revokedTokenIsUnregistered() async throws {
        let database = try S.database()
        try await S.withStore(database) { store in
            let (_, token) = try await S.enroll("phone", in: database, store: store)
            #expect(try await store.lookUp(token: token) == .active(app: "com.example.news", device: "phone"))
            let revokedAt = Date(timeIntervalSince1970: 1_800_000_000)
            try await store.register(
                DeviceRegistrations(tokens: [.init(token: token, app: "com.example.news", revokedAtMillis: LinkedPush.millis(revokedAt))]),
                device: "phone")
            #expect(try await store.lookUp(token: token) == .revoked(at: revokedAt))
            let answer = try await store.accept(S.push(to: token, device: "phone"))
            guard case .refused(let refusal) = answer else {
                Issue.record("a push to a revoked token was \(answer)")
                return
            }
            #expect(refusal.reason == .unregistered && refusal.timestamp == revokedAt)
            #expect(try await store.pull(device: "phone", acknowledging: [], wait: .zero).isEmpty)
            // An older registration listing the token as live, arriving late, leaves it revoked; so for a subscription.
            try await store.register(DeviceRegistrations(tokens: [.init(token: token, app: "com.example.news")]), device: "phone")
            #expect(try await store.lookUp(token: token) == .revoked(at: revokedAt))
            let subscription = "ZW5kcy1mb3ItZ29vZA"
            try await store.register(
                DeviceRegistrations(subscriptions: [
                    .init(id: subscription, app: "com.example.news", endedAtMillis: LinkedPush.millis(revokedAt))
                ]), device: "phone")
            try await store.register(
                DeviceRegistrations(subscriptions: [.init(id: subscription, app: "com.example.news")]), device: "phone")
            guard case .gone(let endedAt) = try await store.lookUp(subscription: subscription) else {
                Issue.record("an ended subscription came back")
                return
            }
            #expect(endedAt == revokedAt)
            #expect(try await store.lookUp(token: S.newToken()) == .unknown)
        }
    }

    @Test("registering a token or subscription of another device is refused and changes nothing (NT-5)")
    func registrationOfAnotherDevicesTokenIsRefused() async throws {
        let database = try S.database()
        try await S.withStore(database) { store in
            let (_, token) = try await S.enroll("phone", in: database, store: store)
            try await S.withAdmin(database) { _ = try await $0.enroll(device: "tablet") }
            let fresh = S.newToken()
            let refused = DeviceRegistrations(
                tokens: [.init(token: fresh, app: "com.example.mail"), .init(token: token, app: "com.example.evil")])
            await #expect(throws: DeviceLinkError.self) { try await store.register(refused, device: "tablet") }
            // Nothing of the refused registration was kept: not even the token listed before the conflict.
            #expect(try await store.lookUp(token: fresh) == .unknown)
            #expect(try await store.lookUp(token: token) == .active(app: "com.example.news", device: "phone"))
            let subscription = DeviceRegistrations(subscriptions: [.init(id: "c3Vic2NyaXB0aW9uLW9uZQ", app: "com.example.news")])
            try await store.register(subscription, device: "phone")
            await #expect(throws: DeviceLinkError.self) { try await store.register(subscription, device: "tablet") }
            guard case .active(let found) = try await store.lookUp(subscription: "c3Vic2NyaXB0aW9uLW9uZQ") else {
                Issue.record("the subscription is no longer active")
                return
            }
            #expect(found.device == "phone")
        }
    }

    @Test("a device authenticates with its enrolled secret only (NT-5)")
    func authenticate() async throws {
        let database = try S.database()
        try await S.withStore(database) { store in
            let (secret, _) = try await S.enroll("phone", in: database, store: store)
            #expect(secret.count == 43)  // 32 bytes, base64url without padding
            #expect(try await store.authenticate(device: "phone", secret: secret))
            #expect(try await !store.authenticate(device: "phone", secret: secret + "x"))
            #expect(try await !store.authenticate(device: "phone", secret: ""))
            #expect(try await !store.authenticate(device: "tablet", secret: secret))
            // Enrolling again replaces the secret.
            let renewed = try await S.withAdmin(database) { try await $0.enroll(device: "phone") }
            #expect(try await !store.authenticate(device: "phone", secret: secret))
            #expect(try await store.authenticate(device: "phone", secret: renewed))
        }
    }

    @Test("Web Push subscriptions are looked up as active, gone or unknown, without the subscriber's keys (NT-5)")
    func webPushSubscriptionLookups() async throws {
        let database = try S.database()
        try await S.withStore(database) { store in
            try await S.withAdmin(database) { _ = try await $0.enroll(device: "phone") }
            let key = Data([4] + (1...64).map { UInt8($0) })
            let endedAt = Date(timeIntervalSince1970: 1_800_000_000)
            try await store.register(
                DeviceRegistrations(subscriptions: [
                    .init(id: "bGl2ZS1zdWJzY3JpcHRpb24", app: "com.example.chat", applicationServerKey: Base64URL.encode(key)),
                    .init(id: "ZW5kZWQtc3Vic2NyaXB0aW9u", app: "com.example.chat", endedAtMillis: LinkedPush.millis(endedAt)),
                ]), device: "phone")
            guard case .active(let live) = try await store.lookUp(subscription: "bGl2ZS1zdWJzY3JpcHRpb24") else {
                Issue.record("the live subscription is not active")
                return
            }
            #expect(live == WebPushSubscription(id: "bGl2ZS1zdWJzY3JpcHRpb24", app: "com.example.chat", device: "phone", applicationServerKey: key))
            #expect(live.userAgentKeys == nil)
            guard case .gone(let at) = try await store.lookUp(subscription: "ZW5kZWQtc3Vic2NyaXB0aW9u") else {
                Issue.record("the ended subscription is not gone")
                return
            }
            #expect(at == endedAt)
            guard case .unknown = try await store.lookUp(subscription: "bm90LWEtc3Vic2NyaXB0aW9u") else {
                Issue.record("an id never issued is not unknown")
                return
            }
        }
    }
}
