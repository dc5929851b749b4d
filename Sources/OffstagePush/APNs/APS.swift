/// The `aps` dictionary of a push payload, typed: what the device shows or does.
///
/// Keys the gateway does not type (Live Activity keys, `interruption-level`, `relevance-score`, …) stay in the
/// verbatim payload bytes the push carries beside this value.
public struct APS: Sendable, Hashable {
    /// The alert to show, if any.
    public var alert: APSAlert?
    /// The number to show on the app's icon (`badge`); 0 removes it.
    public var badge: Int?
    /// The sound to play.
    public var sound: APSSound?
    /// The group the notification belongs to (`thread-id`).
    public var threadID: String?
    /// The notification's category, naming its actions (`category`).
    public var category: String?
    /// `content-available: 1`: wake the app in the background (a background push).
    public var contentAvailable: Bool
    /// `mutable-content: 1`: let the app's service extension change the notification first.
    public var mutableContent: Bool

    /// Creates an `aps` value.
    public init(
        alert: APSAlert? = nil, badge: Int? = nil, sound: APSSound? = nil, threadID: String? = nil,
        category: String? = nil, contentAvailable: Bool = false, mutableContent: Bool = false
    ) {
        self.alert = alert
        self.badge = badge
        self.sound = sound
        self.threadID = threadID
        self.category = category
        self.contentAvailable = contentAvailable
        self.mutableContent = mutableContent
    }

    /// Whether the push asks for a user interaction (an alert, a badge or a sound).
    public var interactsWithUser: Bool { alert != nil || badge != nil || sound != nil }
}

/// The `alert` of an `aps` dictionary: a plain string (the body) or a dictionary.
///
/// The localisation keys are kept as they are; the device resolves them.
public struct APSAlert: Sendable, Hashable {
    /// `title`.
    public var title: String?
    /// `subtitle`.
    public var subtitle: String?
    /// `body` (or the whole alert when it was a string).
    public var body: String?
    /// `launch-image`.
    public var launchImage: String?
    /// `title-loc-key`.
    public var titleLocKey: String?
    /// `title-loc-args`.
    public var titleLocArgs: [String]?
    /// `subtitle-loc-key`.
    public var subtitleLocKey: String?
    /// `subtitle-loc-args`.
    public var subtitleLocArgs: [String]?
    /// `loc-key`.
    public var locKey: String?
    /// `loc-args`.
    public var locArgs: [String]?

    /// Creates an alert.
    public init(
        title: String? = nil, subtitle: String? = nil, body: String? = nil, launchImage: String? = nil,
        titleLocKey: String? = nil, titleLocArgs: [String]? = nil, subtitleLocKey: String? = nil,
        subtitleLocArgs: [String]? = nil, locKey: String? = nil, locArgs: [String]? = nil
    ) {
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.launchImage = launchImage
        self.titleLocKey = titleLocKey
        self.titleLocArgs = titleLocArgs
        self.subtitleLocKey = subtitleLocKey
        self.subtitleLocArgs = subtitleLocArgs
        self.locKey = locKey
        self.locArgs = locArgs
    }
}

/// The `sound` of an `aps` dictionary: a name, or a dictionary with `name`, `critical` and `volume`.
public struct APSSound: Sendable, Hashable {
    /// The sound file's name (`default` for the system sound).
    public var name: String
    /// `critical: 1`: a critical alert sound.
    public var critical: Bool
    /// `volume`, 0 to 1, for critical sounds.
    public var volume: Double?

    /// Creates a sound.
    public init(name: String, critical: Bool = false, volume: Double? = nil) {
        self.name = name
        self.critical = critical
        self.volume = volume
    }
}
