/// The fields of one verified NMEA sentence and how to read each kind we use into an `NMEAEpoch`.
struct NMEASentence {
    /// The comma-separated fields; `fields[0]` is the address (`GPRMC`).
    let fields: [Substring]
    /// The sentence's 1-based line, for errors.
    let line: Int
    /// The reader, for its file name in errors.
    let reader: LocationTrack.NMEAReader

    /// Knots to metres per second, exactly (1 knot = 1852 m per hour).
    static let metresPerSecondPerKnot = 1852.0 / 3600.0

    /// RMC: time, status, position, speed, course, date. Nil for a no-fix RMC without a time.
    func rmc() throws -> NMEAEpoch? {
        try requireFields(10)
        let valid = fields[2] == "A" && !(fields.count > 12 && fields[12] == "N")
        guard let time = try timeOfDay(fields[1]) else {
            if valid { throw malformed("the RMC has a fix but no time") }
            return nil
        }
        var epoch = NMEAEpoch(line: line, timeOfDay: time)
        epoch.rmcValid = valid
        guard valid else { return epoch }
        epoch.latitude = try angle(3, degreeDigits: 2, positive: "N", negative: "S", name: "latitude")
        epoch.longitude = try angle(5, degreeDigits: 3, positive: "E", negative: "W", name: "longitude")
        epoch.speed = try number(7).map { $0 * Self.metresPerSecondPerKnot }
        epoch.course = try number(8)
        epoch.daysSinceEpoch = try date(fields[9])
        return epoch
    }

    /// GGA: time, position, quality, HDOP, altitude. Nil for a no-fix GGA without a time.
    func gga() throws -> NMEAEpoch? {
        try requireFields(10)
        let quality = Int(fields[6]) ?? 0
        guard let time = try timeOfDay(fields[1]) else {
            if quality > 0 { throw malformed("the GGA has a fix but no time") }
            return nil
        }
        var epoch = NMEAEpoch(line: line, timeOfDay: time)
        epoch.ggaQuality = quality
        guard quality > 0 else { return epoch }
        epoch.latitude = try angle(2, degreeDigits: 2, positive: "N", negative: "S", name: "latitude")
        epoch.longitude = try angle(4, degreeDigits: 3, positive: "E", negative: "W", name: "longitude")
        epoch.hdop = try number(8)
        epoch.altitude = try number(9)
        return epoch
    }

    /// GSA: fix type and the DOPs, merged into the epoch before it (it has no time).
    func gsa() throws -> NMEAEpoch {
        try requireFields(18)
        var epoch = NMEAEpoch(line: line, timeOfDay: 0)
        epoch.fixType = Int(fields[2])
        epoch.hdop = try number(16)
        // NMEA 4.10 appends a system id after VDOP; the VDOP field stays the 17th.
        epoch.vdop = try number(17)
        return epoch
    }

    /// GST: the receiver's own error estimate (standard deviations in metres). Nil without a time.
    func gst() throws -> NMEAEpoch? {
        try requireFields(9)
        guard let time = try timeOfDay(fields[1]) else { return nil }
        var epoch = NMEAEpoch(line: line, timeOfDay: time)
        if let latitude = try number(6), let longitude = try number(7) {
            epoch.horizontalSigma = (latitude * latitude + longitude * longitude).squareRoot()
        }
        epoch.verticalSigma = try number(8)
        return epoch
    }

    private func requireFields(_ count: Int) throws {
        guard fields.count >= count else {
            throw malformed("the \(fields[0].suffix(3)) has \(fields.count - 1) fields, fewer than the \(count - 1) it needs")
        }
    }

    /// The number in field `index`; nil when the field is empty.
    private func number(_ index: Int) throws -> Double? {
        let text = fields[index]
        if text.isEmpty { return nil }
        guard let value = Double(text), value.isFinite else {
            throw malformed("field \(index) \"\(text)\" of the \(fields[0].suffix(3)) is not a number")
        }
        return value
    }

    /// Degrees from `dddmm.mmmm` in field `index` and its hemisphere in the next field.
    private func angle(_ index: Int, degreeDigits: Int, positive: Substring, negative: Substring, name: String)
        throws -> Double
    {
        let text = fields[index]
        let hemisphere = fields[index + 1]
        let digits = text.prefix { $0 != "." }
        guard (3...degreeDigits + 2).contains(digits.count),
            let value = Double(text), value >= 0, hemisphere == positive || hemisphere == negative
        else {
            throw reader.error(
                .malformedCoordinate, line, "\(name) \"\(text),\(hemisphere)\" is not ddmm.mmmm with \(positive) or \(negative)",
                "the sentence is corrupt; remove the line")
        }
        let degrees = (value / 100).rounded(.down)
        let minutes = value - degrees * 100
        guard minutes < 60 else {
            throw reader.error(.malformedCoordinate, line, "\(name) \"\(text)\" has \(minutes) minutes",
                "the sentence is corrupt; remove the line")
        }
        let signed = (degrees + minutes / 60) * (hemisphere == negative ? -1 : 1)
        let limit = name == "latitude" ? 90.0 : 180.0
        guard abs(signed) <= limit else {
            throw reader.error(.coordinateOutOfRange, line, "\(name) \(signed) is outside ±\(Int(limit))",
                "the sentence is corrupt; remove the line")
        }
        return signed
    }

    /// Seconds since midnight from `hhmmss[.sss]`; nil when empty.
    private func timeOfDay(_ text: Substring) throws -> Double? {
        if text.isEmpty { return nil }
        let whole = text.prefix { $0 != "." }
        guard whole.count == 6, let hhmmss = Int(whole), let value = Double(text) else {
            throw reader.error(.malformedTime, line, "time \"\(text)\" is not hhmmss.ss",
                "the sentence is corrupt; remove the line")
        }
        let (hours, minutes, seconds) = (hhmmss / 10_000, hhmmss / 100 % 100, hhmmss % 100)
        guard hours < 24, minutes < 60, seconds <= 60 else {
            throw reader.error(.malformedTime, line, "time \"\(text)\" is not a time of day",
                "the sentence is corrupt; remove the line")
        }
        return Double(hours * 3600 + minutes * 60) + value - Double(hhmmss / 100 * 100)
    }

    /// Days since 1970-01-01 from `ddmmyy`; nil when empty. Two-digit years 80–99 are 1980–1999, the rest
    /// 2000–2079 (GPS began in 1980).
    private func date(_ text: Substring) throws -> Int? {
        if text.isEmpty { return nil }
        guard text.count == 6, let ddmmyy = Int(text) else {
            throw reader.error(.malformedTime, line, "date \"\(text)\" is not ddmmyy", "the sentence is corrupt; remove the line")
        }
        let (day, month, shortYear) = (ddmmyy / 10_000, ddmmyy / 100 % 100, ddmmyy % 100)
        let year = shortYear >= 80 ? 1900 + shortYear : 2000 + shortYear
        guard (1...12).contains(month), (1...ISO8601Time.daysIn(month: month, year: year)).contains(day) else {
            throw reader.error(.malformedTime, line, "date \"\(text)\" is not a calendar date", "the sentence is corrupt; remove the line")
        }
        return ISO8601Time.daysFromEpoch(year: year, month: month, day: day)
    }

    private func malformed(_ problem: String) -> LocationTrackError {
        reader.error(.malformedSentence, line, problem, "the sentence is corrupt; remove the line")
    }
}
