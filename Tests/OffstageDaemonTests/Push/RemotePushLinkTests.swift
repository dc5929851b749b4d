import Foundation
import Logging
import OffstageCore
@testable import OffstageDaemon
import OffstagePush
import Synchronization
import Testing

/// The device's link to a multi-device gateway (SPEC NT-5, decision 0035), against the real HTTP/2 server and device
/// link route over a gateway store kept in memory: what the device registers, that a push is in the inbox before it
/// is acknowledged, that a push sent again is handed in once, that the link comes back, and Web Push decryption on
/// the device. The PostgreSQL store behind the same route has its own tests, and the integration tests run both.
@Suite("Remote push link")
struct RemotePushLinkTests {
    static let app: AppID = "com.example.messenger"
    static let device = "phone-1"
    static let secret = "correct-horse-battery"

    /// The gateway's side of the link, in memory: what it stored for the device, what it was told.
    final class GatewayStore: DeviceLinkBackend {
        struct State {
            var stored: [LinkedPush] = []
            var registrations: [DeviceRegistrations] = []
            var acks: [String] = []
            var pulls = 0
        }
        let state = Mutex(State())

        func authenticate(device: String, secret: String) async throws -> Bool {
            device == RemotePushLinkTests.device && secret == RemotePushLinkTests.secret
        }

        func register(_ registrations: DeviceRegistrations, device: String) async throws {
            state.withLock { $0.registrations.append(registrations) }
        }

        /// Deletes what was acknowledged and sends everything else, waiting (polling) while there is nothing.
        func pull(device: String, acknowledging acks: [String], wait: Duration) async throws -> [LinkedPush] {
            state.withLock { state in
                state.pulls += 1
                state.acks += acks
                state.stored.removeAll { acks.contains($0.delivery) }
            }
            let deadline = ContinuousClock.now + wait
            while true {
                let stored = state.withLock { $0.stored }
                if !stored.isEmpty || ContinuousClock.now >= deadline { return stored }
                try await Task.sleep(for: .milliseconds(10))
            }
        }

        func store(_ push: LinkedPush) { state.withLock { $0.stored.append(push) } }
    }

    /// A second node over the same gateway store that refuses every device until opened.
    final class ClosedNode: DeviceLinkBackend {
        let gateway: GatewayStore
        let open = Mutex(false)
        init(_ gateway: GatewayStore) { self.gateway = gateway }

        func authenticate(device: String, secret: String) async throws -> Bool {
            guard open.withLock({ $0 }) else { return false }
            return try await gateway.authenticate(device: device, secret: secret)
        }
        func register(_ registrations: DeviceRegistrations, device: String) async throws {
            try await gateway.register(registrations, device: device)
        }
        func pull(device: String, acknowledging acks: [String], wait: Duration) async throws -> [LinkedPush] {
            try await gateway.pull(device: device, acknowledging: acks, wait: wait)
        }
    }

    /// The pushes handed to the engine, each checked to be in the inbox already.
    final class HandedIn: Sendable {
        let pushes = Mutex<[RemotePush]>([])
    }

    struct Fixture {
        let store: OffstageStore
        let gateway: GatewayStore
        /// The second node the link tries, closed until a test opens it.
        let second: ClosedNode
        let link: RemotePushLink
        let handedIn: HandedIn
        let folder: String
    }

    /// A device store, a gateway of two nodes on free loopback ports (the second closed) and a link to them, first
    /// node first; the link is started by `body` when wanted.
    func withLink(secret: String = secret, _ body: (Fixture, PushGatewayServer) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offstage-link-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try OffstageStore(path: folder + "/offstage.sqlite")
        let gateway = GatewayStore()
        let server = PushGatewayServer(configuration: .init(host: "127.0.0.1", port: 0), router: PushRouter([DeviceLinkRoute(backend: gateway)]))
        try await server.start()
        let port = try #require(server.port)
        let second = ClosedNode(gateway)
        let secondServer = PushGatewayServer(
            configuration: .init(host: "127.0.0.1", port: 0), router: PushRouter([DeviceLinkRoute(backend: second)]))
        try await secondServer.start()
        let secondPort = try #require(secondServer.port)
        try Data(secret.utf8).write(to: URL(fileURLWithPath: folder + "/secret"))
        let handedIn = HandedIn()
        let link = try RemotePushLink(
            settings: RemotePushSettings(
                url: "http://127.0.0.1:\(port)", device: Self.device, secretFile: folder + "/secret",
                nodes: ["http://127.0.0.1:\(port)", "http://127.0.0.1:\(secondPort)"]),
            store: store, logger: Logger(label: "test"),
            deliver: { push in
                let stored = (try? store.loadPushInbox().accepted.contains { $0.id == push.id }) ?? false
                precondition(stored, "handed in before it was stored")
                handedIn.pushes.withLock { $0.append(push) }
            })
        let fixture = Fixture(store: store, gateway: gateway, second: second, link: link, handedIn: handedIn, folder: folder)
        do {
            try await body(fixture, server)
        } catch {
            await link.stop()
            await server.shutdown()
            await secondServer.shutdown()
            throw error
        }
        await link.stop()
        await server.shutdown()
        await secondServer.shutdown()
    }

