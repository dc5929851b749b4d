import Foundation
import OffstageCore

/// The JSON of a notification request in the store: one flat object of strings, integers, numbers and booleans —
/// `{"identifier":"wake","title":"Alarm","trigger":"calendar","repeats":true,"hour":7,"minute":0}` — written and read
/// by hand.
///
/// Foundation's coders spend about 10 µs on a nested request (a container per level, metadata lookups), which with
/// 64,000 pending notifications made most of a restart (SPEC §11: recovery ≤ 500 ms). A flat object read by this
/// small reader costs a fraction of that, and stays JSON a person can read with `sqlite3`. Empty texts and absent
/// values are left out. A date trigger's instant is integer nanoseconds, so it comes back exact. Anything the reader
/// does not take (a nested value, an unknown trigger) is an error naming the row; nothing else writes these rows.
enum NotificationRequestJSON {
    /// Why a row's JSON could not be read.
    struct Unreadable: Error, CustomStringConvertible {
        var reason: String
        var description: String { "a stored notification request is not readable: \(reason)" }
    }

    // MARK: Writing

    /// The request's JSON, with a delivery's `late` after it when given.
    static func encode(_ request: NotificationRequest, late: Bool? = nil) -> String {
        var writer = members(of: request)
        if let late { writer.bool("late", late) }
        return writer.finish()
    }

    /// The JSON of a repeating request that fired: its delivery's (with `late`) and its next occurrence's, the request
    /// gone through once for both (a burst after downtime fires thousands).
    static func encode(_ request: NotificationRequest, delivered late: Bool) -> (delivery: String, next: String) {
        var next = members(of: request)
        var delivery = next
        delivery.bool("late", late)
        return (delivery.finish(), next.finish())
    }

    /// A writer holding the request's members.
    private static func members(of request: NotificationRequest) -> FlatJSONWriter {
        var writer = FlatJSONWriter()
        writer.string("identifier", request.identifier)
        let content = request.content
        writer.string("title", content.title, omitEmpty: true)
        writer.string("subtitle", content.subtitle, omitEmpty: true)
        writer.string("body", content.body, omitEmpty: true)
        if let sound = content.sound { writer.string("sound", sound) }
        if let badge = content.badge { writer.integer("badge", Int64(badge)) }
        if content.userInfo != "{}" { writer.string("userInfo", content.userInfo, omitEmpty: true) }
        writer.string("thread", content.threadIdentifier, omitEmpty: true)
        writer.string("category", content.categoryIdentifier, omitEmpty: true)
        switch request.trigger {
        case .timeInterval(let seconds, let repeats):
            writer.string("trigger", "timeInterval")
            writer.bool("repeats", repeats)
            writer.number("seconds", seconds)
        case .calendar(let match, let repeats):
            writer.string("trigger", "calendar")
            writer.bool("repeats", repeats)
            let parts: [(StaticString, Int?)] = [
                ("year", match.year), ("month", match.month), ("day", match.day), ("hour", match.hour),
                ("minute", match.minute), ("second", match.second), ("weekday", match.weekday),
            ]
            for case (let name, let value?) in parts { writer.integer(name, Int64(value)) }
            if let zone = match.timeZone { writer.string("timeZone", zone) }
        case .date(let instant):
            writer.string("trigger", "date")
            writer.integer("date", instant.nanosecondsSinceEpoch)
        }
        return writer
    }

    // MARK: Reading

    /// The members a request's JSON may have.
    private struct Members {
        var identifier, title, subtitle, body, sound, userInfo, thread, category, trigger, timeZone: String?
        var badge, date, year, month, day, hour, minute, second, weekday: Int64?
        var seconds: Double?
        var repeats, late: Bool?

