import Foundation
import OffstageCore
import Testing

/// App A, suspended in the background with `requests` pending (added while it was in front at `start`), on a device
/// whose time zone is `zone`: every firing goes to the user, and the bench records its due time.
func suspendedWith(
    _ requests: [NotificationRequest], zone: String, start: Instant = benchStart,
    configuration: CoreConfiguration = .init()
) -> NotificationBench {
    var bench = NotificationBench(configuration: configuration, timeZone: zone, start: start)
    bench.install(appA)
    bench.open(appA)
    for request in requests {
        if case .failure(let error) = bench.add(appA, request) {
            Issue.record("\(request.identifier) refused: \(error)")
        }
    }
    bench.home()
    bench.advance(by: .seconds(2))
    #expect(bench.state(appA) == .suspended)
    return bench
}

/// The days from `first` on, `count` of them, as `yyyy-MM-dd` in `zone`.
func days(from first: String, count: Int, in zone: String) -> [String] {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: zone)!
    let start = Date(timeIntervalSince1970: localInstant(first + "T12:00:00", zone).secondsSinceEpoch)
    return (0..<count).map { offset in
        let day = calendar.date(byAdding: .day, value: offset, to: start)!
        return String(localText(Instant(secondsSinceEpoch: day.timeIntervalSince1970), zone).prefix(10))
    }
}

/// Calendar, time-interval and date triggers (SPEC NT-1): when each fires, on the device's wall clock and across its
/// daylight-saving changes and time zone changes, checked on virtual time over whole years.
@Suite("Notification triggers (SPEC NT-1)")
struct NotificationTriggerTests {
    static let dstZones = ["Europe/Berlin", "America/New_York"]

