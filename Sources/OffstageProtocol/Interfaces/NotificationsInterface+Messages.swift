import Foundation
import OffstageCore

/// The notification types on the wire, and their conversions to the core's. Times are seconds since the Unix epoch;
/// due times are whole milliseconds (the core rounds them so), so one read back from a float names the same firing.
extension NotificationsInterface {
    /// The instant of a due time read from the wire: whole milliseconds, as the core makes every due time. Saturates
    /// like ``OffstageCore/Instant/init(secondsSinceEpoch:)``; a due time a caller gives is checked first
    /// (``OffstageCore/CheckedNumber``).
    public static func dueInstant(_ seconds: Double) -> Instant {
        let milliseconds = Int64(saturating: seconds * 1000)
        let (nanoseconds, overflow) = milliseconds.multipliedReportingOverflow(by: 1_000_000)
        return Instant(nanosecondsSinceEpoch: overflow ? (milliseconds < 0 ? .min : .max) : nanoseconds)
    }

    /// What a notification shows, on the wire.
    public struct ContentMessage: Codable, Hashable, Sendable {
        public var title: String?
        public var subtitle: String?
        public var body: String?
        public var sound: String?
        public var badge: Int?
        public var userInfo: [String: JSONValue]?
        public var threadIdentifier: String?
        public var categoryIdentifier: String?

        public init(
            title: String? = nil, subtitle: String? = nil, body: String? = nil, sound: String? = nil, badge: Int? = nil,
            userInfo: [String: JSONValue]? = nil, threadIdentifier: String? = nil, categoryIdentifier: String? = nil
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

        /// The wire form of core content (the user info is parsed back from its JSON text).
        public init(_ content: NotificationContent) {
            let info =
                Self.hasUserInfo(content.userInfo)
                ? try? JSONDecoder().decode([String: JSONValue].self, from: Data(content.userInfo.utf8)) : nil
            self.init(
                title: content.title.isEmpty ? nil : content.title,
                subtitle: content.subtitle.isEmpty ? nil : content.subtitle,
                body: content.body.isEmpty ? nil : content.body, sound: content.sound, badge: content.badge,
                userInfo: info?.isEmpty == false ? info : nil,
                threadIdentifier: content.threadIdentifier.isEmpty ? nil : content.threadIdentifier,
                categoryIdentifier: content.categoryIdentifier.isEmpty ? nil : content.categoryIdentifier)
        }

        /// Whether the core's user info text holds anything: not empty, nor an object with no members (`{}`, as
        /// the core keeps "none").
        static func hasUserInfo(_ text: String) -> Bool {
            var inside = false
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\t"), UInt8(ascii: "\r"): continue
                case UInt8(ascii: "{") where !inside: inside = true
                case UInt8(ascii: "}") where inside: return false
                default: return true
                }
            }
            return false
        }

