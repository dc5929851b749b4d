/// A number that crossed an interface (a Varlink parameter, a CLI argument, a setting, a push header, a manifest) and
/// cannot be used as given: NaN, an infinity, or outside the range its field allows.
///
/// Every such number becomes an `Instant`, a `Duration` or an integer through one of the checked conversions below,
/// never through `Int64(_:)` or ``Duration/seconds(double:)`` directly, so that no value a caller chose can trap the
/// process that reads it. The error names the field, says what the value was and what range it must fall in; each
/// shell turns it into its own error (`InvalidParameter` on Varlink, a usage error in the CLI).
public struct NumberOutOfRange: Error, Hashable, Sendable, CustomStringConvertible {
    /// The field as the caller wrote it (`seconds`, `request.earliestBegin`, `--since`).
    public var field: String
    /// The value the caller gave, as text (`1e+308`, `nan`, `-5`).
    public var value: String
    /// What the field holds, with its range: "a number of seconds from 600 to 3155760000".
    public var expected: String

    /// Creates the error.
    public init(field: String, value: String, expected: String) {
        self.field = field
        self.value = value
        self.expected = expected
    }

    /// "seconds is 1e+308, out of range; give a number of seconds from 600 to 3155760000".
    public var description: String { "\(field) is \(value), out of range; give \(expected)" }

    /// What to do about it, for errors that carry the fix apart from the message.
    public var fix: String { "give \(field) as \(expected)" }
}

/// Checked conversions of numbers that callers chose (see ``NumberOutOfRange``).
public enum CheckedNumber {
    /// The seconds since the Unix epoch an ``Instant`` can hold: about 1677-09-22 to 2262-04-11, one second inside the
    /// nanosecond bounds so that conversions back and forth never meet them.
    public static let instantSeconds: ClosedRange<Double> = -9_223_372_035 ... 9_223_372_035

    /// The longest duration a caller may give, in seconds: 100 years (a `Duration` in nanoseconds holds 292).
    public static let longestDuration: Double = 100 * 365.25 * 86_400

    /// `seconds` as an instant, or ``NumberOutOfRange`` when it is not finite or outside `range`.
    public static func instant(
        secondsSinceEpoch seconds: Double, field: String, in range: ClosedRange<Double> = instantSeconds
    ) throws(NumberOutOfRange) -> Instant {
        let range = range.clamped(to: instantSeconds)
        guard seconds.isFinite, range.contains(seconds) else {
            throw NumberOutOfRange(
                field: field, value: text(seconds),
                expected: "a number of seconds since the Unix epoch from \(text(range.lowerBound)) to \(text(range.upperBound))")
        }
        return Instant(secondsSinceEpoch: seconds)
    }

    /// `seconds` as a duration, or ``NumberOutOfRange`` when it is not finite or outside `range` (by default, zero to
    /// ``longestDuration``).
    public static func duration(
        seconds: Double, field: String, in range: ClosedRange<Double> = 0 ... longestDuration
    ) throws(NumberOutOfRange) -> Duration {
        try finite(seconds, field: field, in: range.clamped(to: -longestDuration ... longestDuration), unit: "seconds")
        return .seconds(double: seconds)
    }

    /// `value` itself, or ``NumberOutOfRange`` when it is not finite or outside `range`; `unit` names what it counts
    /// ("metres", "times real time").
    @discardableResult
    public static func finite(
        _ value: Double, field: String, in range: ClosedRange<Double>, unit: String
    ) throws(NumberOutOfRange) -> Double {
        guard value.isFinite, range.contains(value) else {
            throw NumberOutOfRange(
                field: field, value: text(value),
                expected: "a number of \(unit) from \(text(range.lowerBound)) to \(text(range.upperBound))")
        }
        return value
    }

    /// `value` converted to `T`, or ``NumberOutOfRange`` when it is outside `range` (or outside what `T` holds).
    public static func integer<T: FixedWidthInteger>(
        _ value: some BinaryInteger, field: String, in range: ClosedRange<T>
    ) throws(NumberOutOfRange) -> T {
        guard let converted = T(exactly: value), range.contains(converted) else {
            throw NumberOutOfRange(
                field: field, value: String(value), expected: "a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return converted
    }

    /// A number as a person would write it back: whole numbers without ".0", others in Swift's shortest form.
    static func text(_ value: Double) -> String {
        guard value.isFinite, value == value.rounded(), abs(value) < 1e15 else { return String(value) }
        return String(Int64(value))
    }
}

extension KeyedDecodingContainer {
    /// The number under `key` in a settings file, if present, checked against `range` (``CheckedNumber/finite(_:field:in:unit:)``);
    /// out of it, a `DecodingError` naming the key and the range ("must be a number of seconds from 0 to 3600").
    public func decodeNumberIfPresent(forKey key: Key, in range: ClosedRange<Double>, unit: String) throws -> Double? {
        guard let value = try decodeIfPresent(Double.self, forKey: key) else { return nil }
        do throws(NumberOutOfRange) {
            return try CheckedNumber.finite(value, field: key.stringValue, in: range, unit: unit)
        } catch {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "must be \(error.expected)")
        }
    }

    /// The whole number under `key` in a settings file, if present, checked against `range`
    /// (``CheckedNumber/integer(_:field:in:)``); out of it, a `DecodingError` naming the key and the range.
    public func decodeIntegerIfPresent<T: FixedWidthInteger & Decodable>(
        _ type: T.Type, forKey key: Key, in range: ClosedRange<T>
    ) throws -> T? {
        guard let value = try decodeIfPresent(T.self, forKey: key) else { return nil }
        do throws(NumberOutOfRange) {
            return try CheckedNumber.integer(value, field: key.stringValue, in: range)
        } catch {
            throw DecodingError.dataCorruptedError(forKey: key, in: self, debugDescription: "must be \(error.expected)")
        }
    }
}
