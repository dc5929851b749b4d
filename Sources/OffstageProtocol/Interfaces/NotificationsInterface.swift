import OffstageCore

/// `io.offstage.Notifications`: what an app's process may do with its local notifications (SPEC NT-1, NT-2). As with
/// `io.offstage.App`, the daemon knows the calling app from the connection's peer credentials: an app sees and
/// changes only its own notifications.
public enum NotificationsInterface {
    /// The interface name.
    public static let name = "io.offstage.Notifications"

    /// The Varlink interface definition, served by `GetInterfaceDescription`.
    public static let definition = """
        # What an app's process may do with its local notifications (UNUserNotificationCenter).
        # The daemon identifies the calling app from the connection's peer credentials (SO_PEERCRED).
        interface io.offstage.Notifications

        \(requestTypes)

        # A request waiting for its time. Times are seconds since the Unix epoch.
        type PendingRequest (
          request: Request,
          addedAt: float,
          due: float
        )

        # A notification that fired. route: user (shown) or app (given to the app in front by willPresent).
        # late: delivered after its due time, because the daemon was down.
        type Notification (
          request: Request,
          due: float,
          deliveredAt: float,
          late: bool,
          route: string
        )

        type Action (
          identifier: string,
          title: string,
          # opens the app in the foreground; otherwise the app handles it in the background
          foreground: ?bool,
          destructive: ?bool
        )

        type Category (
          identifier: string,
          actions: []Action
        )

        # Adds a request, replacing a pending one with its identifier. Over the limit of pending notifications per app
        # (128, a setting) the soonest are kept: dropped names the requests removed to make room; if this request
        # would be the one dropped, TooManyPendingRequests and nothing changes. due: when it fires first.
        method Add(request: Request) -> (due: float, dropped: []string)

        # Removes pending requests by identifier (unknown ones are ignored); all of them when identifiers is null.
        method RemovePending(identifiers: ?[]string) -> ()

        # The app's pending requests, soonest first.
        method Pending() -> (pending: []PendingRequest)

        # The app's notifications in the user's delivered list, oldest first.
        method Delivered() -> (delivered: []Notification)

        # Removes delivered notifications by identifier, or all when identifiers is null, and takes them off the desktop.
        method RemoveDelivered(identifiers: ?[]string) -> ()

        # Sets the number on the app's icon; null or 0 removes it.
        method SetBadge(badge: ?int) -> ()

        # What the user allows: whether notifications are shown (a per-app setting, SPEC SET-2), the badge, and the
        # device's time zone.
        method Settings() -> (allowed: bool, badge: ?int, timeZone: string)

        # Replaces the app's notification categories (at most 64, of at most 10 actions each).
        method SetCategories(categories: []Category) -> ()

        # The app's willPresent handler chose for the notification it was given (identifier and due as in the
        # callback): present true shows it to the user as well (banner, list), false keeps it in the app.
        method AnswerWillPresent(identifier: string, due: float, present: bool) -> ()

        # The calling process is not an app the daemon knows.
        error NotAnApp (pid: int, message: string, fix: string)

        # The app has no process the daemon manages (it was not launched by the daemon or attached).
        error AppNotRunning (message: string, fix: string)

        # Over the limit of pending notifications, with this request the latest of them.
        error TooManyPendingRequests (message: string, fix: string)

        # No such notification of the app.
        error NoSuchNotification (message: string, fix: string)

        # A parameter is malformed: a trigger, a date component, an identifier, content too large.
        error InvalidArgument (message: string, fix: string)
        """

