import Foundation

/// A local notification in the legacy shape of `UILocalNotification`: a fire date, an optional time zone and repeat
/// interval, and what it shows. Schedule it with ``Application/scheduleLocalNotification(_:)``; it becomes a
/// ``NotificationRequest`` of the ``UserNotificationCenter``, with an identifier the SDK makes and keeps in
/// ``userInfo`` (under ``identifierKey``), so that ``Application/cancelLocalNotification(_:)`` finds it again.
///
/// ```swift
/// let alarm = LocalNotification()
/// alarm.fireDate = tomorrowAtSeven
/// alarm.timeZone = .current            // 07:00 on the wall clock
/// alarm.repeatInterval = .day
/// alarm.alertBody = "Time to wake up"
/// alarm.soundName = LocalNotification.defaultSoundName
/// Application.shared.scheduleLocalNotification(alarm)
/// ```
public final class LocalNotification {
    /// The user-info key under which the SDK keeps the notification's request identifier.
    public static let identifierKey = "offstage.localNotification"
    /// The system's sound (`UILocalNotificationDefaultSoundName`).
    public static let defaultSoundName = "default"

    /// When it fires; nil fires it at once.
    public var fireDate: Date?
    /// Nil: ``fireDate`` is an absolute time, the same instant wherever the device is. A zone: the fire date is a
    /// wall-clock time in that zone (07:00 there), as an alarm clock.
    public var timeZone: TimeZone?
    /// How often it repeats after ``fireDate``, as a calendar unit: `.minute`, `.hour`, `.day`, `.weekday` or
    /// `.weekOfYear` (weekly), `.month`, `.year`; nil fires once. Other units are refused when scheduled.
    public var repeatInterval: Calendar.Component?
    /// A short title.
    public var alertTitle: String?
    /// The message.
    public var alertBody: String?
    /// A sound file in the app's bundle, or ``defaultSoundName``; nil for none.
    public var soundName: String?
    /// The number on the app's icon once delivered; 0 (the default) leaves it as it is.
    public var applicationIconBadgeNumber = 0
    /// The app's own data (JSON values only, see ``NotificationContent/userInfo``).
    public var userInfo: [String: any Sendable]?
    /// The ``NotificationCategory`` whose actions it offers.
    public var category: String?

    /// An empty notification: fill it in, then schedule it.
    public init() {}

    /// The identifier of the request it was scheduled as, if it was.
    public var identifier: String? { userInfo?[Self.identifierKey] as? String }

    /// The request for this notification, with identifier `identifier`; with `now`, one that fires at once.
    func request(identifier: String, now: Bool = false) throws(NotificationError) -> NotificationRequest {
        var info = userInfo ?? [:]
        info[Self.identifierKey] = identifier
        let content = NotificationContent(
            title: alertTitle ?? "", body: alertBody ?? "", sound: soundName.map(NotificationSound.init(named:)),
            badge: applicationIconBadgeNumber > 0 ? applicationIconBadgeNumber : nil, userInfo: info,
            categoryIdentifier: category ?? "")
        return NotificationRequest(identifier: identifier, content: content, trigger: now ? nil : try trigger())
    }

    /// The trigger: a date for an absolute time, a calendar match for a wall-clock time or a repeat. A repeat with no
    /// time zone keeps the fire date's instants: its components are matched in GMT.
    func trigger() throws(NotificationError) -> (any NotificationTrigger)? {
        guard let fireDate else { return nil }
        guard timeZone != nil || repeatInterval != nil else { return DateNotificationTrigger(date: fireDate) }
        let zone = timeZone ?? TimeZone.gmt
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        var components = calendar.dateComponents(try Self.components(repeating: repeatInterval), from: fireDate)
        components.timeZone = zone
        return CalendarNotificationTrigger(dateMatching: components, repeats: repeatInterval != nil)
    }

    /// The components a calendar trigger matches to repeat every `unit` (all of them to fire once).
    static func components(repeating unit: Calendar.Component?) throws(NotificationError) -> Set<Calendar.Component> {
        let time: Set<Calendar.Component> = [.hour, .minute, .second]
        switch unit {
        case nil: return time.union([.year, .month, .day])
        case .minute?: return [.second]
        case .hour?: return [.minute, .second]
        case .day?: return time
        case .weekday?, .weekOfYear?, .weekOfMonth?: return time.union([.weekday])
        case .month?: return time.union([.day])
        case .year?: return time.union([.month, .day])
        case let unit?:
            throw NotificationError(
                .invalidArgument, "a local notification cannot repeat every \(unit)",
                fix: "use .minute, .hour, .day, .weekOfYear, .month or .year, or nil to fire once")
        }
    }

    /// A notification for a pending request, firing next at `due`.
    convenience init(_ request: NotificationRequest, due: Date) {
        self.init()
        fireDate = due
        let content = request.content
        alertTitle = content.title.isEmpty ? nil : content.title
        alertBody = content.body.isEmpty ? nil : content.body
        soundName = content.sound?.name
        applicationIconBadgeNumber = content.badge ?? 0
        userInfo = content.userInfo.isEmpty ? nil : content.userInfo
        category = content.categoryIdentifier.isEmpty ? nil : content.categoryIdentifier
        if let trigger = request.trigger as? CalendarNotificationTrigger {
            let components = trigger.dateComponents
            timeZone = components.timeZone
            if trigger.repeats {
                repeatInterval =
                    if components.month != nil { .year } else if components.day != nil {
                        .month
                    } else if components.weekday != nil { .weekOfYear } else if components.hour != nil {
                        .day
                    } else if components.minute != nil { .hour } else { .minute }
            }
        }
    }
}
