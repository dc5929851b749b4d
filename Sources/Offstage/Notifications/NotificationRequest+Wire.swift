import Foundation
import OffstageProtocol

/// The SDK's notification values and `io.offstage.Notifications` messages, both ways. What the daemon would refuse
/// and the SDK can tell on its own (a value JSON cannot hold, a repeating interval under 60 s, a date component the
/// wire has no field for) is refused here, before anything is sent, with the daemon's words.
extension NotificationRequest {
    /// The request on the wire. A request with no trigger fires at `now`.
    func message(now: Date) throws(NotificationError) -> NotificationsInterface.RequestMessage {
        NotificationsInterface.RequestMessage(
            identifier: identifier, content: try content.message(), trigger: try Self.message(of: trigger, now: now))
    }

    /// A request read from the wire.
    init(_ message: NotificationsInterface.RequestMessage) {
        self.init(
            identifier: message.identifier, content: NotificationContent(message.content),
            trigger: Self.trigger(message.trigger))
    }

    static func message(
        of trigger: (any NotificationTrigger)?, now: Date
    ) throws(NotificationError) -> NotificationsInterface.TriggerMessage {
        switch trigger {
        case nil:
            return .init(kind: "date", date: WireTime.seconds(now))
        case let trigger as TimeIntervalNotificationTrigger:
            let seconds = trigger.timeInterval
            guard seconds.isFinite, seconds > 0 else {
                throw NotificationError(
                    .invalidArgument, "time interval \(seconds) is not a positive number of seconds",
                    fix: "give a time interval greater than 0")
            }
            let minimum = TimeIntervalNotificationTrigger.minimumRepeatInterval
            if trigger.repeats, seconds < minimum {
                throw NotificationError(
                    .invalidArgument, "a repeating time interval must be at least \(Int(minimum)) s, not \(seconds) s",
                    fix: "repeat every \(Int(minimum)) s or more, or do not repeat")
            }
            return .init(kind: "timeInterval", repeats: trigger.repeats, seconds: seconds)
        case let trigger as CalendarNotificationTrigger:
            return .init(
                kind: "calendar", repeats: trigger.repeats, dateComponents: try message(of: trigger.dateComponents))
        case let trigger as DateNotificationTrigger:
            return .init(kind: "date", date: WireTime.seconds(trigger.date))
        case let trigger?:
            throw NotificationError(
                .invalidArgument, "\(type(of: trigger)) is not a trigger the system knows",
                fix: "use TimeIntervalNotificationTrigger, CalendarNotificationTrigger or DateNotificationTrigger")
        }
    }

    /// The components of a calendar trigger on the wire; a component the system does not match on is refused rather
    /// than ignored, which would fire at other times than meant.
    static func message(
        of components: DateComponents
    ) throws(NotificationError) -> NotificationsInterface.DateComponentsMessage {
        let unsupported: [(String, Int?)] = [
            ("era", components.era), ("nanosecond", components.nanosecond),
            ("weekdayOrdinal", components.weekdayOrdinal), ("quarter", components.quarter),
            ("weekOfMonth", components.weekOfMonth), ("weekOfYear", components.weekOfYear),
            ("yearForWeekOfYear", components.yearForWeekOfYear),
        ]
        if let (name, _) = unsupported.first(where: { $0.1 != nil }) {
            throw NotificationError(
                .invalidArgument, "a calendar trigger cannot match the date component \(name)",
                fix: "use year, month, day, hour, minute, second, weekday and timeZone")
        }
        if let calendar = components.calendar, calendar.identifier != .gregorian {
            throw NotificationError(
                .invalidArgument, "a calendar trigger matches Gregorian dates, not \(calendar.identifier) ones",
                fix: "leave calendar out, or use Calendar(identifier: .gregorian)")
        }
        return NotificationsInterface.DateComponentsMessage(
            year: components.year, month: components.month, day: components.day, hour: components.hour,
            minute: components.minute, second: components.second, weekday: components.weekday,
            timeZone: components.timeZone?.identifier)
    }

    static func trigger(_ message: NotificationsInterface.TriggerMessage) -> (any NotificationTrigger)? {
        switch message.kind {
        case "timeInterval":
            return TimeIntervalNotificationTrigger(
                timeInterval: message.seconds ?? 0, repeats: message.repeats ?? false)
        case "calendar":
            let wire = message.dateComponents ?? .init()
            let components = DateComponents(
                timeZone: wire.timeZone.flatMap(TimeZone.init(identifier:)), year: wire.year, month: wire.month,
                day: wire.day, hour: wire.hour, minute: wire.minute, second: wire.second, weekday: wire.weekday)
            return CalendarNotificationTrigger(dateMatching: components, repeats: message.repeats ?? false)
        case "date":
            return message.date.map { DateNotificationTrigger(date: WireTime.date($0)) }
        default:
            return nil  // a kind of a newer daemon
        }
    }
}

extension NotificationContent {
    /// The content on the wire.
    func message() throws(NotificationError) -> NotificationsInterface.ContentMessage {
        let info = try UserInfoJSON.object(userInfo)
        return NotificationsInterface.ContentMessage(
            title: title.isEmpty ? nil : title, subtitle: subtitle.isEmpty ? nil : subtitle,
            body: body.isEmpty ? nil : body, sound: sound?.name, badge: badge, userInfo: info.isEmpty ? nil : info,
            threadIdentifier: threadIdentifier.isEmpty ? nil : threadIdentifier,
            categoryIdentifier: categoryIdentifier.isEmpty ? nil : categoryIdentifier)
    }

    /// Content read from the wire.
    init(_ message: NotificationsInterface.ContentMessage) {
        self.init(
            title: message.title ?? "", subtitle: message.subtitle ?? "", body: message.body ?? "",
            sound: message.sound.map(NotificationSound.init(named:)), badge: message.badge,
            userInfo: UserInfoJSON.userInfo(message.userInfo), threadIdentifier: message.threadIdentifier ?? "",
            categoryIdentifier: message.categoryIdentifier ?? "")
    }
}

extension UserNotification {
    /// A delivered notification read from the wire.
    init(_ message: NotificationsInterface.DeliveredMessage) {
        self.init(
            date: WireTime.date(message.deliveredAt), request: NotificationRequest(message.request),
            dueDate: WireTime.date(message.due))
    }
}

extension NotificationCategory {
    /// The category on the wire.
    var message: NotificationsInterface.CategoryMessage {
        NotificationsInterface.CategoryMessage(
            identifier: identifier,
            actions: actions.map {
                NotificationsInterface.ActionMessage(
                    identifier: $0.identifier, title: $0.title, foreground: $0.options.contains(.foreground),
                    destructive: $0.options.contains(.destructive))
            })
    }
}
