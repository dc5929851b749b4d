import Foundation
import Synchronization
import Testing

@testable import OffstagePush

/// Both storage ports as one test double, as a host's store serves both front doors: an actor recording every push
/// and message it accepted.
actor RecordingBackend: PushGatewayBackend, WebPushBackend {
    enum Failure: Error { case storeUnavailable }

    private(set) var keys: [String: ProviderKey] = [:]
    private(set) var tokens: [String: TokenLookup] = [:]
    private(set) var accepted: [AcceptedPush] = []
    private(set) var keyLookups = 0
    private(set) var subscriptions: [String: WebPushSubscriptionLookup] = [:]
    private(set) var lookUps = 0
    var lookUpFails = false
    var acceptFails = false
    var acceptAnswer: Acceptance = .stored
    var keyLookupFails = false
    /// While set, `accept` waits for `releaseAccepts()` (to hold a push in flight).
    private var holding = false
    private var held: [CheckedContinuation<Void, Never>] = []
    private var arrivalWaiters: [CheckedContinuation<Void, Never>] = []

    func add(_ key: ProviderKey) { keys[key.id] = key }
    func removeKey(id: String) { keys[id] = nil }
    func register(token: String, app: String, device: String) { tokens[token] = .active(app: app, device: device) }
    func revoke(token: String, at date: Date) { tokens[token] = .revoked(at: date) }
    func setAcceptFails(_ fails: Bool) { acceptFails = fails }
    func setAcceptAnswer(_ answer: Acceptance) { acceptAnswer = answer }
    func setKeyLookupFails(_ fails: Bool) { keyLookupFails = fails }
    func add(_ subscription: WebPushSubscription) { subscriptions[subscription.id] = .active(subscription) }
    func end(_ id: String, at date: Date) { subscriptions[id] = .gone(at: date) }
    func setLookUpFails(_ fails: Bool) { lookUpFails = fails }
    func holdAccepts() { holding = true }

    /// Returns once an `accept` call is held.
    func waitForHeldAccept() async {
        if !held.isEmpty { return }
        await withCheckedContinuation { arrivalWaiters.append($0) }
    }

    func releaseAccepts() {
        holding = false
        held.forEach { $0.resume() }
        held.removeAll()
    }

    func providerKey(id: String) async throws -> ProviderKey? {
        keyLookups += 1
        if keyLookupFails { throw Failure.storeUnavailable }
        return keys[id]
    }

    func lookUp(token: String) async throws -> TokenLookup {
        tokens[token] ?? .unknown
    }

    func lookUp(subscription id: String) async throws -> WebPushSubscriptionLookup {
        lookUps += 1
        if lookUpFails { throw Failure.storeUnavailable }
        return subscriptions[id] ?? .unknown
    }

    func accept(_ push: AcceptedPush) async throws -> Acceptance {
        if holding {
            await withCheckedContinuation { continuation in
                held.append(continuation)
                arrivalWaiters.forEach { $0.resume() }
                arrivalWaiters.removeAll()
            }
        }
        if acceptFails { throw Failure.storeUnavailable }
        if case .stored = acceptAnswer { accepted.append(push) }
        return acceptAnswer
    }
}

/// Names and keys shared by the tests.
enum Fixture {
    static let team = "TEAM123456"
    static let keyID = "KEY1234567"
    static let app = "com.example.news"
    static let device = "device-1"
    static let token = String(repeating: "0a1b", count: 16)
    static let otherToken = String(repeating: "c3d4", count: 16)
    static let keyPair = ProviderKeyPair.generate()
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static var key: ProviderKey {
        ProviderKey(id: keyID, teamID: team, publicKeyPEM: keyPair.publicKeyPEM)
    }

    /// A token for `index`, 64 hex digits.
    static func token(_ index: Int) -> String {
        String(format: "%064x", index)
    }

    static func signer(keyID: String = keyID, team: String = team, privateKeyPEM: String = keyPair.privateKeyPEM)
        async throws -> ProviderTokenSigner
    {
        try await ProviderTokenSigner(keyID: keyID, teamID: team, privateKeyPEM: privateKeyPEM)
    }

    /// A valid provider token issued at `issuedAt` (default: `now`).
    static func providerToken(issuedAt: Date = now) async throws -> String {
        try await signer().sign(issuedAt: issuedAt)
    }

    static let alertPayload = Data(#"{"aps":{"alert":"Hello"}}"#.utf8)

    /// A JSON payload `{"aps":{"alert":"xxx…"}}` of exactly `size` bytes.
    static func payload(size: Int) -> Data {
        let head = #"{"aps":{"alert":""#
        let tail = #""}}"#
        return Data((head + String(repeating: "x", count: size - head.utf8.count - tail.utf8.count) + tail).utf8)
    }

    /// The headers of a valid alert push (authorization with a placeholder token unless given).
    static func headers(authorization: String = "bearer placeholder", topic: String = app) -> [PushHeaderField] {
        [PushHeaderField("authorization", authorization), PushHeaderField("apns-topic", topic)]
    }

    static func request(
        method: String = "POST", path: String = "/3/device/\(token)", headers: [PushHeaderField] = headers(),
        body: Data = alertPayload
    ) -> PushHTTPRequest {
        PushHTTPRequest(method: method, path: path, headers: headers, body: body)
    }

    /// A backend with the fixture key and token registered, and a gateway over it at the fixture's `now`.
    static func gateway(
        configuration: APNsGatewayConfiguration = .init(), now: @escaping @Sendable () -> Date = { Fixture.now }
    ) async -> (APNsGateway, RecordingBackend) {
        let backend = RecordingBackend()
        await backend.add(key)
        await backend.register(token: token, app: app, device: device)
        return (APNsGateway(backend: backend, configuration: configuration, now: now), backend)
    }
}

extension Result {
    /// The failure, if any (for `#expect(result.failure?.reason == …)`).
    var failure: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }

    /// The success value, if any.
    var success: Success? {
        if case .success(let value) = self { return value }
        return nil
    }
}

/// A clock tests move by hand.
final class ManualClock: Sendable {
    private let current: Mutex<Date>
    init(_ start: Date) { current = Mutex(start) }
    var now: Date { current.withLock { $0 } }
    func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }
}
