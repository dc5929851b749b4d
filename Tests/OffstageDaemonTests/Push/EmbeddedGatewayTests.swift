import Foundation
import Logging
import OffstageCore
@testable import OffstageDaemon
import OffstagePush
import Synchronization
import Testing

/// The gateway inside the daemon over its real store (SPEC NT-3, NT-5): a push is in the inbox before the 200 goes
/// out, a retry is acknowledged without being handed in twice, and tokens that are unknown, revoked or another app's
/// are refused with nothing stored.
@Suite("Embedded push gateway over the daemon's store")
struct EmbeddedGatewayTests {
    static let app: AppID = "com.example.messenger"

    /// The pushes handed to the engine, in order.
    final class HandedIn: Sendable {
        let pushes = Mutex<[RemotePush]>([])
        func append(_ push: RemotePush) { pushes.withLock { $0.append(push) } }
        func withLock<Result>(_ body: ([RemotePush]) -> Result) -> Result { pushes.withLock { body($0) } }
    }

    struct Fixture {
        let store: OffstageStore
        let gateway: EmbeddedPushGateway
        let client: APNsProviderClient
        let handedIn: HandedIn
        let token: String
    }

    /// A store with a key and the app's token, a gateway on a free loopback port, and a client signing with the key.
    func withGateway(_ body: (Fixture) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offstage-gw-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try OffstageStore(path: folder + "/offstage.sqlite")
        let pair = ProviderKeyPair.generate()
        try store.addPushKey(.init(id: "KEY1234567", teamID: "TEAM123456", publicKeyPEM: pair.publicKeyPEM, topics: nil, addedAt: .init(secondsSinceEpoch: 0)))
        let token = try store.issueToken(to: Self.app, candidate: String(repeating: "ab", count: 32), at: .init(secondsSinceEpoch: 0))
        let handedIn = HandedIn()
        let gateway = try EmbeddedPushGateway(
            settings: PushGatewaySettings(), store: store, logger: Logger(label: "test"),
            deliver: { push in
                // Persist, then acknowledge: the push is in the inbox when it is handed in.
                let stored = (try? store.loadPushInbox().accepted.contains { $0.id == push.id }) ?? false
                precondition(stored, "handed in before it was stored")
                handedIn.append(push)
            })
        try await gateway.start()
        let port = try #require(gateway.server.port)
        let client = try await APNsProviderClient.connect(
            .init(host: "127.0.0.1", port: port, credentials: .init(keyID: "KEY1234567", teamID: "TEAM123456", privateKeyPEM: pair.privateKeyPEM)))
        do {
            try await body(Fixture(store: store, gateway: gateway, client: client, handedIn: handedIn, token: token))
        } catch {
            await client.close()
            await gateway.shutdown()
            throw error
        }
        await client.close()
        await gateway.shutdown()
    }

