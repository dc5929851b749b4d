import OffstageCore

extension Instant {
    /// Parses an ISO 8601 UTC timestamp such as `2019-10-15T14:53:27.619Z` exactly (to the nanosecond, with no
    /// floating point): date, `T`, time, an optional fraction of up to nine digits, and `Z`. Returns nil for
    /// anything else (other offsets are not accepted).
    public init?(iso8601 text: String) {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ digits: Int) -> Int64? {
            guard index + digits <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[index..<(index + digits)] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            index += digits
            return value
        }
        func expect(_ character: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == character else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect(UInt8(ascii: "-")), let month = number(2), expect(UInt8(ascii: "-")),
            let day = number(2), expect(UInt8(ascii: "T")), let hour = number(2), expect(UInt8(ascii: ":")),
            let minute = number(2), expect(UInt8(ascii: ":")), let second = number(2)
        else { return nil }
        var nanoseconds: Int64 = 0
        if expect(UInt8(ascii: ".")) {
            var digits = 0
            while index < bytes.count, (48...57).contains(bytes[index]) {
                guard digits < 9 else { return nil }
                nanoseconds = nanoseconds * 10 + Int64(bytes[index] - 48)
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<9 { nanoseconds *= 10 }
        }
        guard expect(UInt8(ascii: "Z")), index == bytes.count else { return nil }
        guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        let days = Instant.daysFromCivil(year: year, month: month, day: day)
        let seconds = ((days * 24 + hour) * 60 + minute) * 60 + second
        self.init(nanosecondsSinceEpoch: seconds * 1_000_000_000 + nanoseconds)
    }

    /// Days from 1970-01-01 to the given proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