        /// The core's content; the user info becomes JSON text with sorted keys.
        public func content() throws(CoreError) -> NotificationContent {
            var text = "{}"
            if let userInfo, !userInfo.isEmpty {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                guard let data = try? encoder.encode(userInfo) else {
                    throw CoreError(.invalidArgument, "the user info cannot be written as JSON", fix: "use plain JSON values")
                }
                text = String(decoding: data, as: UTF8.self)
            }
            return NotificationContent(
                title: title ?? "", subtitle: subtitle ?? "", body: body ?? "", sound: sound, badge: badge, userInfo: text,
                threadIdentifier: threadIdentifier ?? "", categoryIdentifier: categoryIdentifier ?? "")
        }
    }

    /// Date components of a calendar trigger, on the wire.
    public struct DateComponentsMessage: Codable, Hashable, Sendable {
        public var year: Int?
        public var month: Int?
        public var day: Int?
        public var hour: Int?
        public var minute: Int?
        public var second: Int?
        public var weekday: Int?
        public var timeZone: String?

        public init(
            year: Int? = nil, month: Int? = nil, day: Int? = nil, hour: Int? = nil, minute: Int? = nil,
            second: Int? = nil, weekday: Int? = nil, timeZone: String? = nil
        ) {
            self.year = year
            self.month = month
            self.day = day
            self.hour = hour
            self.minute = minute
            self.second = second
            self.weekday = weekday
            self.timeZone = timeZone
        }

        /// The wire form of a core match.
        public init(_ match: DateMatch) {
            self.init(
                year: match.year, month: match.month, day: match.day, hour: match.hour, minute: match.minute,
                second: match.second, weekday: match.weekday, timeZone: match.timeZone)
        }

        /// The core's match.
        public var match: DateMatch {
            DateMatch(
                year: year, month: month, day: day, hour: hour, minute: minute, second: second, weekday: weekday,
                timeZone: timeZone)
        }
    }

    /// A trigger on the wire.
    public struct TriggerMessage: Codable, Hashable, Sendable {
        /// `timeInterval`, `calendar` or `date`.
        public var kind: String
        public var repeats: Bool?
        public var seconds: Double?
        public var dateComponents: DateComponentsMessage?
        public var date: Double?

        public init(
            kind: String, repeats: Bool? = nil, seconds: Double? = nil, dateComponents: DateComponentsMessage? = nil,
            date: Double? = nil
        ) {
            self.kind = kind
            self.repeats = repeats
            self.seconds = seconds
            self.dateComponents = dateComponents
            self.date = date
        }

        /// The wire form of a core trigger.
        public init(_ trigger: NotificationTrigger) {
            switch trigger {
            case .timeInterval(let seconds, let repeats): self.init(kind: "timeInterval", repeats: repeats, seconds: seconds)
            case .calendar(let match, let repeats):
                self.init(kind: "calendar", repeats: repeats, dateComponents: DateComponentsMessage(match))
            case .date(let instant): self.init(kind: "date", date: instant.secondsSinceEpoch)
            }
        }

        /// The core's trigger, or what is wrong with the message.
        public func trigger() throws(CoreError) -> NotificationTrigger {
            switch kind {
            case "timeInterval":
                guard let seconds else {
                    throw CoreError(.invalidArgument, "a timeInterval trigger needs seconds", fix: "give seconds, for example 60")
                }
                return .timeInterval(seconds: seconds, repeats: repeats ?? false)
            case "calendar":
                guard let dateComponents else {
                    throw CoreError(
                        .invalidArgument, "a calendar trigger needs dateComponents",
                        fix: "give dateComponents, for example {\"hour\": 7, \"minute\": 0}")
                }
                return .calendar(dateComponents.match, repeats: repeats ?? false)
            case "date":
                guard let date else {
                    throw CoreError(
                        .invalidArgument, "a date trigger needs date, in seconds since the Unix epoch",
                        fix: "give date, for example \(Int(Date().timeIntervalSince1970) + 60)")
                }
                try CoreError.checking { () throws(NumberOutOfRange) in
                    try CheckedNumber.instant(secondsSinceEpoch: date, field: "date")
                }
                if repeats == true {
                    throw CoreError(
                        .invalidArgument, "a date trigger cannot repeat",
                        fix: "use a calendar trigger with the components that repeat")
                }
                return .date(NotificationsInterface.dueInstant(date))
            default:
                throw CoreError(
                    .invalidArgument, "\(QuotedText.quote(kind)) is not a trigger kind",
                    fix: "use timeInterval, calendar or date")
            }
        }
    }

    /// A request on the wire.
    public struct RequestMessage: Codable, Hashable, Sendable {
        public var identifier: String
        public var content: ContentMessage
        public var trigger: TriggerMessage

        public init(identifier: String, content: ContentMessage, trigger: TriggerMessage) {
            self.identifier = identifier
            self.content = content
            self.trigger = trigger
        }

        /// The wire form of a core request.
        public init(_ request: NotificationRequest) {
            self.init(
                identifier: request.identifier, content: ContentMessage(request.content),
                trigger: TriggerMessage(request.trigger))
        }

        /// The core's request, or what is wrong with the message.
        public func request() throws(CoreError) -> NotificationRequest {
            NotificationRequest(identifier: identifier, content: try content.content(), trigger: try trigger.trigger())
        }
    }

    /// A pending request on the wire.
    public struct PendingMessage: Codable, Hashable, Sendable {
        public var request: RequestMessage
        public var addedAt: Double
        public var due: Double

        public init(request: RequestMessage, addedAt: Double, due: Double) {
            self.request = request
            self.addedAt = addedAt
            self.due = due
        }

        /// The wire form of a core pending request.
        public init(_ pending: PendingNotification) {
            self.init(
                request: RequestMessage(pending.request), addedAt: pending.addedAt.secondsSinceEpoch,
                due: pending.due.secondsSinceEpoch)
        }
    }

    /// A delivered notification on the wire.
    public struct DeliveredMessage: Codable, Hashable, Sendable {
        public var request: RequestMessage
        public var due: Double
        public var deliveredAt: Double
        public var late: Bool
        public var route: String

        public init(request: RequestMessage, due: Double, deliveredAt: Double, late: Bool, route: String) {
            self.request = request
            self.due = due
            self.deliveredAt = deliveredAt
            self.late = late
            self.route = route
        }

        /// The wire form of a core record.
        public init(_ record: DeliveredNotification) {
            self.init(
                request: RequestMessage(record.request), due: record.due.secondsSinceEpoch,
                deliveredAt: record.deliveredAt.secondsSinceEpoch, late: record.late, route: record.route.rawValue)
        }
    }

    /// An action of a category on the wire.
    public struct ActionMessage: Codable, Hashable, Sendable {
        public var identifier: String
        public var title: String
        public var foreground: Bool?
        public var destructive: Bool?

        public init(identifier: String, title: String, foreground: Bool? = nil, destructive: Bool? = nil) {
            self.identifier = identifier
            self.title = title
            self.foreground = foreground
            self.destructive = destructive
        }
    }

    /// A category on the wire.
    public struct CategoryMessage: Codable, Hashable, Sendable {
        public var identifier: String
        public var actions: [ActionMessage]

        public init(identifier: String, actions: [ActionMessage]) {
            self.identifier = identifier
            self.actions = actions
        }

        /// The wire form of a core category.
        public init(_ category: NotificationCategory) {
            self.init(
                identifier: category.identifier,
                actions: category.actions.map {
                    ActionMessage(identifier: $0.identifier, title: $0.title, foreground: $0.foreground, destructive: $0.destructive)
                })
        }

        /// The core's category.
        public var category: NotificationCategory {
            NotificationCategory(
                identifier: identifier,
                actions: actions.map {
                    NotificationActionButton(
                        identifier: $0.identifier, title: $0.title, foreground: $0.foreground ?? false,
                        destructive: $0.destructive ?? false)
                })
        }
    }
}