    static func background(_ token: String, topic: String = app.rawValue, apnsID: String? = nil) -> APNsNotification {
        APNsNotification(
            deviceToken: token, topic: topic, payload: Data(#"{"aps":{"content-available":1},"m":"hi"}"#.utf8),
            pushType: .background, priority: .powerConsidered, apnsID: apnsID)
    }

    @Test("NT-3, NT-5: a push answered 200 is in the device's inbox, whole, and handed in once, also when the provider retries it")
    func acceptedIsStoredAndHandedInOnce() async throws {
        try await withGateway { fixture in
            let id = "6e2f0d47-6b0e-4d7e-9b7f-1f3c1d2a3b4c"
            let first = try await fixture.client.send(Self.background(fixture.token, apnsID: id))
            #expect(first.status == 200 && first.apnsID == id)
            let retry = try await fixture.client.send(Self.background(fixture.token, apnsID: id))
            #expect(retry.status == 200, "a retry of a stored push is acknowledged again")
            let pushes = fixture.handedIn.withLock { $0 }
            #expect(pushes.map(\.id) == [id])
            let push = try #require(pushes.first)
            #expect(push.app == Self.app && push.type == .background && push.priority == 5 && push.aps.contentAvailable)
            #expect(push.payload == #"{"aps":{"content-available":1},"m":"hi"}"#)
            #expect(try fixture.store.loadPushInbox().accepted == [push])
        }
    }

    @Test("NT-3: an unknown token is refused BadDeviceToken, a revoked one Unregistered with its time, another app's DeviceTokenNotForTopic; nothing is stored")
    func badTokensStoreNothing() async throws {
        try await withGateway { fixture in
            let unknown = try await fixture.client.send(Self.background(String(repeating: "0", count: 64)))
            #expect(unknown.status == 400 && unknown.reason == "BadDeviceToken")
            let other = try await fixture.client.send(Self.background(fixture.token, topic: "com.example.other"))
            #expect(other.status == 400 && other.reason == "DeviceTokenNotForTopic")
            try fixture.store.revokeTokens(of: Self.app, at: Instant(secondsSinceEpoch: 1_800_000_000.5))
            let revoked = try await fixture.client.send(Self.background(fixture.token))
            #expect(revoked.status == 410 && revoked.reason == "Unregistered")
            #expect(revoked.timestamp.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) } == 1_800_000_000_500)
            #expect(fixture.handedIn.withLock { $0 }.isEmpty)
            #expect(try fixture.store.loadPushInbox().accepted.isEmpty)
            #expect(try fixture.store.pushCounts() == (stored: 0, held: 0))
        }
    }

    @Test("NT-3: a key removed from the store and announced stops authenticating at once")
    func removedKeyRefused() async throws {
        try await withGateway { fixture in
            #expect(try await fixture.client.send(Self.background(fixture.token)).status == 200)
            #expect(try fixture.store.removePushKey(id: "KEY1234567"))
            fixture.gateway.gateway.providerKeysChanged(keyID: "KEY1234567")
            let refused = try await fixture.client.send(Self.background(fixture.token))
            #expect(refused.status == 403 && refused.reason == "InvalidProviderToken")
            #expect(fixture.handedIn.withLock { $0 }.count == 1)
        }
    }

    @Test("NT-3: the embedded gateway's address names h2c and the port it took")
    func address() async throws {
        try await withGateway { fixture in
            #expect(fixture.gateway.address == "http://127.0.0.1:\(fixture.gateway.server.port ?? -1)")
        }
    }

    /// A Web Push request for `subscription`, encrypted to `keys` and signed by `signer` for the gateway's origin.
    static func webPush(
        _ subscription: String, _ body: Data, keys: WebPushUserAgentKeys, signer: VAPIDSigner, origin: String
    ) async throws -> PushHTTPRequest {
        let encrypted = try WebPushEncryptor().encrypt(body, p256dh: keys.publicKey, auth: keys.authSecret)
        let authorization = try await signer.authorization(audience: origin, expiration: Date().addingTimeInterval(3_600))
        return PushHTTPRequest(
            method: "POST", path: "/push/" + subscription,
            headers: [
                PushHeaderField("ttl", "60"), PushHeaderField("content-encoding", "aes128gcm"),
                PushHeaderField("authorization", authorization),
            ],
            body: encrypted, authority: String(origin.dropFirst("http://".count)), scheme: "http")
    }

    @Test("NT-3, NT-5: a Web Push message is decrypted with the subscription's stored keys and in the inbox, as the app reads it, before the 201; an ended subscription answers 410 and stores nothing")
    func webPushStoredDecrypted() async throws {
        try await withGateway { fixture in
            let keys = WebPushUserAgentKeys.generate()
            let signer = VAPIDSigner(privateKey: .init(), subject: "mailto:ops@example.com")
            let subscription = "c3Vic2NyaXB0aW9uLWlkLTAx"
            _ = try fixture.store.subscribeWebPush(
                .init(
                    id: subscription, app: Self.app, privateKey: keys.privateKeyRaw, authSecret: keys.authSecret,
                    applicationServerKey: signer.publicKey, createdAt: .init(secondsSinceEpoch: 0), endedAt: nil))
            let origin = "http://127.0.0.1:\(fixture.gateway.server.port ?? 0)"
            let request = try await Self.webPush(subscription, Data(#"{"message":"m-9"}"#.utf8), keys: keys, signer: signer, origin: origin)
            let response = await fixture.gateway.webPush.handle(request)
            #expect(response.status == 201, "\(String(decoding: response.body, as: UTF8.self))")
            let pushes = fixture.handedIn.withLock { $0 }
            let push = try #require(pushes.first)
            #expect(pushes.count == 1 && push.app == Self.app && push.type == .background && push.aps.contentAvailable)
            let message = try WebPushMessage(payload: Data(push.payload.utf8))
            #expect(message.text == #"{"message":"m-9"}"# && !message.encrypted)
            #expect(try fixture.store.loadPushInbox().accepted == [push])

            try fixture.store.endWebPushSubscriptions(of: Self.app, at: Instant(secondsSinceEpoch: 1_800_000_000))
            let gone = await fixture.gateway.webPush.handle(
                try await Self.webPush(subscription, Data("x".utf8), keys: keys, signer: signer, origin: origin))
            #expect(gone.status == 410)
            #expect(fixture.handedIn.withLock { $0 }.count == 1)
            #expect(try fixture.store.pushCounts() == (stored: 1, held: 0))
        }
    }
}