    /// The IDL of a request and its parts, which `io.offstage.NotificationsControl` declares too.
    static let requestTypes = """
        # What a notification shows. At least a title, a body, a sound or a badge; at most 4096 bytes of text in all
        # (a daemon setting).
        type Content (
          title: ?string,
          subtitle: ?string,
          body: ?string,
          # a sound file's name in the app's bundle, or "default"
          sound: ?string,
          # the number on the app's icon once delivered; 0 removes it
          badge: ?int,
          # the app's own data, handed back on delivery and on a tap
          userInfo: ?object,
          threadIdentifier: ?string,
          categoryIdentifier: ?string
        )

        # Date components a calendar trigger matches; those left out match anything. weekday: 1 Sunday to 7 Saturday.
        # timeZone: an IANA name; left out, the device's time zone, followed when it changes.
        type DateComponents (
          year: ?int,
          month: ?int,
          day: ?int,
          hour: ?int,
          minute: ?int,
          second: ?int,
          weekday: ?int,
          timeZone: ?string
        )

        # When a notification fires. kind timeInterval: seconds after it is added (repeating: at least 60);
        # calendar: the next time the dateComponents match; date: at date, seconds since the Unix epoch.
        type Trigger (
          kind: string,
          repeats: ?bool,
          seconds: ?float,
          dateComponents: ?DateComponents,
          date: ?float
        )

        type Request (
          # 1 to 256 bytes; adding a request with the identifier of a pending one replaces it
          identifier: string,
          content: Content,
          trigger: Trigger
        )
        """

    /// Full method names.
    public enum Method {
        public static let add = "io.offstage.Notifications.Add"
        public static let removePending = "io.offstage.Notifications.RemovePending"
        public static let pending = "io.offstage.Notifications.Pending"
        public static let delivered = "io.offstage.Notifications.Delivered"
        public static let removeDelivered = "io.offstage.Notifications.RemoveDelivered"
        public static let setBadge = "io.offstage.Notifications.SetBadge"
        public static let settings = "io.offstage.Notifications.Settings"
        public static let setCategories = "io.offstage.Notifications.SetCategories"
        public static let answerWillPresent = "io.offstage.Notifications.AnswerWillPresent"
    }

    /// `Add` parameters.
    public struct AddParameters: Codable, Hashable, Sendable {
        public var request: RequestMessage
        public init(request: RequestMessage) { self.request = request }
    }

    /// `Add` reply.
    public struct AddReply: Codable, Hashable, Sendable {
        public var due: Double
        public var dropped: [String]
        public init(due: Double, dropped: [String]) {
            self.due = due
            self.dropped = dropped
        }
    }

    /// `RemovePending` and `RemoveDelivered` parameters.
    public struct IdentifiersParameters: Codable, Hashable, Sendable {
        public var identifiers: [String]?
        public init(identifiers: [String]?) { self.identifiers = identifiers }
    }

    /// `Pending` reply.
    public struct PendingReply: Codable, Hashable, Sendable {
        public var pending: [PendingMessage]
        public init(pending: [PendingMessage]) { self.pending = pending }
    }

    /// `Delivered` reply.
    public struct DeliveredReply: Codable, Hashable, Sendable {
        public var delivered: [DeliveredMessage]
        public init(delivered: [DeliveredMessage]) { self.delivered = delivered }
    }

    /// `SetBadge` parameters.
    public struct SetBadgeParameters: Codable, Hashable, Sendable {
        public var badge: Int?
        public init(badge: Int?) { self.badge = badge }
    }

    /// `Settings` reply.
    public struct SettingsReply: Codable, Hashable, Sendable {
        public var allowed: Bool
        public var badge: Int?
        public var timeZone: String
        public init(allowed: Bool, badge: Int?, timeZone: String) {
            self.allowed = allowed
            self.badge = badge
            self.timeZone = timeZone
        }
    }

    /// `SetCategories` parameters.
    public struct SetCategoriesParameters: Codable, Hashable, Sendable {
        public var categories: [CategoryMessage]
        public init(categories: [CategoryMessage]) { self.categories = categories }
    }

    /// `AnswerWillPresent` parameters.
    public struct AnswerWillPresentParameters: Codable, Hashable, Sendable {
        public var identifier: String
        public var due: Double
        public var present: Bool
        public init(identifier: String, due: Double, present: Bool) {
            self.identifier = identifier
            self.due = due
            self.present = present
        }
    }
}
