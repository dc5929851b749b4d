import ArgumentParser
import Foundation
import OffstageCore

/// Where `offstage explain --history --since` starts: a duration back from now (`90s`, `30m`, `2h`, `1d12h`) or a
/// date and time (`2025-01-31`, `2025-01-31T08:00`, `2025-01-31 08:00:00`, local time unless it ends in `Z` or an
/// offset such as `+02:00`).
enum HistorySince {
    /// What `--since` accepts, for error messages.
    static let accepted = "a duration such as 90s, 30m, 2h or 1d12h, or a date such as 2025-01-31 or 2025-01-31T08:00"

    /// Seconds since the Unix epoch `text` names, as seen at `now`; nil when it names nothing.
    static func parse(_ text: String, now: Date) -> Double? {
        if let seconds = duration(text) { return now.timeIntervalSince1970 - seconds }
        return date(text)?.timeIntervalSince1970
    }

    /// Seconds since the Unix epoch `text` names, checked as `option`'s value: a time in the past, after 1677.
    static func validated(_ text: String, option: String) throws -> Double {
        guard let start = parse(text, now: Date()) else {
            let unsigned = text.hasPrefix("-") ? " (a duration counts back from now: give it without a sign)" : ""
            throw ValidationError("\(option) must be \(accepted); got \(QuotedText.quote(text))\(unsigned)")
        }
        if start > Date().timeIntervalSince1970 {
            throw ValidationError(
                "\(option) \(QuotedText.quote(text)) is in the future; give a time before now, e.g. \(option) 2h")
        }
        if !CheckedNumber.instantSeconds.contains(start) {
            throw ValidationError(
                "\(option) \(QuotedText.quote(text)) reaches back before 1677, further than any history; "
                    + "give a shorter duration or a later date, e.g. \(option) 7d")
        }
        return start
    }

    /// A sum of numbers each followed by d, h, m or s (`1d12h`, `90s`, `1.5h`); nil for anything else.
    static func duration(_ text: String) -> Double? {
        let units: [Character: Double] = ["d": 86_400, "h": 3_600, "m": 60, "s": 1]
        var total = 0.0
        var number = ""
        var parts = 0
        for character in text {
            if character.isASCII && (character.isNumber || character == ".") {
                number.append(character)
            } else if let unit = units[character], let value = Double(number), value.isFinite {
                total += value * unit
                number = ""
                parts += 1
            } else {
                return nil
            }
        }
        guard number.isEmpty, parts > 0, total.isFinite else { return nil }
        return total
    }

    /// A date, with or without a time and a zone; nil for anything else.
    static func date(_ text: String) -> Date? {
        let normalized = text.replacingOccurrences(of: " ", with: "T")
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime]
        if let date = iso.date(from: normalized) { return date }
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = iso.date(from: normalized) { return date }
        let local = DateFormatter()
        local.locale = Locale(identifier: "en_US_POSIX")
        local.timeZone = .current
        for format in ["yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd"] {
            local.dateFormat = format
            if let date = local.date(from: normalized) { return date }
        }
        return nil
    }
}
