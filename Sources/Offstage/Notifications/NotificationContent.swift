/// What a local notification shows, as `UNMutableNotificationContent` (SPEC NT-1): a title, a body, a sound, the
/// number for the app's icon, and the app's own data.
///
/// ```swift
/// var content = NotificationContent()
/// content.title = "Alarm"
/// content.body = "Time to wake up"
/// content.sound = .default
/// ```
///
/// Give at least a title, a body, a sound or a badge; the text of all fields together (user info as JSON included)
/// may be at most 4096 bytes (a setting of the system).
public struct NotificationContent: Sendable {
    /// The title, shown first.
    public var title: String
    /// A line under the title.
    public var subtitle: String
    /// The message.
    public var body: String
    /// The sound played when it is shown; nil for none.
    public var sound: NotificationSound?
    /// The number on the app's icon once the notification is delivered: 0 removes it, nil leaves it as it is.
    public var badge: Int?
    /// The app's own data, handed back with the delivered notification and the user's response.
    ///
    /// Only values JSON can hold: `String`, `Bool`, integers, `Double` (finite), arrays and `[String: …]`
    /// dictionaries of those. Adding a request with any other value throws ``NotificationError`` with code
    /// ``NotificationError/Code/invalidArgument`` naming the key. Numbers come back as `Int` when they are whole.
    public var userInfo: [String: any Sendable]
    /// Groups notifications into threads.
    public var threadIdentifier: String
    /// The ``NotificationCategory`` whose actions the notification offers.
    public var categoryIdentifier: String

    /// Content with the fields given; the others empty.
    public init(
        title: String = "", subtitle: String = "", body: String = "", sound: NotificationSound? = nil,
        badge: Int? = nil, userInfo: [String: any Sendable] = [:], threadIdentifier: String = "",
        categoryIdentifier: String = ""
    ) {
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.sound = sound
        self.badge = badge
        self.userInfo = userInfo
        self.threadIdentifier = threadIdentifier
        self.categoryIdentifier = categoryIdentifier
    }
}

/// The name iOS code uses for content it fills in (`UNMutableNotificationContent`): here content is a value, and
/// always mutable.
public typealias MutableNotificationContent = NotificationContent

/// The sound of a notification, as `UNNotificationSound`.
public struct NotificationSound: Hashable, Sendable, CustomStringConvertible {
    /// The sound file's name in the app's bundle, or `default`.
    public let name: String

    /// The system's notification sound.
    public static let `default` = NotificationSound(named: "default")

    /// A sound file in the app's bundle (`alarm.wav`).
    public init(named name: String) { self.name = name }

    /// The name.
    public var description: String { name }
}
