import Foundation

/// When a local notification fires, as `UNNotificationTrigger` (SPEC NT-1): ``TimeIntervalNotificationTrigger``,
/// ``CalendarNotificationTrigger`` or ``DateNotificationTrigger``. Other conforming types are refused when added.
public protocol NotificationTrigger: Sendable {
    /// Whether it fires again after the first time.
    var repeats: Bool { get }
}

/// Fires a number of seconds after the request is added, as `UNTimeIntervalNotificationTrigger`; with `repeats`,
/// every that many seconds after that — at least ``minimumRepeatInterval`` apart.
public struct TimeIntervalNotificationTrigger: NotificationTrigger, Hashable {
    /// The shortest interval a repeating trigger may have (SPEC NT-1), as on iOS.
    public static let minimumRepeatInterval: TimeInterval = 60

    /// Seconds from adding the request to the first firing (and between firings when it repeats).
    public let timeInterval: TimeInterval
    /// Whether it fires every ``timeInterval`` seconds.
    public let repeats: Bool

    /// A trigger `timeInterval` seconds from when the request is added. A repeating one under 60 seconds is refused
    /// when the request is added (``NotificationError/Code/invalidArgument``).
    public init(timeInterval: TimeInterval, repeats: Bool) {
        self.timeInterval = timeInterval
        self.repeats = repeats
    }

    /// When it would fire if the request were added now.
    public func nextTriggerDate() -> Date? { Date(timeIntervalSinceNow: timeInterval) }
}

/// Fires the next time the date components match, as `UNCalendarNotificationTrigger`; with `repeats`, every time
/// they match (`hour: 7, minute: 0` repeating: every day at 07:00).
///
/// Components left out match anything. The supported ones are `year`, `month`, `day`, `hour`, `minute`, `second`,
/// `weekday` (1 Sunday to 7 Saturday) and `timeZone`. With a `timeZone`, the times are that zone's wall-clock
/// times; without one, the device's, following it when the user changes it (an alarm clock).
public struct CalendarNotificationTrigger: NotificationTrigger, Hashable {
    /// The components to match.
    public let dateComponents: DateComponents
    /// Whether it fires every time they match.
    public let repeats: Bool

    /// A trigger for the next time `dateComponents` match.
    public init(dateMatching dateComponents: DateComponents, repeats: Bool) {
        self.dateComponents = dateComponents
        self.repeats = repeats
    }

    /// The next time after now the components match, in their time zone (the current one when they name none);
    /// nil when no such time is ahead.
    public func nextTriggerDate() -> Date? {
        nextTriggerDate(after: Date())
    }

    /// The next time after `date` the components match; nil when no such time is ahead.
    func nextTriggerDate(after date: Date) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = dateComponents.timeZone ?? .current
        var matching = DateComponents()
        matching.year = dateComponents.year
        matching.month = dateComponents.month
        matching.day = dateComponents.day
        matching.hour = dateComponents.hour
        // As the system does: smaller units left out match their start (an alarm at 07:00 means 07:00:00).
        matching.minute = dateComponents.minute ?? (dateComponents.hour != nil ? 0 : nil)
        matching.second = dateComponents.second ?? (matching.minute != nil ? 0 : nil)
        matching.weekday = dateComponents.weekday
        guard
            let next = calendar.nextDate(
                after: date, matching: matching, matchingPolicy: .nextTime, repeatedTimePolicy: .first,
                direction: .forward)
        else { return nil }
        if let year = dateComponents.year, calendar.component(.year, from: next) != year { return nil }
        return next
    }
}

/// Fires once, at an absolute date: the fire date of a legacy ``LocalNotification`` with no time zone. (iOS has no
/// such public trigger; a date already past fires at once.)
public struct DateNotificationTrigger: NotificationTrigger, Hashable {
    /// When it fires.
    public let date: Date
    /// Always false: a date comes once.
    public var repeats: Bool { false }

    /// A trigger at `date`.
    public init(date: Date) { self.date = date }

    /// The date.
    public func nextTriggerDate() -> Date? { date }
}
