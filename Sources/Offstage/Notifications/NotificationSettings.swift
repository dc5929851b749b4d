import Foundation

/// What the user allows the app's notifications, as `UNNotificationSettings`.
public struct NotificationSettings: Hashable, Sendable {
    /// Whether the user allows the app's notifications to be shown (a per-app setting, SPEC SET-2, changed with
    /// `offstage settings APP_ID notifications=on|off`).
    public let authorizationStatus: AuthorizationStatus
    /// The number on the app's icon now; 0 for none.
    public let badgeCount: Int
    /// The device's time zone (an IANA name), which calendar triggers without their own follow.
    public let timeZoneIdentifier: String

    /// Settings with these values.
    public init(authorizationStatus: AuthorizationStatus, badgeCount: Int, timeZoneIdentifier: String) {
        self.authorizationStatus = authorizationStatus
        self.badgeCount = badgeCount
        self.timeZoneIdentifier = timeZoneIdentifier
    }
}

/// Whether the app may show notifications, as `UNAuthorizationStatus`. There is no prompt: the user's per-app
/// setting decides, and it starts on.
public enum AuthorizationStatus: String, Hashable, Sendable {
    /// Notifications are shown.
    case authorized
    /// The user turned them off: they still fire (and reach the app in front) but are not shown.
    case denied
}

/// What the app asks to use, as `UNAuthorizationOptions`. Kept for the shape of iOS code: the user's setting covers
/// all of them.
public struct AuthorizationOptions: OptionSet, Hashable, Sendable {
    /// The raw bits.
    public let rawValue: Int
    /// An option set from raw bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The number on the app's icon.
    public static let badge = AuthorizationOptions(rawValue: 1 << 0)
    /// Sounds.
    public static let sound = AuthorizationOptions(rawValue: 1 << 1)
    /// Banners and the list.
    public static let alert = AuthorizationOptions(rawValue: 1 << 2)
}

/// How to present a notification that fired while the app is in front, as `UNNotificationPresentationOptions`: the
/// answer of ``UserNotificationCenterDelegate/userNotificationCenter(_:willPresent:)``. With ``banner`` or ``list`` it
/// is shown to the user as well; empty, it stays with the app.
public struct NotificationPresentationOptions: OptionSet, Hashable, Sendable {
    /// The raw bits.
    public let rawValue: Int
    /// An option set from raw bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Show it as a banner.
    public static let banner = NotificationPresentationOptions(rawValue: 1 << 0)
    /// Put it in the delivered list.
    public static let list = NotificationPresentationOptions(rawValue: 1 << 1)
    /// Play its sound.
    public static let sound = NotificationPresentationOptions(rawValue: 1 << 2)
    /// Set its badge.
    public static let badge = NotificationPresentationOptions(rawValue: 1 << 3)

    /// Whether the user is shown the notification: the system shows it (banner and list together) for either.
    var presentsToUser: Bool { !isDisjoint(with: [.banner, .list]) }
}