    static func linked(_ delivery: String, id: String, collapseID: String? = nil) -> LinkedPush {
        LinkedPush(
            delivery: delivery,
            AcceptedPush(
                apnsID: id, token: String(repeating: "ab", count: 32), app: app.rawValue, device: device, pushType: .background,
                priority: .powerConsidered, expiration: nil, collapseID: collapseID,
                payload: Data(#"{"aps":{"content-available":1},"m":"hi"}"#.utf8), aps: APS(contentAvailable: true),
                acceptedAt: Date(timeIntervalSince1970: 1_790_000_000)))
    }

    /// Polls until `condition` holds or 10 s pass (waiting on the link's own task and a socket, not timing it).
    static func eventually(_ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    @Test("NT-5: on connecting, the device registers every token and subscription it issued, live and ended")
    func registersOnConnect() async throws {
        try await withLink { fixture, _ in
            let live = try fixture.store.issueToken(to: Self.app, candidate: String(repeating: "0a", count: 32), at: .init(secondsSinceEpoch: 10))
            let gone = try fixture.store.issueToken(to: "com.example.gone", candidate: String(repeating: "0b", count: 32), at: .init(secondsSinceEpoch: 11))
            try fixture.store.revokeTokens(of: "com.example.gone", at: .init(secondsSinceEpoch: 12))
            fixture.link.start()
            #expect(await Self.eventually { fixture.gateway.state.withLock { !$0.registrations.isEmpty } })
            let registered = try #require(fixture.gateway.state.withLock { $0.registrations.first })
            #expect(
                registered.tokens == [
                    .init(token: live, app: Self.app.rawValue), .init(token: gone, app: "com.example.gone", revokedAtMillis: 12_000),
                ])
            #expect(await Self.eventually { fixture.link.isConnected })
            // Registering again now (an app registering) goes over the same connection.
            try await fixture.link.registerNow()
            #expect(fixture.gateway.state.withLock { $0.registrations.count } == 2)
        }
    }

    @Test("NT-5: a push sent over the link is in the inbox before it is acknowledged, and handed in once when sent again")
    func storedThenAcknowledgedOnce() async throws {
        try await withLink { fixture, _ in
            let id = "5b0a9a1e-4a52-4b7b-8a4e-2d6d0c1f9e01"
            fixture.gateway.store(Self.linked("1", id: id))
            fixture.link.start()
            #expect(await Self.eventually { fixture.gateway.state.withLock { $0.acks.contains("1") } })
            #expect(fixture.handedIn.pushes.withLock { $0.map(\.id) } == [id])
            let inbox = try fixture.store.loadPushInbox()
            #expect(inbox.accepted.map(\.id) == [id])
            // Another node sends the same push again (its first copy's acknowledgement was lost with a node).
            fixture.gateway.store(Self.linked("7", id: id))
            #expect(await Self.eventually { fixture.gateway.state.withLock { $0.acks.contains("7") } })
            #expect(fixture.handedIn.pushes.withLock { $0.count } == 1, "handed in once")
        }
    }

    @Test("NT-5: a push that can never be the app's (a bad payload) is acknowledged and dropped, and the pushes after it arrive")
    func unusablePushIsDropped() async throws {
        try await withLink { fixture, _ in
            var bad = Self.linked("1", id: "0d6f6b5e-0e6c-4b8e-9a57-1c4f3f1b2a01")
            bad.payload = Data("not json".utf8)
            fixture.gateway.store(bad)
            fixture.gateway.store(Self.linked("2", id: "0d6f6b5e-0e6c-4b8e-9a57-1c4f3f1b2a02"))
            fixture.link.start()
            #expect(await Self.eventually { fixture.gateway.state.withLock { $0.acks.contains("2") } })
            #expect(fixture.gateway.state.withLock { $0.acks.contains("1") })
            #expect(fixture.handedIn.pushes.withLock { $0.map(\.id) } == ["0d6f6b5e-0e6c-4b8e-9a57-1c4f3f1b2a02"])
        }
    }

    @Test("NT-5: when its node goes away the link tries the next, waits longer after each round, and takes what was stored meanwhile once a node lets it in")
    func reconnects() async throws {
        try await withLink { fixture, server in
            fixture.link.start()
            #expect(await Self.eventually { fixture.link.isConnected })
            await server.shutdown()
            #expect(await Self.eventually { !fixture.link.isConnected })
            do {
                try await fixture.link.registerNow()
                Issue.record("registering without a connection succeeded")
            } catch {
                #expect("\(error)".contains("not reachable"), "\(error)")
            }
            // The second node refuses the device for now: the link goes round both, backing off.
            #expect(await Self.eventually { fixture.link.lastError?.contains("401") ?? false })
            fixture.gateway.store(Self.linked("3", id: "7c1e2a4b-3d5f-4a6b-8c7d-9e0f1a2b3c4d"))
            fixture.second.open.withLock { $0 = true }
            #expect(await Self.eventually { fixture.handedIn.pushes.withLock { $0.count } == 1 })
            #expect(await Self.eventually { fixture.gateway.state.withLock { $0.acks.contains("3") } })
            #expect(fixture.link.isConnected)
        }
    }

    @Test("NT-5: with a wrong secret the link is refused, says so, and hands nothing in")
    func wrongSecret() async throws {
        try await withLink(secret: "wrong") { fixture, _ in
            fixture.gateway.store(Self.linked("1", id: "1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b"))
            fixture.link.start()
            #expect(await Self.eventually { fixture.link.lastError?.contains("401") ?? false })
            #expect(fixture.link.lastError?.contains("Unauthorized") ?? false, "\(fixture.link.lastError ?? "")")
            #expect(fixture.handedIn.pushes.withLock { $0.isEmpty })
            #expect(fixture.gateway.state.withLock { $0.pulls } == 0)
        }
    }

    @Test("NT-3, NT-5: a Web Push message the gateway stored encrypted is decrypted on the device, where the keys are")
    func webPushDecryptedOnDevice() async throws {
        try await withLink { fixture, _ in
            let keys = WebPushUserAgentKeys.generate()
            let subscription = try fixture.store.subscribeWebPush(
                .init(
                    id: Base64URL.encode(Data(repeating: 7, count: 32)), app: Self.app, privateKey: keys.privateKeyRaw,
                    authSecret: keys.authSecret, applicationServerKey: nil, createdAt: .init(secondsSinceEpoch: 1), endedAt: nil))
            let body = try WebPushEncryptor().encrypt(Data("new mail".utf8), p256dh: keys.publicKey, auth: keys.authSecret)
            let accepted = AcceptedPush(
                apnsID: "2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6d", token: subscription.id, app: Self.app.rawValue, device: Self.device,
                pushType: .background, priority: .powerConsidered, expiration: nil, collapseID: "t1",
                payload: WebPushMessage.payload(data: body, encrypted: true, topic: "t1", urgency: .normal),
                aps: APS(contentAvailable: true), acceptedAt: Date(timeIntervalSince1970: 1_790_000_000))
            fixture.gateway.store(LinkedPush(delivery: "1", accepted))
            var tampered = accepted
            tampered.apnsID = "2a3b4c5d-6e7f-4a8b-9c0d-1e2f3a4b5c6e"
            var flipped = body
            flipped[flipped.count - 1] ^= 1
            tampered.payload = WebPushMessage.payload(data: flipped, encrypted: true, topic: nil, urgency: .normal)
            fixture.gateway.store(LinkedPush(delivery: "2", tampered))
            fixture.link.start()
            #expect(await Self.eventually { fixture.gateway.state.withLock { $0.acks.contains("2") } })
            let pushes = fixture.handedIn.pushes.withLock { $0 }
            #expect(pushes.map(\.id) == [accepted.apnsID], "the message that does not decrypt is dropped")
            let handed = try #require(pushes.first)
            let message = try WebPushMessage(payload: Data(handed.payload.utf8))
            #expect(message.text == "new mail" && message.topic == "t1" && !message.encrypted)
        }
    }
}
