/// Where delivered notifications are shown to the user on a desktop session (SPEC NT-2): the freedesktop notification
/// service over D-Bus, or a fake in tests.
///
/// The daemon decides what to show and records each step in the store first; a desktop only carries it out and
/// reports back. Calls come from the daemon's event loop and must not block it. What the desktop answers and what the
/// user does there arrive as ``NotificationDesktopEvent``s through the handler the desktop was made with, from any
/// thread: the daemon moves them onto its event loop. Its `description` names it in the daemon's log: the service and
/// where it runs.
public protocol NotificationDesktop: Sendable, CustomStringConvertible {
    /// Asks the desktop to show `content`. Its answer comes later as ``NotificationDesktopEvent/shown(token:desktopID:)``
    /// or ``NotificationDesktopEvent/failed(token:message:)`` with the same `token`. Throws when the request cannot
    /// even be sent (then no event follows).
    func show(_ content: NotificationDesktopContent, token: UInt64) throws

    /// Takes a notification the desktop showed off it (`CloseNotification`).
    func withdraw(desktopID: UInt32) throws
}

/// What a desktop reports.
public enum NotificationDesktopEvent: Hashable, Sendable {
    /// The notification of `token` is on the desktop with the desktop's `desktopID`.
    case shown(token: UInt64, desktopID: UInt32)
    /// The desktop refused the notification of `token`.
    case failed(token: UInt64, message: String)
    /// The user clicked the notification (`default`) or one of its buttons (the action's identifier).
    case clicked(desktopID: UInt32, action: String)
    /// The notification left the desktop; `byUser` when the user dismissed it (not expired, not withdrawn).
    case closed(desktopID: UInt32, byUser: Bool)
    /// The connection to the desktop is gone: nothing more will be shown until the daemon starts again.
    case disconnected(reason: String)
}

/// Makes a desktop for the session bus at `address` (`DBUS_SESSION_BUS_ADDRESS`), reporting to `events`.
public typealias NotificationDesktopConnector =
    @Sendable (_ address: String, _ events: @escaping @Sendable (NotificationDesktopEvent) -> Void) throws
    -> any NotificationDesktop

/// One notification as a desktop shows it: the freedesktop `Notify` call's parts, decided by the daemon.
public struct NotificationDesktopContent: Hashable, Sendable {
    /// A button: the identifier comes back in ``NotificationDesktopEvent/clicked(desktopID:action:)``.
    public struct Action: Hashable, Sendable {
        /// `default` (a click on the notification itself) or the identifier of one of its category's actions.
        public var identifier: String
        /// The label.
        public var label: String

        /// Creates an action.
        public init(identifier: String, label: String) {
            self.identifier = identifier
            self.label = label
        }
    }

    /// A sound to play with it.
    public enum Sound: Hashable, Sendable {
        /// A name of the freedesktop sound theme (hint `sound-name`).
        case themeName(String)
        /// A file (hint `sound-file`).
        case file(String)
    }

    /// The app, as the desktop names the sender (`app_name`).
    public var appName: String
    /// The first line (`summary`).
    public var summary: String
    /// The text under it (`body`).
    public var body: String
    /// The buttons, `default` first.
    public var actions: [Action]
    /// The sound, if any.
    public var sound: Sound?
    /// The delivery's key as text (`app/identifier@due`), for a hint that names it.
    public var key: String
    /// The app's thread identifier, for desktops that group (empty for none).
    public var threadIdentifier: String
    /// Milliseconds before the desktop hides it: -1 lets the desktop decide, 0 never hides it (`expire_timeout`).
    public var expireTimeout: Int32
    /// The desktop's id of a notification this one replaces in place (`replaces_id`); 0 for a new one.
    public var replacesID: UInt32
    /// For a progress notification (a continued-processing task, SPEC SCH-11): percent done, 0...100 (hint `value`,
    /// which desktops draw as a progress bar); `key` then names the task (hint `x-offstage-task`). Nil for a
    /// notification.
    public var progress: Int?

    /// Creates content.
    public init(
        appName: String, summary: String, body: String, actions: [Action], sound: Sound?, key: String,
        threadIdentifier: String, expireTimeout: Int32, replacesID: UInt32 = 0, progress: Int? = nil
    ) {
        self.appName = appName
        self.summary = summary
        self.body = body
        self.actions = actions
        self.sound = sound
        self.key = key
        self.threadIdentifier = threadIdentifier
        self.expireTimeout = expireTimeout
        self.replacesID = replacesID
        self.progress = progress
    }
}
