/// A push an app's server sent through the gateway, as the device's inbox took it (SPEC NT-3, NT-4).
///
/// The gateway checked it and parsed its `aps` dictionary; the payload itself stays as the server wrote it, for the
/// app's handler (its user info).
public struct RemotePush: Hashable, Sendable, Codable {
    /// `apns-id`: unique per push, the inbox's idempotency key.
    public var id: String
    /// The app it is for (`apns-topic`).
    public var app: AppID
    /// `apns-push-type`.
    public var type: PushType
    /// `apns-priority`: 10 (at once), 5 (when convenient for the device), 1 (whenever).
    public var priority: Int
    /// `apns-collapse-id`: a newer push with the same one replaces this one, wherever it waits.
    public var collapseID: String?
    /// `apns-expiration`: from this instant on the push is dropped, with a record, if not yet delivered; nil when it
    /// has none on the device (on a device that is online it is delivered at once either way).
    public var expiresAt: Instant?
    /// When the gateway accepted it (answered 200).
    public var acceptedAt: Instant
    /// Its `aps` dictionary.
    public var aps: PushAPS
    /// The whole JSON payload, verbatim.
    public var payload: String
    /// `apns-expiration: 0` (or Web Push `TTL: 0`): delivered at once or not at all. Over the app's budget it is
    /// dropped with a record instead of held.
    public var attemptOnce: Bool

    /// Creates a push.
    public init(
        id: String, app: AppID, type: PushType, priority: Int, collapseID: String? = nil, expiresAt: Instant? = nil,
        acceptedAt: Instant, aps: PushAPS, payload: String, attemptOnce: Bool = false
    ) {
        self.id = id
        self.app = app
        self.type = type
        self.priority = priority
        self.collapseID = collapseID
        self.expiresAt = expiresAt
        self.acceptedAt = acceptedAt
        self.aps = aps
        self.payload = payload
        self.attemptOnce = attemptOnce
    }

    private enum CodingKeys: String, CodingKey {
        case id, app, type, priority, collapseID, expiresAt, acceptedAt, aps, payload, attemptOnce
    }

    /// Reads a push; one stored before `attemptOnce` existed has it false.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        app = try container.decode(AppID.self, forKey: .app)
        type = try container.decode(PushType.self, forKey: .type)
        priority = try container.decode(Int.self, forKey: .priority)
        collapseID = try container.decodeIfPresent(String.self, forKey: .collapseID)
        expiresAt = try container.decodeIfPresent(Instant.self, forKey: .expiresAt)
        acceptedAt = try container.decode(Instant.self, forKey: .acceptedAt)
        aps = try container.decode(PushAPS.self, forKey: .aps)
        payload = try container.decode(String.self, forKey: .payload)
        attemptOnce = try container.decodeIfPresent(Bool.self, forKey: .attemptOnce) ?? false
    }

    /// Whether it asks to wake the app in the background: `content-available: 1` (SPEC NT-4).
    public var wakesApp: Bool { aps.contentAvailable }

    /// Whether it shows something to the user: an alert, a sound or a badge.
    public var showsAlert: Bool { aps.alert != nil || aps.sound != nil }

    /// Whether it has expired at `now` (at its expiration instant it has: that instant is its deadline).
    public func expired(at now: Instant) -> Bool { expiresAt.map { now >= $0 } ?? false }

    /// The identifier of the notification it shows: its collapse id, so that a newer push with the same one replaces
    /// it in the delivered list, else its `apns-id`.
    public var notificationIdentifier: String { collapseID ?? id }
}

/// `apns-push-type`: what the push is for.
public enum PushType: String, Hashable, Sendable, Codable, CaseIterable {
    /// Shows an alert, plays a sound or badges the icon.
    case alert
    /// Wakes the app in the background (`content-available`), shows nothing.
    case background
    /// A location query for the app's location push service extension.
    case location
    /// An incoming call (PushKit); the app must declare the `voip` mode.
    case voip
    /// For a watch complication.
    case complication
    /// For a file provider extension.
    case fileprovider
    /// A device-management command.
    case mdm
    /// Updates a live activity.
    case liveactivity
    /// Push to talk.
    case pushtotalk
    /// Reloads the app's widgets.
    case widgets
    /// Reloads the app's controls.
    case controls
}

/// The parts of a payload's `aps` dictionary the system acts on.
public struct PushAPS: Hashable, Sendable, Codable {
    /// The alert's text; nil for no alert.
    public var alert: PushAlert?
    /// The number on the app's icon (0 removes it); nil leaves it.
    public var badge: Int?
    /// The sound's name (`default`, or a file of the app).
    public var sound: String?
    /// `thread-id`: groups notifications.
    public var threadID: String?
    /// `category`: the notification category, for its actions.
    public var category: String?
    /// `content-available: 1`.
    public var contentAvailable: Bool
    /// `mutable-content: 1`: a notification service extension may change it before it is shown.
    public var mutableContent: Bool

    /// Creates the parsed dictionary.
    public init(
        alert: PushAlert? = nil, badge: Int? = nil, sound: String? = nil, threadID: String? = nil, category: String? = nil,
        contentAvailable: Bool = false, mutableContent: Bool = false
    ) {
        self.alert = alert
        self.badge = badge
        self.sound = sound
        self.threadID = threadID
        self.category = category
        self.contentAvailable = contentAvailable
        self.mutableContent = mutableContent
    }
}

/// An alert's text (`aps.alert`, a string being the body alone).
public struct PushAlert: Hashable, Sendable, Codable {
    /// The title.
    public var title: String
    /// The subtitle.
    public var subtitle: String
    /// The body.
    public var body: String

    /// Creates an alert.
    public init(title: String = "", subtitle: String = "", body: String = "") {
        self.title = title
        self.subtitle = subtitle
        self.body = body
    }
}
