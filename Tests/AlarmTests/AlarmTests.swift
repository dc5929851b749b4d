import Foundation
import Offstage
import OffstageTesting
import Testing

@testable import Alarm

/// The Alarm example's own tests with the test kit: its real delegate and its daily 07:00 alarm, on virtual time in
/// Berlin across the night the clocks go forward (SPEC NT-1, NT-2).
@Suite("Alarm, tested with OffstageTesting (KIT-1)")
@MainActor
struct AlarmTests {
    static let infoPlist = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Examples/Alarm/Info.plist")
    static let berlin = TimeZone(identifier: "Europe/Berlin")!

    /// Saturday 2026-03-28 08:00 in Berlin (07:00 UTC): the clocks go from 02:00 to 03:00 the next night.
    static let saturdayMorning = Date(timeIntervalSince1970: 1_774_681_200)

    /// 07:00 in Berlin on `day` of March 2026.
    static func sevenInBerlin(march day: Int) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = berlin
        return calendar.date(from: DateComponents(year: 2026, month: 3, day: day, hour: 7))!
    }

    @Test("NT-1: the daily alarm goes off at 07:00 on the wall clock on both sides of the change to summer time")
    func sevenOClockAcrossTheChange() async throws {
        let device = await TestDevice(startingAt: Self.saturdayMorning, timeZone: Self.berlin)
        let app = try device.install(infoPlist: Self.infoPlist) { AlarmDelegate() }
        try await device.open(app)
        try await device.home()
        #expect(app.pendingNotifications.map(\.identifier) == ["alarm"])
        try await device.advance(by: .seconds(48 * 3600))
        let shown = device.shownNotifications
        #expect(shown.map(\.title) == ["Alarm", "Alarm"])
        #expect(shown.map(\.deliveredAt) == [Self.sevenInBerlin(march: 29), Self.sevenInBerlin(march: 30)])
        #expect(
            Self.sevenInBerlin(march: 30).timeIntervalSince(Self.sevenInBerlin(march: 29)) == 24 * 3600
                && Self.sevenInBerlin(march: 29).timeIntervalSince(Self.sevenInBerlin(march: 28)) == 23 * 3600,
            "the night of the change is an hour short")
        #expect(app.isSuspended, "the alarm goes off without waking the app")
    }

    @Test("NT-2: a tap on the alarm opens the app, which hears it and clears its badge")
    func tapOpensTheApp() async throws {
        let device = await TestDevice(startingAt: Self.saturdayMorning, timeZone: Self.berlin)
        let app = try device.install(infoPlist: Self.infoPlist) { AlarmDelegate() }
        try await device.open(app)
        try await device.home()
        try await device.advance(to: Self.sevenInBerlin(march: 29).addingTimeInterval(60))
        #expect(app.badge == 1, "the alarm sets the badge")
        try await device.tapNotification("alarm", of: app)
        #expect(app.state == .active)
        #expect(app.callbacks.contains(.other("notificationResponse")))
        #expect(app.badge == nil, "the app cleared it when it heard the tap")
    }
}
