import Foundation
import OffstageProtocol
import Testing

@testable import Offstage

/// SPEC NT-1, the legacy `UILocalNotification` shape: how a fire date, a time zone and a repeat interval become a
/// trigger, and how a pending request reads back.
@Suite("LocalNotification (NT-1)")
struct LocalNotificationTests {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    /// 2026-11-24 06:00:00 UTC, a Tuesday: 07:00 in Berlin.
    static let tuesdayMorning = Date(timeIntervalSince1970: 1_795_500_000)

    static func alarm(_ zone: TimeZone?, repeating unit: Calendar.Component?) -> LocalNotification {
        let alarm = LocalNotification()
        alarm.fireDate = tuesdayMorning
        alarm.timeZone = zone
        alarm.repeatInterval = unit
        alarm.alertTitle = "Alarm"
        alarm.alertBody = "Time to wake up"
        alarm.soundName = LocalNotification.defaultSoundName
        return alarm
    }

    static func wire(_ notification: LocalNotification) throws -> NotificationsInterface.TriggerMessage {
        try NotificationRequest.message(of: try notification.trigger(), now: Date())
    }

    @Test("NT-1: no time zone is an absolute date; a time zone is the wall-clock time there, every component given")
    func fireDates() throws {
        #expect(try Self.wire(Self.alarm(nil, repeating: nil)) == .init(kind: "date", date: 1_795_500_000))
        #expect(
            try Self.wire(Self.alarm(Self.berlin, repeating: nil))
                == .init(
                    kind: "calendar", repeats: false,
                    dateComponents: .init(
                        year: 2026, month: 11, day: 24, hour: 7, minute: 0, second: 0, timeZone: "Europe/Berlin")))
    }

    @Test("NT-1: a repeat interval keeps the components below the unit and repeats; without a zone they are GMT")
    func repeatIntervals() throws {
        func components(_ unit: Calendar.Component, _ zone: TimeZone? = Self.berlin) throws -> NotificationsInterface
            .DateComponentsMessage?
        {
            let message = try Self.wire(Self.alarm(zone, repeating: unit))
            #expect(message.kind == "calendar" && message.repeats == true)
            return message.dateComponents
        }
        #expect(try components(.minute) == .init(second: 0, timeZone: "Europe/Berlin"))
        #expect(try components(.hour) == .init(minute: 0, second: 0, timeZone: "Europe/Berlin"))
        #expect(try components(.day) == .init(hour: 7, minute: 0, second: 0, timeZone: "Europe/Berlin"))
        #expect(
            try components(.weekOfYear) == .init(hour: 7, minute: 0, second: 0, weekday: 3, timeZone: "Europe/Berlin"))
        #expect(try components(.month) == .init(day: 24, hour: 7, minute: 0, second: 0, timeZone: "Europe/Berlin"))
        #expect(
            try components(.year) == .init(month: 11, day: 24, hour: 7, minute: 0, second: 0, timeZone: "Europe/Berlin")
        )
        #expect(
            try components(.day, nil) == .init(hour: 6, minute: 0, second: 0, timeZone: "GMT"), "same instants daily")
        #expect(throws: NotificationError.self) { try Self.alarm(nil, repeating: .era).trigger() }
    }

    @Test("NT-1: the request carries the alert, sound and badge, and the identifier kept in user info")
    func request() throws {
        let alarm = Self.alarm(Self.berlin, repeating: .day)
        alarm.applicationIconBadgeNumber = 2
        alarm.userInfo = ["room": "bedroom"]
        alarm.category = "wake"
        let request = try alarm.request(identifier: "A1")
        let content = try request.content.message()
        #expect(request.identifier == "A1")
        #expect(content.title == "Alarm" && content.body == "Time to wake up" && content.sound == "default")
        #expect(content.badge == 2 && content.categoryIdentifier == "wake")
        #expect(content.userInfo == ["room": .string("bedroom"), LocalNotification.identifierKey: .string("A1")])
        #expect(try alarm.request(identifier: "A1", now: true).trigger == nil, "presented now: no trigger")
        let zero = Self.alarm(nil, repeating: nil)
        #expect(try zero.request(identifier: "B").content.badge == nil, "badge 0 leaves the icon as it is")
    }

    @Test("NT-1: a pending request reads back as a local notification with its next date and repeat interval")
    func fromPending() throws {
        let request = try Self.alarm(Self.berlin, repeating: .weekOfYear).request(identifier: "A1")
        let back = LocalNotification(request, due: Self.tuesdayMorning)
        #expect(back.fireDate == Self.tuesdayMorning && back.timeZone == Self.berlin)
        #expect(back.repeatInterval == .weekOfYear && back.identifier == "A1")
        #expect(back.alertTitle == "Alarm" && back.alertBody == "Time to wake up" && back.soundName == "default")
        let once = LocalNotification(
            try Self.alarm(nil, repeating: nil).request(identifier: "B"), due: Self.tuesdayMorning)
        #expect(once.repeatInterval == nil && once.timeZone == nil)
    }
}
