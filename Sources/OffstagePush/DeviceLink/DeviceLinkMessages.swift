import Foundation

/// A stored push as the device link carries it from a gateway node to a device (decision 0035).
///
/// `delivery` names this stored copy; the device acknowledges it in its next pull once its inbox holds the push, and
/// only then does the gateway delete it. The rest is the accepted push, with times in milliseconds since 1970.
public struct LinkedPush: Codable, Sendable, Hashable {
    /// The gateway's id of the stored copy, acknowledged by the device.
    public var delivery: String
    /// The notification's id (`apns-id`, or the Web Push message id).
    public var apnsID: String
    /// The device token, or the Web Push subscription id.
    public var token: String
    /// The app.
    public var app: String
    /// The push type's raw value (`alert`, `background`, …).
    public var pushType: String
    /// The priority (10, 5 or 1).
    public var priority: Int
    /// When the push expires, in milliseconds since 1970; nil for none.
    public var expiresAtMillis: Int64?
    /// `apns-collapse-id` or the Web Push `Topic`.
    public var collapseID: String?
    /// The payload, verbatim (base64 in JSON).
    public var payload: Data
    /// When the gateway accepted the push, in milliseconds since 1970.
    public var acceptedAtMillis: Int64
    /// `apns-expiration: 0` / `TTL: 0` (absent: false): the device delivers it at once or drops it with a record.
    public var attemptOnce: Bool?

    /// The linked form of `push`, stored as `delivery`.
    public init(delivery: String, _ push: AcceptedPush) {
        self.delivery = delivery
        apnsID = push.apnsID
        token = push.token
        app = push.app
        pushType = push.pushType.rawValue
        priority = push.priority.rawValue
        expiresAtMillis = push.expiration.map(Self.millis)
        collapseID = push.collapseID
        payload = push.payload
        acceptedAtMillis = Self.millis(push.acceptedAt)
        attemptOnce = push.attemptOnce ? true : nil
    }

    /// The accepted push again, on `device`: the payload's `aps` is parsed as the gateway parsed it. Throws when the
    /// link carried something no gateway accepts (a bad type, priority or payload).
    public func accepted(device: String) throws(DeviceLinkError) -> AcceptedPush {
        guard let type = PushType(rawValue: pushType) else {
            throw DeviceLinkError(description: "Push \(apnsID) has push type \(pushType), which no gateway sends.")
        }
        guard let priority = PushPriority(rawValue: priority) else {
            throw DeviceLinkError(description: "Push \(apnsID) has priority \(self.priority), which is not 10, 5 or 1.")
        }
        let aps: APS
        switch PayloadParser.parse(payload) {
        case .success(let parsed): aps = parsed
        case .failure(let refusal): throw DeviceLinkError(description: "Push \(apnsID) has a bad payload: \(refusal.detail)")
        }
        return AcceptedPush(
            apnsID: apnsID, token: token, app: app, device: device, pushType: type, priority: priority,
            expiration: expiresAtMillis.map(Self.date), collapseID: collapseID, payload: payload, aps: aps,
            acceptedAt: Self.date(acceptedAtMillis), attemptOnce: attemptOnce ?? false)
    }

    /// Milliseconds since 1970 of `date`.
    public static func millis(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
    /// The date `millis` milliseconds after 1970.
    public static func date(_ millis: Int64) -> Date { Date(timeIntervalSince1970: TimeInterval(millis) / 1000) }
}

/// `POST /device/v1/pull`: acknowledge what the inbox stored, and wait for what is stored for the device.
public struct DeviceLinkPull: Codable, Sendable, Hashable {
    /// The deliveries of the previous answer the device's inbox now holds: the gateway deletes them.
    public var acks: [String]
    /// How long the gateway may hold the request open when nothing is stored, in seconds (0 to 60).
    public var waitSeconds: Double

    /// Creates a pull.
    public init(acks: [String], waitSeconds: Double) {
        self.acks = acks
        self.waitSeconds = waitSeconds
    }
}

/// The answer to a pull: the pushes stored for the device, oldest first, now claimed by the answering node.
public struct DeviceLinkBatch: Codable, Sendable, Hashable {
    /// The pushes; empty when the wait ended with none.
    public var pushes: [LinkedPush]

    /// Creates a batch.
    public init(pushes: [LinkedPush]) {
        self.pushes = pushes
    }
}

/// `PUT /device/v1/registrations`: the device's device tokens and Web Push subscriptions, live and ended, so the
/// gateway routes pushes to it and answers `Unregistered` or 410 for what ended. Sent whole on every connection and
/// again for each change; registering is an upsert, and what the device does not list is left as it was. An ending is
/// for good: a later registration listing the token as live does not bring it back (a device issues a new token).
public struct DeviceRegistrations: Codable, Sendable, Hashable {
    /// A device token of one app.
    public struct Token: Codable, Sendable, Hashable {
        /// 64 lowercase hexadecimal digits.
        public var token: String
        /// The app it reaches.
        public var app: String
        /// When it was revoked (uninstall), in milliseconds since 1970; nil while live.
        public var revokedAtMillis: Int64?

        /// Creates a token registration.
        public init(token: String, app: String, revokedAtMillis: Int64? = nil) {
            self.token = token
            self.app = app
            self.revokedAtMillis = revokedAtMillis
        }
    }

    /// A Web Push subscription of one app. The gateway never sees its keys: it stores messages encrypted and the
    /// device decrypts them.
    public struct Subscription: Codable, Sendable, Hashable {
        /// The subscription id (base64url, the last path segment of its endpoint).
        public var id: String
        /// The app it reaches.
        public var app: String
        /// The application server key the subscription is restricted to (65 bytes, base64url), or nil.
        public var applicationServerKey: String?
        /// When it ended, in milliseconds since 1970; nil while live.
        public var endedAtMillis: Int64?

        /// Creates a subscription registration.
        public init(id: String, app: String, applicationServerKey: String? = nil, endedAtMillis: Int64? = nil) {
            self.id = id
            self.app = app
            self.applicationServerKey = applicationServerKey
            self.endedAtMillis = endedAtMillis
        }
    }

    /// The device tokens.
    public var tokens: [Token]
    /// The Web Push subscriptions.
    public var subscriptions: [Subscription]

    /// Creates registrations.
    public init(tokens: [Token] = [], subscriptions: [Subscription] = []) {
        self.tokens = tokens
        self.subscriptions = subscriptions
    }
}

/// The device link could not be used: what went wrong and the fix.
public struct DeviceLinkError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, and the fix.
    public var description: String

    /// Creates an error.
    public init(description: String) {
        self.description = description
    }
}
