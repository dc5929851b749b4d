import OffstageCore
import Testing

/// Numbers a caller chose become instants, durations and integers through checked conversions that refuse them by
/// name; the unchecked ones saturate instead of trapping (SPEC §11: malformed input on every interface gets a clear
/// error and changes nothing — and a process that traps changes everything).
@Suite("Checked numbers (SPEC §11 malformed input)")
struct CheckedNumberTests {
    static let hostile: [Double] = [.nan, .infinity, -.infinity, 1e308, -1e308, 9.3e18, -9.3e18, .greatestFiniteMagnitude]

    @Test("§11: an instant or a duration made from any Double saturates at its bounds instead of trapping; NaN is zero")
    func uncheckedConversionsSaturate() {
        #expect(Instant(secondsSinceEpoch: 1e308).nanosecondsSinceEpoch == .max)
        #expect(Instant(secondsSinceEpoch: -1e308).nanosecondsSinceEpoch == .min)
        #expect(Instant(secondsSinceEpoch: .infinity).nanosecondsSinceEpoch == .max)
        #expect(Instant(secondsSinceEpoch: .nan) == .epoch)
        #expect(Instant(secondsSinceEpoch: 1.5).nanosecondsSinceEpoch == 1_500_000_000)
        #expect(Duration.seconds(double: 1e308).nanoseconds == .max)
        #expect(Duration.seconds(double: -.infinity).nanoseconds == .min)
        #expect(Duration.seconds(double: .nan) == .zero)
        #expect(Int64(saturating: 9_223_372_036_854_775_807.0) == .max, "2^63 is past Int64.max")
        #expect(Int64(saturating: -9_223_372_036_854_775_808.0) == .min)
        #expect(Int64(saturating: 2.5) == 3 && Int64(saturating: -2.5) == -3)
    }

    @Test("§11: arithmetic on instants saturates: a deadline a century after 2200 is the last instant, not one in 1678")
    func instantArithmeticSaturates() {
        let late = Instant(nanosecondsSinceEpoch: .max - 10)
        #expect((late + .seconds(1)).nanosecondsSinceEpoch == .max)
        #expect((Instant(nanosecondsSinceEpoch: .min + 10) - .seconds(1)).nanosecondsSinceEpoch == .min)
        #expect((late + .seconds(-1)) < late)
        #expect(Instant(nanosecondsSinceEpoch: .max) - Instant(nanosecondsSinceEpoch: .min) == .nanoseconds(Int64.max))
        #expect(Instant(nanosecondsSinceEpoch: .min) - Instant(nanosecondsSinceEpoch: .max) == .nanoseconds(Int64.min))
        #expect(Instant(nanosecondsSinceEpoch: 5) - Instant(nanosecondsSinceEpoch: 2) == .nanoseconds(3))
    }

    @Test("§11: a checked instant refuses NaN, infinities and dates past 2262 or before 1677, naming field and range",
          arguments: hostile + [253_402_300_800])
    func checkedInstantRefuses(seconds: Double) {
        #expect(throws: NumberOutOfRange.self) { try CheckedNumber.instant(secondsSinceEpoch: seconds, field: "since") }
        do {
            _ = try CheckedNumber.instant(secondsSinceEpoch: seconds, field: "since")
        } catch {
            #expect(error.field == "since")
            #expect(error.description.hasPrefix("since is "), "\(error)")
            #expect(error.description.contains("seconds since the Unix epoch from -9223372035 to 9223372035"), "\(error)")
            #expect(error.fix.hasPrefix("give since as a number of seconds since the Unix epoch"))
        }
    }

    @Test("§11: a checked instant inside the range is exact")
    func checkedInstantAccepts() throws {
        #expect(try CheckedNumber.instant(secondsSinceEpoch: 1_767_225_600.5, field: "t").nanosecondsSinceEpoch
            == 1_767_225_600_500_000_000)
        #expect(try CheckedNumber.instant(secondsSinceEpoch: -9_223_372_035, field: "t") < .epoch)
        #expect(throws: NumberOutOfRange.self) {
            try CheckedNumber.instant(secondsSinceEpoch: 10, field: "t", in: 100 ... 200)
        }
    }

    @Test("§11: a checked duration refuses NaN, infinities, negatives and more than a century, naming the range",
          arguments: hostile + [-1, 3.2e9])
    func checkedDurationRefuses(seconds: Double) {
        do {
            _ = try CheckedNumber.duration(seconds: seconds, field: "seconds")
            Issue.record("\(seconds) was accepted")
        } catch {
            #expect(error.description.contains("a number of seconds from 0 to 3155760000"), "\(error)")
        }
    }

    @Test("§11: a checked integer refuses values its type or its range cannot hold")
    func checkedIntegers() throws {
        #expect(try CheckedNumber.integer(8080, field: "port", in: 1 ... UInt16.max) == 8080)
        for bad in [0, 65_536, -1, Int.max, Int.min] {
            do {
                _ = try CheckedNumber.integer(bad, field: "port", in: 1 ... UInt16.max)
                Issue.record("\(bad) was accepted")
            } catch {
                #expect(error.description == "port is \(bad), out of range; give a whole number from 1 to 65535")
            }
        }
    }

    @Test("§11: a core error made from a number out of range is invalidArgument with the field and the fix")
    func coreErrorFromNumber() {
        let error = CoreError(NumberOutOfRange(field: "seconds", value: "1e+308", expected: "a number of seconds from 600 to 9"))
        #expect(error.code == .invalidArgument)
        #expect(error.message == "seconds is 1e+308, out of range")
        #expect(error.fix == "give seconds as a number of seconds from 600 to 9")
    }

    @Test("§11: a notification trigger's summary prints any interval without trapping")
    func triggerSummaryOfHugeInterval() {
        #expect(NotificationTrigger.timeInterval(seconds: 1e308, repeats: false).summary == "in 1e+308 s")
        #expect(NotificationTrigger.timeInterval(seconds: 60, repeats: true).summary == "every 60 s")
        #expect(NotificationTrigger.timeInterval(seconds: .nan, repeats: true).summary == "every nan s")
    }
}
