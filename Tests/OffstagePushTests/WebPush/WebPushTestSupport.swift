import Crypto
import Foundation
import Testing

@testable import OffstagePush

/// Subscriptions, keys and requests shared by the Web Push tests.
enum WebPushFixture {
    static let now = Fixture.now
    static let authority = "push.test:8443"
    static let origin = "https://push.test:8443"
    /// A device-side subscription: restricted to ``vapidKey``, holding the subscriber's keys (it decrypts).
    static let deviceID = "dev1ceSubscr1pt1on-0001"
    /// A subscription without an application server key and without the subscriber's keys (a forwarding gateway).
    static let openID = "open_Subscription_0002"
    static let goneID = "gone_Subscription_0003"
    static let userAgent = WebPushUserAgentKeys.generate()
    static let vapidKey = P256.Signing.PrivateKey()
    static let otherVapidKey = P256.Signing.PrivateKey()

    static var deviceSubscription: WebPushSubscription {
        WebPushSubscription(
            id: deviceID, app: Fixture.app, device: Fixture.device, applicationServerKey: vapidKey.publicKey.x963Representation,
            userAgentKeys: userAgent)
    }

    static var openSubscription: WebPushSubscription {
        WebPushSubscription(id: openID, app: Fixture.app, device: Fixture.device)
    }

    /// A backend with the three subscriptions, and a gateway over it at ``now``.
    static func gateway(
        configuration: WebPushGatewayConfiguration = .init(), now: @escaping @Sendable () -> Date = { WebPushFixture.now }
    ) async -> (WebPushGateway, RecordingBackend) {
        let backend = RecordingBackend()
        await backend.add(deviceSubscription)
        await backend.add(openSubscription)
        await backend.end(goneID, at: now() - 60)
        return (WebPushGateway(backend: backend, configuration: configuration, now: now), backend)
    }

    /// `vapid t=…, k=…` for `audience` signed by `key`, expiring an hour after ``now``.
    static func vapid(
        key: P256.Signing.PrivateKey = vapidKey, audience: String = origin, expiration: Date = now + 3600,
        subject: String? = "mailto:ops@example.com"
    ) async throws -> String {
        try await VAPIDSigner(privateKey: key, subject: subject).authorization(audience: audience, expiration: expiration)
    }

    /// `plaintext` encrypted to the device subscription's keys.
    static func encrypted(_ plaintext: String, to keys: WebPushUserAgentKeys = userAgent) throws -> Data {
        try WebPushEncryptor().encrypt(Data(plaintext.utf8), p256dh: keys.publicKey, auth: keys.authSecret)
    }

    /// A request to subscription `id` with a TTL of 60 and the given headers and body.
    static func request(
        id: String = deviceID, method: String = "POST", ttl: String? = "60", headers: [PushHeaderField] = [],
        body: Data = Data(), authority: String = authority, scheme: String = "https"
    ) -> PushHTTPRequest {
        var fields = headers
        if let ttl { fields.append(PushHeaderField("ttl", ttl)) }
        if !body.isEmpty, !fields.contains(where: { $0.name == "content-encoding" }) {
            fields.append(PushHeaderField("content-encoding", "aes128gcm"))
        }
        return PushHTTPRequest(method: method, path: "/push/\(id)", headers: fields, body: body, authority: authority, scheme: scheme)
    }

    /// A request to the device subscription with valid VAPID and `plaintext` encrypted to it.
    static func validRequest(_ plaintext: String = "hello", headers: [PushHeaderField] = []) async throws -> PushHTTPRequest {
        request(headers: [PushHeaderField("authorization", try await vapid())] + headers, body: try encrypted(plaintext))
    }
}

extension PushHTTPResponse {
    /// The value of the first header named `name`.
    func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }

    /// The `reason` of a JSON error body.
    var reason: String? {
        (try? JSONSerialization.jsonObject(with: body) as? [String: Any])?["reason"] as? String
    }
}
