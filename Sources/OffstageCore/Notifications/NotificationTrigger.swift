/// When a local notification fires (SPEC NT-1): the triggers of `UNTimeIntervalNotificationTrigger`,
/// `UNCalendarNotificationTrigger` and `UILocalNotification.fireDate`.
public enum NotificationTrigger: Hashable, Sendable, Codable {
    /// `seconds` after the request is added; with `repeats`, every `seconds` after that (at least 60 s).
    case timeInterval(seconds: Double, repeats: Bool)
    /// The next time matching the components, in their time zone (the device's when they name none, following it
    /// when it changes); with `repeats`, every time they match.
    case calendar(DateMatch, repeats: Bool)
    /// Once, at an absolute instant (a `fireDate` with no time zone).
    case date(Instant)

    /// Whether it fires more than once.
    public var repeats: Bool {
        switch self {
        case .timeInterval(_, let repeats), .calendar(_, let repeats): repeats
        case .date: false
        }
    }

    /// Whether its next time depends on the device's time zone.
    public var followsDeviceTimeZone: Bool {
        if case .calendar(let match, _) = self { return match.timeZone == nil }
        return false
    }

    /// A short text for logs and the CLI: `in 60 s`, `every 3600 s`, `daily 07:00 Europe/Berlin`, `at 2026-…`.
    public var summary: String {
        switch self {
        case .timeInterval(let seconds, let repeats):
            let shown = CheckedNumber.text(seconds)
            return repeats ? "every \(shown) s" : "in \(shown) s"
        case .calendar(let match, let repeats): return (repeats ? "repeating " : "once ") + match.summary
        case .date(let instant): return "at \(instant)"
        }
    }

    /// The trigger, or what is wrong with it.
    func validated(minimumRepeatInterval: Double) throws(CoreError) -> NotificationTrigger {
        switch self {
        case .timeInterval(let seconds, let repeats):
            guard seconds.isFinite, seconds > 0 else {
                throw CoreError(
                    .invalidArgument, "time interval \(seconds) is not a positive number of seconds",
                    fix: "give a time interval greater than 0")
            }
            if repeats, seconds < minimumRepeatInterval {
                throw CoreError(
                    .invalidArgument,
                    "a repeating time interval must be at least \(Int(minimumRepeatInterval)) s, not \(seconds) s",
                    fix: "repeat every \(Int(minimumRepeatInterval)) s or more, or do not repeat")
            }
            guard seconds <= 3_155_760_000 else {
                throw CoreError(.invalidArgument, "time interval \(seconds) s is more than a century", fix: "give a shorter interval")
            }
        case .calendar(let match, _):
            try match.validate()
        case .date:
            break
        }
        return self
    }
}

/// Date components a calendar trigger matches (`DateComponents` of `UNCalendarNotificationTrigger`): the ones given
/// must all match; the others may be anything. Weekday 1 is Sunday, as in the Gregorian calendar of Foundation.
public struct DateMatch: Hashable, Sendable, Codable {
    public var year: Int?
    public var month: Int?
    public var day: Int?
    public var hour: Int?
    public var minute: Int?
    public var second: Int?
    /// 1 (Sunday) to 7 (Saturday).
    public var weekday: Int?
    /// An IANA time zone name (`Europe/Berlin`); nil for the device's time zone, whatever it is when the time comes.
    public var timeZone: String?

    /// Creates components; give at least one.
    public init(
        year: Int? = nil, month: Int? = nil, day: Int? = nil, hour: Int? = nil, minute: Int? = nil, second: Int? = nil,
        weekday: Int? = nil, timeZone: String? = nil
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

    /// `2026-11-24 07:00 Europe/Berlin`, `*-*-* 07:00:00 weekday 2`: the components given, `*` for the others.
    public var summary: String {
        func part(_ value: Int?, _ width: Int) -> String {
            guard let value else { return "*" }
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        var text = "\(part(year, 4))-\(part(month, 2))-\(part(day, 2)) \(part(hour, 2)):\(part(minute, 2))"
        text += ":" + part(second, 2)
        if let weekday { text += " weekday \(weekday)" }
        return text + " " + (timeZone ?? "device time zone")
    }

    func validate() throws(CoreError) {
        let ranges: [(String, Int?, ClosedRange<Int>)] = [
            // An instant holds nanoseconds in 64 bits, up to the year 2262: a year past 2200 is refused, not a crash.
            ("year", year, 1970...2200), ("month", month, 1...12), ("day", day, 1...31), ("hour", hour, 0...23),
            ("minute", minute, 0...59), ("second", second, 0...59), ("weekday", weekday, 1...7),
        ]
        var given = 0
        for (name, value, range) in ranges {
            guard let value else { continue }
            given += 1
            guard range.contains(value) else {
                throw CoreError(
                    .invalidArgument, "\(name) \(value) is out of range",
                    fix: "give a \(name) from \(range.lowerBound) to \(range.upperBound)")
            }
        }
        guard given > 0 else {
            throw CoreError(
                .invalidArgument, "the calendar trigger has no date components",
                fix: "give at least one of year, month, day, hour, minute, second or weekday")
        }
        if let timeZone, NotificationCalendar.zone(named: timeZone) == nil {
            throw CoreError(
                .invalidArgument, "\(QuotedText.quote(timeZone)) is not a time zone",
                fix: "use an IANA time zone name such as Europe/Berlin or America/New_York, or none for the device's")
        }
    }
}