        /// Takes one member; an unknown key is passed over, a value of the wrong type is an error naming it.
        mutating func take(_ key: String, _ value: FlatJSONReader.Value) throws(Unreadable) {
            func text() throws(Unreadable) -> String? {
                switch value {
                case .string(let text): return text
                case .null: return nil
                default: throw Unreadable(reason: "\(key) is not a string")
                }
            }
            func integer() throws(Unreadable) -> Int64? {
                switch value {
                case .integer(let number): return number
                case .null: return nil
                default: throw Unreadable(reason: "\(key) is not an integer")
                }
            }
            switch key {
            case "identifier": identifier = try text()
            case "title": title = try text()
            case "subtitle": subtitle = try text()
            case "body": body = try text()
            case "sound": sound = try text()
            case "userInfo": userInfo = try text()
            case "thread": thread = try text()
            case "category": category = try text()
            case "trigger": trigger = try text()
            case "timeZone": timeZone = try text()
            case "badge": badge = try integer()
            case "date": date = try integer()
            case "year": year = try integer()
            case "month": month = try integer()
            case "day": day = try integer()
            case "hour": hour = try integer()
            case "minute": minute = try integer()
            case "second": second = try integer()
            case "weekday": weekday = try integer()
            case "seconds":
                switch value {
                case .integer(let number): seconds = Double(number)
                case .number(let number): seconds = number
                case .null: seconds = nil
                default: throw Unreadable(reason: "seconds is not a number")
                }
            case "repeats", "late":
                let flag: Bool?
                switch value {
                case .bool(let value): flag = value
                case .null: flag = nil
                default: throw Unreadable(reason: "\(key) is not a boolean")
                }
                if key == "late" { late = flag } else { repeats = flag }
            default: break
            }
        }
    }

    /// The request in `text`, and its `late` member if it has one.
    static func decode(_ text: String) throws(Unreadable) -> (request: NotificationRequest, late: Bool?) {
        var text = text
        var members = Members()
        let read = text.withUTF8 { bytes in
            Result { () throws(Unreadable) in
                try FlatJSONReader.read(UnsafeRawBufferPointer(bytes)) { key, value throws(Unreadable) in
                    try members.take(key, value)
                }
            }
        }
        try read.get()
        func int(_ value: Int64?, _ key: String) throws(Unreadable) -> Int? {
            guard let value else { return nil }
            guard let small = Int(exactly: value), abs(small) <= Int(Int32.max) else {
                throw Unreadable(reason: "\(key) is out of range")
            }
            return small
        }
        guard let identifier = members.identifier else { throw Unreadable(reason: "no identifier") }
        let content = NotificationContent(
            title: members.title ?? "", subtitle: members.subtitle ?? "", body: members.body ?? "", sound: members.sound,
            badge: try int(members.badge, "badge"), userInfo: members.userInfo ?? "{}",
            threadIdentifier: members.thread ?? "", categoryIdentifier: members.category ?? "")
        let repeats = members.repeats ?? false
        let trigger: NotificationTrigger
        switch members.trigger {
        case "timeInterval":
            guard let seconds = members.seconds else { throw Unreadable(reason: "a timeInterval trigger without seconds") }
            trigger = .timeInterval(seconds: seconds, repeats: repeats)
        case "calendar":
            let match = DateMatch(
                year: try int(members.year, "year"), month: try int(members.month, "month"), day: try int(members.day, "day"),
                hour: try int(members.hour, "hour"), minute: try int(members.minute, "minute"),
                second: try int(members.second, "second"), weekday: try int(members.weekday, "weekday"),
                timeZone: members.timeZone)
            trigger = .calendar(match, repeats: repeats)
        case "date":
            guard let date = members.date else { throw Unreadable(reason: "a date trigger without date") }
            trigger = .date(Instant(nanosecondsSinceEpoch: date))
        case let other:
            throw Unreadable(reason: "trigger \(other.map { QuotedText.quote($0) } ?? "missing")")
        }
        return (NotificationRequest(identifier: identifier, content: content, trigger: trigger), members.late)
    }
}
