import Foundation

/// The storage port of the gateway: provider keys, device tokens, and accepting pushes durably.
///
/// The daemon implements it on its SQLite store, `offstage-push` on PostgreSQL (decision 0032). The gateway calls it
/// from many tasks at once.
public protocol PushGatewayBackend: Sendable {
    /// The provider key with this key id (the JWT's `kid`), or nil when none is registered.
    func providerKey(id: String) async throws -> ProviderKey?
    /// What the gateway knows of a device token (64 lowercase hexadecimal digits).
    func lookUp(token: String) async throws -> TokenLookup
    /// Stores an accepted push durably; the gateway answers 200 only after this returns `.stored`. A thrown error
    /// answers 500 `InternalServerError`, and the push counts as not acknowledged.
    func accept(_ push: AcceptedPush) async throws -> Acceptance
}

/// A registered provider key: an app server signs its provider tokens with the private half.
public struct ProviderKey: Sendable, Hashable {
    /// The key id (`kid`), as Apple's 10-character key ids.
    public var id: String
    /// The team that owns the key (the JWT's `iss`).
    public var teamID: String
    /// The P-256 public key, PEM (`-----BEGIN PUBLIC KEY-----`).
    public var publicKeyPEM: String
    /// The topics (apps) the key may push to, or nil for any topic.
    public var allowedTopics: Set<String>?

    /// Creates a provider key.
    public init(id: String, teamID: String, publicKeyPEM: String, allowedTopics: Set<String>? = nil) {
        self.id = id
        self.teamID = teamID
        self.publicKeyPEM = publicKeyPEM
        self.allowedTopics = allowedTopics
    }
}

/// What a device token names.
public enum TokenLookup: Sendable, Hashable {
    /// A live token of `app` on `device`.
    case active(app: String, device: String)
    /// A token revoked at this time (the app was uninstalled): 410 `Unregistered`.
    case revoked(at: Date)
    /// A token never issued: 400 `BadDeviceToken`.
    case unknown
}

/// The backend's answer to ``PushGatewayBackend/accept(_:)``.
public enum Acceptance: Sendable, Hashable {
    /// The push is durably stored (or was already, for the same `apns-id`): answer 200.
    case stored
    /// The backend refuses the push with this APNs reason (for example `TooManyRequests` from a shared limit, or
    /// `Unregistered` when the token was revoked meanwhile).
    case refused(APNsRefusal)
}

/// A push the gateway accepted: everything the device inbox needs.
public struct AcceptedPush: Sendable, Hashable {
    /// The notification's id (`apns-id`).
    public var apnsID: String
    /// The device token, 64 lowercase hexadecimal digits.
    public var token: String
    /// The app (the topic without its push-type suffix).
    public var app: String
    /// The device the token belongs to.
    public var device: String
    /// The push type.
    public var pushType: PushType
    /// The priority.
    public var priority: PushPriority
    /// When the push expires; nil for `apns-expiration: 0` or none.
    public var expiration: Date?
    /// `apns-expiration: 0` or `TTL: 0`: deliver to a connected device now, or drop it with a record; never store it
    /// for a device that is away.
    public var attemptOnce: Bool
    /// `apns-collapse-id`: only the newest push per collapse id is kept.
    public var collapseID: String?
    /// The payload, verbatim (the app's user info).
    public var payload: Data
    /// The parsed `aps` dictionary.
    public var aps: APS
    /// When the gateway accepted the push.
    public var acceptedAt: Date

    /// Creates an accepted push.
    public init(
        apnsID: String, token: String, app: String, device: String, pushType: PushType, priority: PushPriority,
        expiration: Date?, collapseID: String?, payload: Data, aps: APS, acceptedAt: Date, attemptOnce: Bool = false
    ) {
        self.apnsID = apnsID
        self.token = token
        self.app = app
        self.device = device
        self.pushType = pushType
        self.priority = priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.payload = payload
        self.aps = aps
        self.acceptedAt = acceptedAt
        self.attemptOnce = attemptOnce
    }
}
