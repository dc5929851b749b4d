import Foundation
import OffstageProtocol

/// A Web Push subscription (RFC 8030, 8291, 8292): what `Application.registerForWebPush(applicationServerKey:)`
/// returns, as `PushManager.subscribe()` returns a `PushSubscription` in a browser (SPEC NT-3).
///
/// Hand ``json`` to your server: Web Push libraries (pywebpush, web-push for Node, webpush-java, …) take it as is. The
/// server encrypts each message to ``p256dh`` and ``auth`` (RFC 8291, `aes128gcm`), signs a VAPID token with its key
/// (RFC 8292), and `POST`s it to ``endpoint`` with a `TTL` header. The device holds the private key: only it can read
/// the messages, and it decrypts them before your handler runs.
public struct WebPushSubscription: Sendable, Hashable, CustomStringConvertible {
    /// The push resource the server `POST`s messages to.
    public var endpoint: URL
    /// The subscription's P-256 public key: 65 bytes, uncompressed (`keys.p256dh`).
    public var p256dh: Data
    /// The 16-byte authentication secret (`keys.auth`).
    public var auth: Data
    /// The application server's VAPID public key the subscription is restricted to, if it is: only messages signed by
    /// that key are accepted.
    public var applicationServerKey: Data?

    /// A subscription from the daemon's message; nil when a part is not what it must be.
    init?(_ message: PushInterface.WebPushSubscriptionMessage) {
        guard let endpoint = URL(string: message.endpoint), endpoint.scheme == "http" || endpoint.scheme == "https",
            let p256dh = Base64URL.decode(message.p256dh), p256dh.count == 65,
            let auth = Base64URL.decode(message.auth), auth.count == 16
        else { return nil }
        self.endpoint = endpoint
        self.p256dh = p256dh
        self.auth = auth
        if let key = message.applicationServerKey {
            guard let bytes = Base64URL.decode(key) else { return nil }
            applicationServerKey = bytes
        }
    }

    /// The subscription as `PushSubscription.toJSON()` writes it:
    /// `{"endpoint": …, "expirationTime": null, "keys": {"p256dh": …, "auth": …}}`, keys in base64url.
    public var json: String {
        let endpoint = String(decoding: (try? JSONEncoder().encode(endpoint.absoluteString)) ?? Data("\"\"".utf8), as: UTF8.self)
        return #"{"endpoint":\#(endpoint),"expirationTime":null,"keys":{"p256dh":""#
            + Base64URL.encode(p256dh) + #"","auth":""# + Base64URL.encode(auth) + #""}}"#
    }

    /// `endpoint=<url> p256dh=<base64url> auth=<base64url>`.
    public var description: String {
        "endpoint=\(endpoint.absoluteString) p256dh=\(Base64URL.encode(p256dh)) auth=\(Base64URL.encode(auth))"
    }

    /// Subscribes through `link` and reads the daemon's answer.
    static func subscribe(link: DaemonLink, applicationServerKey: Data?) throws(RemoteNotificationError) -> WebPushSubscription {
        let message: PushInterface.WebPushSubscriptionMessage
        do {
            message = try link.request(
                PushInterface.Method.subscribeWebPush,
                PushInterface.SubscribeWebPushParameters(applicationServerKey: applicationServerKey.map(Base64URL.encode)),
                as: PushInterface.SubscribeWebPushReply.self
            ).subscription
        } catch {
            throw RemoteNotificationError(error)
        }
        guard let subscription = WebPushSubscription(message) else {
            throw RemoteNotificationError(
                .unavailable, "the daemon answered a Web Push subscription this SDK cannot read (endpoint \(message.endpoint.debugDescription))",
                fix: "use an SDK and an offstaged of the same version")
        }
        return subscription
    }
}

/// A Web Push message as the remote-notification handler receives it (SPEC NT-3, NT-4).
///
/// Web Push messages wake the app like background pushes: the handler's user info holds `aps` (`content-available`)
/// and, under `webpush`, the message. Read it with this type:
///
/// ```swift
/// if let message = WebPushMessage(userInfo: userInfo) {
///     let text = message.text ?? ""   // the decrypted body, when it is UTF-8
/// }
/// ```
public struct WebPushMessage: Sendable, Hashable {
    /// The message's body, decrypted by the device (empty for a message without one).
    public var data: Data
    /// The message's `Topic`: a newer message with the same one replaced any older one still waiting.
    public var topic: String?
    /// The message's `Urgency`: `very-low`, `low`, `normal` or `high`.
    public var urgency: String

    /// The body as UTF-8 text, or nil when it is not.
    public var text: String? { String(data: data, encoding: .utf8) }

    /// The Web Push message in a remote-notification handler's user info; nil when the push came from the APNs
    /// provider API instead (or carries no readable message).
    public init?(userInfo: [String: any Sendable]) {
        guard let message = userInfo["webpush"] as? [String: any Sendable], let encoded = message["data"] as? String,
            let data = Data(base64Encoded: encoded)
        else { return nil }
        self.data = data
        topic = message["topic"] as? String
        urgency = message["urgency"] as? String ?? "normal"
    }
}

/// Base64url without padding (RFC 4648 §5), as Web Push writes keys.
enum Base64URL {
    static func encode(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ text: String) -> Data? {
        guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
