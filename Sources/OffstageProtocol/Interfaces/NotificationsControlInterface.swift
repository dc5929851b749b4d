import OffstageCore

/// `io.offstage.NotificationsControl`: what the user (through the CLI) may do with every app's local notifications
/// (SPEC NT-2, CLI-2): look at them, tap them, clear them.
public enum NotificationsControlInterface {
    /// The interface name.
    public static let name = "io.offstage.NotificationsControl"

    /// The Varlink interface definition, served by `GetInterfaceDescription`.
    public static let definition = """
        # What the user may do with the apps' local notifications: list, tap, clear (offstage notifications).
        interface io.offstage.NotificationsControl

        \(NotificationsInterface.requestTypes)

        # A pending request of an app. trigger: the trigger in words. Times are seconds since the Unix epoch.
        type AppPending (
          app: string,
          request: Request,
          trigger: string,
          addedAt: float,
          due: float
        )

        # A notification of an app that fired. route: user (in the delivered list) or app (given to the app in front,
        # waiting for its answer). late: delivered after its due time because the daemon was down.
        type AppDelivered (
          app: string,
          request: Request,
          due: float,
          deliveredAt: float,
          late: bool,
          route: string
        )

        type AppBadge (
          app: string,
          badge: int
        )

        # Pending and delivered notifications of one app, or of every app when app is null; the icons' badges; the
        # device's time zone, which calendar triggers without their own follow.
        method Notifications(app: ?string) -> (
          pending: []AppPending,
          delivered: []AppDelivered,
          badges: []AppBadge,
          timeZone: string
        )

        # The user taps the app's delivered notification (the newest with that identifier), or chooses action on it:
        # default (the same as a tap) opens the app, with launch reason notification if it was not running; an action
        # of its category opens the app or wakes it in the background, as the action says; dismiss only removes it.
        # The app hears the response; the notification leaves the delivered list.
        method Tap(app: string, identifier: string, action: ?string) -> ()

        # Removes delivered notifications: the app's with these identifiers, all of the app's, or every app's.
        method Clear(app: ?string, identifiers: ?[]string) -> (removed: int)

        error AppNotInstalled (message: string, fix: string)

        # No delivered notification with that identifier.
        error NoSuchNotification (message: string, fix: string)

        # The device is locked: a tap that opens the app needs it unlocked.
        error DeviceLocked (message: string, fix: string)

        error InvalidArgument (message: string, fix: string)
        """

    /// Full method names.
    public enum Method {
        public static let notifications = "io.offstage.NotificationsControl.Notifications"
        public static let tap = "io.offstage.NotificationsControl.Tap"
        public static let clear = "io.offstage.NotificationsControl.Clear"
    }

    /// `Notifications` parameters.
    public struct NotificationsParameters: Codable, Hashable, Sendable {
        public var app: String?
        public init(app: String?) { self.app = app }
    }

    /// A pending request of an app.
    public struct AppPendingMessage: Codable, Hashable, Sendable {
        public var app: String
        public var request: NotificationsInterface.RequestMessage
        public var trigger: String
        public var addedAt: Double
        public var due: Double

        public init(app: String, request: NotificationsInterface.RequestMessage, trigger: String, addedAt: Double, due: Double) {
            self.app = app
            self.request = request
            self.trigger = trigger
            self.addedAt = addedAt
            self.due = due
        }

        /// The wire form of one of `app`'s pending requests.
        public init(app: AppID, _ pending: PendingNotification) {
            self.init(
                app: app.rawValue, request: .init(pending.request), trigger: pending.request.trigger.summary,
                addedAt: pending.addedAt.secondsSinceEpoch, due: pending.due.secondsSinceEpoch)
        }
    }

    /// A delivered notification of an app.
    public struct AppDeliveredMessage: Codable, Hashable, Sendable {
        public var app: String
        public var request: NotificationsInterface.RequestMessage
        public var due: Double
        public var deliveredAt: Double
        public var late: Bool
        public var route: String

        public init(
            app: String, request: NotificationsInterface.RequestMessage, due: Double, deliveredAt: Double, late: Bool,
            route: String
        ) {
            self.app = app
            self.request = request
            self.due = due
            self.deliveredAt = deliveredAt
            self.late = late
            self.route = route
        }

        /// The wire form of a delivery record.
        public init(_ record: DeliveredNotification) {
            self.init(
                app: record.app.rawValue, request: .init(record.request), due: record.due.secondsSinceEpoch,
                deliveredAt: record.deliveredAt.secondsSinceEpoch, late: record.late, route: record.route.rawValue)
        }
    }

    /// The number on an app's icon.
    public struct AppBadgeMessage: Codable, Hashable, Sendable {
        public var app: String
        public var badge: Int
        public init(app: String, badge: Int) {
            self.app = app
            self.badge = badge
        }
    }

    /// `Notifications` reply.
    public struct NotificationsReply: Codable, Hashable, Sendable {
        public var pending: [AppPendingMessage]
        public var delivered: [AppDeliveredMessage]
        public var badges: [AppBadgeMessage]
        public var timeZone: String
        public init(pending: [AppPendingMessage], delivered: [AppDeliveredMessage], badges: [AppBadgeMessage], timeZone: String) {
            self.pending = pending
            self.delivered = delivered
            self.badges = badges
            self.timeZone = timeZone
        }

        /// What the schedule holds for `app`, or for every app when nil: pending soonest first, delivered oldest first.
        public init(_ schedule: NotificationSchedule, app: AppID?) {
            self = NotificationsListing(schedule, app: app).reply
        }
    }

    /// `Tap` parameters.
    public struct TapParameters: Codable, Hashable, Sendable {
        public var app: String
        public var identifier: String
        public var action: String?
        public init(app: String, identifier: String, action: String?) {
            self.app = app
            self.identifier = identifier
            self.action = action
        }
    }

    /// `Clear` parameters.
    public struct ClearParameters: Codable, Hashable, Sendable {
        public var app: String?
        public var identifiers: [String]?
        public init(app: String?, identifiers: [String]?) {
            self.app = app
            self.identifiers = identifiers
        }
    }

    /// `Clear` reply.
    public struct ClearReply: Codable, Hashable, Sendable {
        public var removed: Int
        public init(removed: Int) { self.removed = removed }
    }
}
