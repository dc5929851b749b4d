import Foundation

/// The storage port of the Web Push front door: subscriptions, and accepting messages durably.
///
/// The daemon implements it on its SQLite store (where it also holds the subscriber's keys and decrypts), a
/// multi-device gateway on PostgreSQL (without the keys). The gateway calls it from many tasks at once.
public protocol WebPushBackend: Sendable {
    /// What the gateway knows of subscription `id` (the last path segment of the push resource).
    func lookUp(subscription id: String) async throws -> WebPushSubscriptionLookup
    /// Stores an accepted message durably; the gateway answers 201 only after this returns `.stored`. A thrown error
    /// answers 500, and the message counts as not acknowledged.
    func accept(_ push: AcceptedPush) async throws -> Acceptance
}

/// What a subscription id names.
public enum WebPushSubscriptionLookup: Sendable {
    /// A live subscription.
    case active(WebPushSubscription)
    /// A subscription that ended at this time (the app unsubscribed or was uninstalled): 410.
    case gone(at: Date)
    /// An id never issued: 404.
    case unknown
}

/// A Web Push subscription: the push resource `/push/<id>` of one app on one device.
public struct WebPushSubscription: Sendable, Hashable {
    /// The subscription id: base64url, 16 to 128 characters.
    public var id: String
    /// The app the messages are for.
    public var app: String
    /// The device the app runs on.
    public var device: String
    /// The application server's public key (65-byte uncompressed P-256) when the subscription is restricted to it
    /// (`applicationServerKey`, RFC 8292 §4): only requests with VAPID signed by that key are accepted.
    public var applicationServerKey: Data?
    /// The subscriber's keys, where this host decrypts (the device's own gateway); nil on a gateway that forwards
    /// encrypted bodies.
    public var userAgentKeys: WebPushUserAgentKeys?

    /// Creates a subscription.
    public init(
        id: String, app: String, device: String, applicationServerKey: Data? = nil, userAgentKeys: WebPushUserAgentKeys? = nil
    ) {
        self.id = id
        self.app = app
        self.device = device
        self.applicationServerKey = applicationServerKey
        self.userAgentKeys = userAgentKeys
    }
}