    @Test(
        "NT-1: every day at 07:00 fires at 07:00 local through both DST changes; the UTC instant moves an hour",
        arguments: dstZones)
    func dailyAlarmAcrossDaylightSaving(zone: String) {
        let alarm = notification("alarm", .calendar(DateMatch(hour: 7, minute: 0), repeats: true))
        var bench = suspendedWith([alarm], zone: zone)
        bench.advance(to: localInstant("2026-12-31T23:00:00", zone))
        let dues = bench.dueTimes(appA, "alarm")
        // Added at 2026-01-01 12:00 UTC, 13:00 in Berlin and exactly 07:00 in New York: the next 07:00 after it is on
        // the 2nd, then one every day of the year.
        let expected = days(from: "2026-01-02", count: 364, in: zone).map { $0 + "T07:00:00" }
        #expect(dues.map { localText($0, zone) } == expected)
        // Winter and summer time: two different UTC hours, an hour apart.
        let utcHours = Set(dues.map { Int($0.secondsSinceEpoch.truncatingRemainder(dividingBy: 86_400)) / 3_600 })
        #expect(utcHours.count == 2 && utcHours.max()! - utcHours.min()! == 1, "\(utcHours)")
        // The nights the clocks change, the day is 23 or 25 hours long; every other day 24.
        let gaps = zip(dues.dropFirst(), dues).map { Int(($0 - $1).inSeconds) / 3_600 }
        #expect(gaps.filter { $0 == 23 }.count == 1 && gaps.filter { $0 == 25 }.count == 1)
        #expect(gaps.filter { $0 == 24 }.count == gaps.count - 2)
        #expect(bench.shown(appA).count == 364 && bench.shown(appA).allSatisfy { !$0.late })
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test(
        "NT-1: 02:30 on the night the clocks go forward does not exist: it fires once, at 03:00 local",
        arguments: [("Europe/Berlin", "2026-03-29"), ("America/New_York", "2026-03-08")])
    func springForwardGap(zone: String, night: String) {
        let alarm = notification("alarm", .calendar(DateMatch(hour: 2, minute: 30), repeats: true))
        let start = localInstant(night + "T12:00:00", zone) - .seconds(3 * 86_400)
        var bench = suspendedWith([alarm], zone: zone, start: start)
        bench.advance(to: start + .seconds(6 * 86_400))
        let local = bench.dueTimes(appA, "alarm").map { localText($0, zone) }
        let nights = days(from: String(localText(start, zone).prefix(10)), count: 7, in: zone).dropFirst()
        #expect(local == nights.map { $0 == night ? $0 + "T03:00:00" : $0 + "T02:30:00" })
        #expect(local.filter { $0.hasPrefix(night) }.count == 1)
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test(
        "NT-1: a time that happens twice the night the clocks go back fires once, at its first occurrence",
        arguments: [
            ("Europe/Berlin", "2026-10-25", 2, "2026-10-25T00:30:00"),
            ("America/New_York", "2026-11-01", 1, "2026-11-01T05:30:00"),
        ])
    func fallBackRepeat(zone: String, night: String, hour: Int, firstInUTC: String) throws {
        let alarm = notification("alarm", .calendar(DateMatch(hour: hour, minute: 30), repeats: true))
        let once = notification(
            "once",
            .calendar(
                DateMatch(
                    year: 2026, month: Int(night.dropFirst(5).prefix(2)), day: Int(night.suffix(2)),
                    hour: hour, minute: 30), repeats: false))
        let start = localInstant(night + "T12:00:00", zone) - .seconds(3 * 86_400)
        var bench = suspendedWith([alarm, once], zone: zone, start: start)
        bench.advance(to: start + .seconds(6 * 86_400))
        let dues = bench.dueTimes(appA, "alarm")
        let wall = "T0\(hour):30:00"
        let nights = days(from: String(localText(start, zone).prefix(10)), count: 7, in: zone).dropFirst()
        #expect(dues.map { localText($0, zone) } == nights.map { $0 + wall })
        // The first occurrence is still on summer time: an hour before the second, which does not fire.
        let first = try #require(dues.first { localText($0, zone).hasPrefix(night) })
        #expect(first == localInstant(firstInUTC, "UTC"))
        #expect(!dues.contains(first + .seconds(3_600)))
        #expect(bench.dueTimes(appA, "once") == [first])
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test("NT-1: every Monday at 08:00 fires on Mondays at 08:00 and on no other day")
    func everyMonday() {
        let zone = "Europe/Berlin"
        let weekly = notification("standup", .calendar(DateMatch(hour: 8, minute: 0, weekday: 2), repeats: true))
        var bench = suspendedWith([weekly], zone: zone)
        bench.advance(to: localInstant("2026-04-30T12:00:00", zone))
        let local = bench.dueTimes(appA, "standup").map { localText($0, zone) }
        // 2026-01-05 is the first Monday; 17 Mondays to the end of April, across the change to summer time.
        #expect(
            local
                == days(from: "2026-01-05", count: 17 * 7, in: zone).enumerated().filter { $0.offset % 7 == 0 }
                .map { $0.element + "T08:00:00" })
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test("NT-1: the 31st of each month skips the months that have none; the 29th of February waits for a leap year")
    func missingDaysAreSkipped() {
        let monthly = notification("rent", .calendar(DateMatch(day: 31, hour: 9, minute: 0), repeats: true))
        let leap = notification("leap", .calendar(DateMatch(month: 2, day: 29, hour: 7, minute: 0), repeats: true))
        var bench = suspendedWith([monthly, leap], zone: "UTC")
        bench.advance(to: localInstant("2028-03-31T23:00:00", "UTC"))
        let rent = bench.dueTimes(appA, "rent").map { localText($0, "UTC") }
        let months31 = ["01", "03", "05", "07", "08", "10", "12"]
        let expected =
            ["2026", "2027"].flatMap { year in months31.map { "\(year)-\($0)-31T09:00:00" } }
            + ["2028-01-31T09:00:00", "2028-03-31T09:00:00"]
        #expect(rent == expected)
        #expect(bench.dueTimes(appA, "leap").map { localText($0, "UTC") } == ["2028-02-29T07:00:00"])
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test("NT-1: a device time zone change moves calendar triggers that name no zone, and nothing else")
    func timeZoneChangeMovesFloatingTriggers() throws {
        let berlin = "Europe/Berlin"
        let newYork = "America/New_York"
        let requests = [
            notification("floating", .calendar(DateMatch(hour: 7, minute: 0), repeats: true)),
            notification("pinned", .calendar(DateMatch(hour: 7, minute: 0, timeZone: berlin), repeats: true)),
            notification("interval", .timeInterval(seconds: 5 * 3_600, repeats: true)),
            notification("date", .date(benchStart + .seconds(30 * 3_600))),
        ]
        var bench = suspendedWith(requests, zone: berlin)
        let before = Dictionary(
            uniqueKeysWithValues: bench.core.notifications.pending(of: appA).map { ($0.identifier, $0) })
        #expect(localText(try #require(before["floating"]).due, berlin) == "2026-01-02T07:00:00")
        let mark = bench.actions.count
        bench.setTimeZone(newYork)
        let after = Dictionary(
            uniqueKeysWithValues: bench.core.notifications.pending(of: appA).map { ($0.identifier, $0) })
        // The app's "07:00" follows the device to New York: the next one is 07:00 there.
        #expect(localText(try #require(after["floating"]).due, newYork) == "2026-01-02T07:00:00")
        #expect(after["floating"]?.addedAt == before["floating"]?.addedAt)
        for kept in ["pinned", "interval", "date"] { #expect(after[kept] == before[kept], "\(kept) moved") }
        #expect(bench.notificationActions(from: mark) == [.savePending(appA, try #require(after["floating"]))])
        #expect(bench.core.notifications.deviceTimeZone == newYork)

        bench.advance(to: benchStart + .seconds(3 * 86_400))
        #expect(
            bench.dueTimes(appA, "floating").map { localText($0, newYork) }.prefix(2) == [
                "2026-01-02T07:00:00", "2026-01-03T07:00:00",
            ])
        #expect(
            bench.dueTimes(appA, "pinned").map { localText($0, berlin) }.prefix(2) == [
                "2026-01-02T07:00:00", "2026-01-03T07:00:00",
            ])
        #expect(bench.dueTimes(appA, "date") == [benchStart + .seconds(30 * 3_600)])
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test("NT-1: a repeating time interval keeps its phase: it fires at its first due time plus whole intervals")
    func repeatingIntervalKeepsPhase() throws {
        for seconds in [90.0, 61.5, 60.000_4] {
            let added = benchStart
            var bench = suspendedWith(
                [notification("tick", .timeInterval(seconds: seconds, repeats: true))], zone: "UTC")
            bench.advance(to: added + .seconds(double: seconds * 1_000.5))
            let dues = bench.dueTimes(appA, "tick")
            #expect(dues.count == 1_000, "every \(seconds) s")
            for (k, due) in dues.enumerated() {
                // Due k is the first whole millisecond at or after `added + (k + 1) · interval`: no drift.
                let exact = added + .seconds(double: seconds * Double(k + 1))
                let error = (due - exact).nanoseconds
                guard error >= 0, error < 1_000_000 else {
                    Issue.record("every \(seconds) s: firing \(k) is due \(error) ns after its phase")
                    break
                }
            }
            #expect(bench.problems.isEmpty, "\(bench.problems)")
        }
    }

    @Test(
        "NT-1, NT-2: a repeating interval missed while the daemon was down fires once, late, then on its phase"
    )
    func missedIntervalsFireOnce() throws {
        var bench = suspendedWith([notification("tick", .timeInterval(seconds: 60, repeats: true))], zone: "UTC")
        bench.advance(to: benchStart + .seconds(90))
        #expect(bench.dueTimes(appA, "tick") == [benchStart + .seconds(60)])
        // Down from t=90 s to t=390 s: the times 120, 180 … 360 pass unseen.
        bench.restart(after: .seconds(300))
        let recovered = try #require(bench.fires.last)
        #expect(recovered.key.due == benchStart + .seconds(120) && recovered.at == benchStart + .seconds(390))
        #expect(recovered.delivery?.late == true)
        #expect(bench.core.notifications.pending(of: appA).first?.due == benchStart + .seconds(420))
        bench.advance(to: benchStart + .seconds(500))
        #expect(bench.dueTimes(appA, "tick") == [60, 120, 420, 480].map { benchStart + .seconds($0) })
        #expect(bench.fires.filter { $0.delivery?.late == true }.count == 1)
        #expect(bench.shown(appA).count == 4)
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }

    @Test("NT-1: due times are whole milliseconds, never before the time asked for")
    func dueTimesAreWholeMilliseconds() throws {
        let odd = benchStart + .nanoseconds(123_456)
        let requests = [
            notification("interval", .timeInterval(seconds: 1.234_567_8, repeats: false)),
            notification("repeating", .timeInterval(seconds: 60.000_000_7, repeats: true)),
            notification("date", .date(odd + .seconds(10))),
            notification("past", .date(odd - .seconds(10))),
            notification("calendar", .calendar(DateMatch(hour: 18, minute: 45, second: 30), repeats: false)),
        ]
        var bench = NotificationBench(timeZone: "Asia/Kathmandu", start: odd)
        bench.install(appA)
        bench.open(appA)
        for request in requests { bench.add(appA, request) }
        bench.home()
        bench.advance(by: .seconds(3 * 3_600))
        for key in bench.fires.map(\.key) {
            #expect(key.due.nanosecondsSinceEpoch % 1_000_000 == 0, "\(key)")
        }
        let due = { (identifier: String) in bench.dueTimes(appA, identifier).first ?? .epoch }
        #expect(due("interval") == odd + .milliseconds(1_235) - .nanoseconds(123_456))
        #expect(due("date") == odd + .seconds(10) + .nanoseconds(1_000_000 - 123_456))
        #expect(due("past") == odd + .nanoseconds(1_000_000 - 123_456), "a date already past fires at once")
        #expect(due("calendar").nanosecondsSinceEpoch % 1_000_000_000 == 0)
        #expect(localText(due("calendar"), "Asia/Kathmandu") == "2026-01-01T18:45:30")
        #expect(bench.dueTimes(appA, "repeating").allSatisfy { $0.nanosecondsSinceEpoch % 1_000_000 == 0 })
        #expect(bench.problems.isEmpty, "\(bench.problems)")
    }
}
