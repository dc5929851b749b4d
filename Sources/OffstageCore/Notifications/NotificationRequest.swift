/// A local notification an app asks for (`UNNotificationRequest`, SPEC NT-1).
///
/// Kept compact (SPEC §11: 64,000 pending, each also named by its delivery record and its firing's actions): the value
/// is one reference to an immutable ``PackedRequest`` that copies share, holding the identifier, the content's text
/// in one run of UTF-8 and the trigger in a few bytes. ``content`` and ``trigger`` are built from it when read; setting
/// a property packs a new one.
public struct NotificationRequest: Hashable, Sendable, Codable {
    private var packed: PackedRequest

    /// The app's name for it: adding another request with the same identifier replaces this one.
    public var identifier: String {
        get { packed.identifier }
        set { packed = PackedRequest.make(identifier: newValue, content: content, trigger: trigger) }
    }

    /// What it shows.
    public var content: NotificationContent {
        get { packed.content }
        set { packed = PackedRequest.make(identifier: identifier, content: newValue, trigger: trigger) }
    }

    /// When it fires.
    public var trigger: NotificationTrigger {
        get { packed.trigger }
        set { packed = PackedRequest.make(identifier: identifier, content: content, trigger: newValue) }
    }

    /// Creates a request.
    public init(identifier: String, content: NotificationContent, trigger: NotificationTrigger) {
        packed = PackedRequest.make(identifier: identifier, content: content, trigger: trigger)
    }

    /// The content's badge, read without building the content.
    var badge: Int? { packed.badge }

    public static func == (lhs: NotificationRequest, rhs: NotificationRequest) -> Bool {
        lhs.packed.isEqual(to: rhs.packed)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(identifier)
        hasher.combine(content)
        hasher.combine(trigger)
    }

    private enum CodingKeys: String, CodingKey {
        case identifier, content, trigger
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            identifier: try container.decode(String.self, forKey: .identifier),
            content: try container.decode(NotificationContent.self, forKey: .content),
            trigger: try container.decode(NotificationTrigger.self, forKey: .trigger))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(identifier, forKey: .identifier)
        try container.encode(content, forKey: .content)
        try container.encode(trigger, forKey: .trigger)
    }

    /// The longest identifier, in bytes.
    public static let maximumIdentifierBytes = 256

    /// Checks an identifier as the app gave it.
    static func validate(identifier: String) throws(CoreError) {
        guard !identifier.isEmpty, identifier.utf8.count <= maximumIdentifierBytes else {
            throw CoreError(
                .invalidArgument, "notification identifier \(QuotedText.quote(identifier)) is empty or too long",
                fix: "use 1 to \(maximumIdentifierBytes) bytes")
        }
        guard !identifier.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw CoreError(
                .invalidArgument, "notification identifier \(QuotedText.quote(identifier)) contains control characters",
                fix: "use printable text")
        }
    }
}

/// A request waiting for its time, with the next instant it fires.
public struct PendingNotification: Hashable, Sendable, Codable {
    /// What the app asked for.
    public var request: NotificationRequest
    /// When the app added it (a time-interval trigger counts from here).
    public var addedAt: Instant
    /// When it fires next.
    public var due: Instant

    /// Creates a pending request.
    public init(request: NotificationRequest, addedAt: Instant, due: Instant) {
        self.request = request
        self.addedAt = addedAt
        self.due = due
    }

    /// Its identifier.
    public var identifier: String { request.identifier }
}

/// Where a fired notification went (SPEC NT-2).
public enum NotificationRoute: String, Hashable, Sendable, Codable {
    /// To the user: the delivered list and the desktop.
    case user
    /// To the app in the foreground (will-present), not the user; until the app has answered, a restart hands it to
    /// the user instead so it is not lost.
    case app
}

/// Identifies one firing of one request: the idempotency key of its delivery record.
public struct DeliveryKey: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The app.
    public var app: AppID
    /// The request's identifier.
    public var identifier: String
    /// The instant it was due.
    public var due: Instant

    /// Creates a key.
    public init(app: AppID, identifier: String, due: Instant) {
        self.app = app
        self.identifier = identifier
        self.due = due
    }

    public static func < (lhs: DeliveryKey, rhs: DeliveryKey) -> Bool {
        (lhs.due, lhs.app, lhs.identifier) < (rhs.due, rhs.app, rhs.identifier)
    }

    /// `app/identifier@nanoseconds`: unique, and the same in the store, the log and the desktop's hints.
    public var description: String { "\(app)/\(identifier)@\(due.nanosecondsSinceEpoch)" }
}

/// A notification that fired (`UNNotification`): what it showed, when it was due and when it was delivered.
public struct DeliveredNotification: Hashable, Sendable, Codable {
    /// The app it belongs to.
    public var app: AppID
    /// The request it came from.
    public var request: NotificationRequest
    /// When it was due.
    public var due: Instant
    /// When it was delivered.
    public var deliveredAt: Instant
    /// Delivered after the daemon was down at its due time (or later than the lateness allowed).
    public var late: Bool
    /// Where it went.
    public var route: NotificationRoute

    /// Creates a record.
    public init(
        app: AppID, request: NotificationRequest, due: Instant, deliveredAt: Instant, late: Bool, route: NotificationRoute
    ) {
        self.app = app
        self.request = request
        self.due = due
        self.deliveredAt = deliveredAt
        self.late = late
        self.route = route
    }

    /// The idempotency key of this firing.
    public var key: DeliveryKey { DeliveryKey(app: app, identifier: request.identifier, due: due) }
}

/// What the user did with a delivered notification (`UNNotificationResponse`).
public struct NotificationResponse: Hashable, Sendable, Codable {
    /// The action that opens the app: a tap on the notification itself.
    public static let defaultAction = "default"
    /// The user dismissed it.
    public static let dismissAction = "dismiss"

    /// The notification.
    public var notification: DeliveredNotification
    /// `default`, `dismiss`, or the identifier of one of its category's actions.
    public var actionIdentifier: String

    /// Creates a response.
    public init(notification: DeliveredNotification, actionIdentifier: String) {
        self.notification = notification
        self.actionIdentifier = actionIdentifier
    }
}
