import Foundation

/// Calendar arithmetic for notification triggers: Foundation's Gregorian calendar and the IANA time zone database,
/// which know every zone's daylight-saving rules. Pure: the same inputs give the same instant (SPEC NT-1).
///
/// Across a daylight-saving change a local time may not exist (02:30 on the night clocks go forward) or exist twice
/// (02:30 on the night they go back). The first fires at the next time that exists (03:00), the second fires once, at
/// its first occurrence, as a phone's alarm does.
enum NotificationCalendar {
    /// The zone of that IANA name, or nil if there is none.
    static func zone(named name: String) -> TimeZone? {
        guard !name.isEmpty, name.utf8.count <= 64 else { return nil }
        return TimeZone(identifier: name)
    }

    /// The first instant strictly after `after` that matches, in the match's zone or else `deviceZone`; nil if none
    /// will (a year that has passed, February 30).
    static func next(after: Instant, matching match: DateMatch, deviceZone: String) -> Instant? {
        guard let zone = zone(named: match.timeZone ?? deviceZone) ?? TimeZone(identifier: "UTC") else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        var components = DateComponents()
        components.year = match.year
        components.month = match.month
        components.day = match.day
        components.hour = match.hour
        components.minute = match.minute
        // Unset smaller units match their start, as an alarm "at 07:00" means 07:00:00.
        components.second = match.second ?? (match.minute != nil || match.hour != nil ? 0 : nil)
        components.weekday = match.weekday
        if components.minute == nil, components.hour != nil { components.minute = 0 }
        if let year = match.year, year < calendar.component(.year, from: date(after)) { return nil }
        // A day no month of that kind has (the 30th of February, the 31st of April) never comes.
        let longestMonths = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        if let month = match.month, let day = match.day, day > longestMonths[month - 1] { return nil }
        var from = date(after)
        // A repeated local time (clocks going back) must not fire twice: skip a match at the same wall-clock time as
        // the instant it follows. A date that does not exist (the 31st in a 30-day month, the 29th of February in a
        // common year) is skipped too: `.nextTime` answers the first moment after it, the 1st of the next month,
        // which is not a match. Twelve tries are plenty: the next 29th of February is at most eight years away.
        let dateParts: Set<Calendar.Component> = [.year, .month, .day, .weekday]
        for _ in 0..<12 {
            guard
                let found = calendar.nextDate(
                    after: from, matching: components, matchingPolicy: .nextTime, repeatedTimePolicy: .first,
                    direction: .forward)
            else { return nil }
            let wall: Set<Calendar.Component> = [.year, .month, .day, .hour, .minute, .second]
            if calendar.dateComponents(wall, from: found) == calendar.dateComponents(wall, from: date(after)) {
                from = found
                continue
            }
            let day = calendar.dateComponents(dateParts, from: found)
            if let year = match.year, day.year != year { return nil }
            if match.month.map({ $0 != day.month }) == true || match.day.map({ $0 != day.day }) == true
                || match.weekday.map({ $0 != day.weekday }) == true
            {
                from = found
                continue
            }
            // Beyond what an instant holds (nanoseconds in 64 bits: the year 2262), it never fires.
            guard found.timeIntervalSince1970 < Self.latestSeconds else { return nil }
            return Instant(secondsSinceEpoch: found.timeIntervalSince1970.rounded())
        }
        return nil
    }

    /// The latest second an instant holds, with room to spare (the year 2255).
    static let latestSeconds: Double = 9e9

    /// Answers of ``next(after:matching:deviceZone:)`` already worked out, for a run of questions that repeat: after
    /// downtime every daily alarm at 07:00 fires at once and asks for its next time after the same instant, and a time
    /// zone change moves them all. An answer depends on the question alone, so reusing it changes nothing. At most
    /// ``capacity`` are kept: when that many are, they are forgotten and the next ones kept afresh.
    struct Answers {
        private struct Question: Hashable {
            var after: Instant
            var match: DateMatch
            var deviceZone: String
        }

        static let capacity = 4_096
        private var known: [Question: Instant?] = [:]

        /// The first instant strictly after `after` that matches, as
        /// ``NotificationCalendar/next(after:matching:deviceZone:)`` answers it.
        mutating func next(after: Instant, matching match: DateMatch, deviceZone: String) -> Instant? {
            let question = Question(after: after, match: match, deviceZone: match.timeZone == nil ? deviceZone : "")
            if let answer = known[question] { return answer }
            let answer = NotificationCalendar.next(after: after, matching: match, deviceZone: deviceZone)
            if known.count >= Self.capacity { known.removeAll(keepingCapacity: true) }
            known[question] = .some(answer)
            return answer
        }
    }

    private static func date(_ instant: Instant) -> Date {
        Date(timeIntervalSince1970: instant.secondsSinceEpoch)
    }
}
