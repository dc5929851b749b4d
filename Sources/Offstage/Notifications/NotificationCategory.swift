/// A kind of notification and the actions it offers beside a tap, as `UNNotificationCategory`. A notification offers
/// its category's actions when its content's ``NotificationContent/categoryIdentifier`` names it; register categories
/// with ``UserNotificationCenter/setNotificationCategories(_:)``.
public struct NotificationCategory: Hashable, Sendable {
    /// The name content refers to.
    public let identifier: String
    /// The actions, in the order they are offered (at most 10).
    public let actions: [NotificationAction]

    /// A category with these actions.
    public init(identifier: String, actions: [NotificationAction]) {
        self.identifier = identifier
        self.actions = actions
    }
}

/// An action the user may choose on a notification, as `UNNotificationAction`. Choosing it reaches the app's
/// ``UserNotificationCenterDelegate`` with the action's identifier: in the foreground with ``Options/foreground``,
/// else in the background (the app is woken, or launched with reason ``LaunchReason/notificationAction``).
public struct NotificationAction: Hashable, Sendable {
    /// How an action behaves, as `UNNotificationActionOptions`.
    public struct Options: OptionSet, Hashable, Sendable {
        /// The raw bits.
        public let rawValue: Int
        /// An option set from raw bits.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Choosing it opens the app in the foreground.
        public static let foreground = Options(rawValue: 1 << 0)
        /// It deletes or discards something: shown as such.
        public static let destructive = Options(rawValue: 1 << 1)
    }

    /// The name the response carries (not `default` or `dismiss`).
    public let identifier: String
    /// What the button says.
    public let title: String
    /// How it behaves.
    public let options: Options

    /// An action.
    public init(identifier: String, title: String, options: Options = []) {
        self.identifier = identifier
        self.title = title
        self.options = options
    }
}
