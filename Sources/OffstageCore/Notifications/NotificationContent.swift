/// What a local notification shows (SPEC NT-1): `UNNotificationContent`'s fields.
public struct NotificationContent: Hashable, Sendable, Codable {
    /// The title, shown first.
    public var title: String
    /// A line under the title.
    public var subtitle: String
    /// The message.
    public var body: String
    /// The name of a sound file in the app's bundle, `default` for the system's sound, nil for none.
    public var sound: String?
    /// The number to show on the app's icon once delivered; 0 removes it, nil leaves it as it is.
    public var badge: Int?
    /// The app's own data, a JSON object in text (kept as the app gave it, handed back on delivery and on a tap).
    public var userInfo: String
    /// Groups notifications into threads.
    public var threadIdentifier: String
    /// The category whose actions the notification offers.
    public var categoryIdentifier: String

    /// Creates content; every field but the body may be left out.
    public init(
        title: String = "", subtitle: String = "", body: String = "", sound: String? = nil, badge: Int? = nil,
        userInfo: String = "{}", threadIdentifier: String = "", categoryIdentifier: String = ""
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

    /// Bytes of text the content holds, measured against the content limit (as APNs measures its payload).
    public var size: Int {
        [title, subtitle, body, sound ?? "", userInfo, threadIdentifier, categoryIdentifier].reduce(0) { $0 + $1.utf8.count }
    }

    /// The content, or what is wrong with it: nothing to show, too large, or a badge below zero.
    func validated(maximumBytes: Int) throws(CoreError) -> NotificationContent {
        if title.isEmpty, subtitle.isEmpty, body.isEmpty, sound == nil, badge == nil {
            throw CoreError(
                .invalidArgument, "the notification has no title, body, sound or badge",
                fix: "give it at least a title or a body")
        }
        if size > maximumBytes {
            throw CoreError(
                .invalidArgument, "the notification's content is \(size) bytes, more than the \(maximumBytes) allowed",
                fix: "shorten the text or the user info, or keep the data in the app and put only a key in user info")
        }
        if let badge { try Self.validate(badge: badge) }
        // The desktop's notification service (D-Bus) cannot carry a NUL: text holding one would never be shown.
        for (name, text) in [
            ("title", title), ("subtitle", subtitle), ("body", body), ("threadIdentifier", threadIdentifier),
            ("categoryIdentifier", categoryIdentifier),
        ] where text.utf8.contains(0) {
            throw CoreError(.invalidArgument, "the notification's \(name) holds a NUL character", fix: "remove the NUL (\\0) from the \(name)")
        }
        if let sound, !sound.isEmpty, sound != "default" {
            // A file in the app's bundle (UNNotificationSound(named:)): a path would leave it, and plays nothing. An
            // empty name is no sound, as nil is.
            guard sound.utf8.count <= 255, !sound.contains("/"), sound != ".", sound != "..",
                !sound.utf8.contains(0)
            else {
                throw CoreError(
                    .invalidArgument, "sound \(QuotedText.quote(sound)) is not the name of a file in the app's bundle",
                    fix: "give the file name of a sound in the app's bundle (no folders, at most 255 bytes), default, or none")
            }
        }
        let trimmed = userInfo.drop { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }
        guard trimmed.first == "{", userInfo.last(where: { !" \n\t\r".contains($0) }) == "}" else {
            throw CoreError(
                .invalidArgument, "the user info \(QuotedText.quote(String(userInfo.prefix(40)))) is not a JSON object",
                fix: "pass a dictionary (a JSON object)")
        }
        return self
    }
}

extension NotificationContent {
    /// The largest badge: what a 32-bit integer holds, as desktops and launchers show badges (a count, not an id).
    public static let maximumBadge = Int(Int32.max)

    /// A badge is a count from 0 (no badge) to ``maximumBadge``.
    static func validate(badge: Int) throws(CoreError) {
        if badge < 0 {
            throw CoreError(.invalidArgument, "badge \(badge) is negative", fix: "use 0 to remove the badge, or a positive number")
        }
        if badge > maximumBadge {
            throw CoreError(.invalidArgument, "badge \(badge) is more than \(maximumBadge)", fix: "give a count from 0 to \(maximumBadge)")
        }
    }
}
