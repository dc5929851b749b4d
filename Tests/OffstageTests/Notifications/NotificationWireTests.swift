import Foundation
import OffstageProtocol
import Testing

@testable import Offstage

/// SPEC NT-1, the app's side: what the SDK's notification values become on the wire, and what it refuses before
/// anything is sent.
@Suite("Notification requests on the wire (NT-1)")
struct NotificationWireTests {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    /// 2026-11-24 06:00:00 UTC, a Tuesday: 07:00 in Berlin.
    static let tuesdayMorning = Date(timeIntervalSince1970: 1_795_500_000)

    @Test("NT-1: a calendar trigger sends its components and its time zone's IANA name")
    func calendarWithTimeZone() throws {
        let components = DateComponents(timeZone: Self.berlin, hour: 7, minute: 0, weekday: 2)
        let trigger = CalendarNotificationTrigger(dateMatching: components, repeats: true)
        #expect(
            try NotificationRequest.message(of: trigger, now: Date())
                == .init(
                    kind: "calendar", repeats: true,
                    dateComponents: .init(hour: 7, minute: 0, weekday: 2, timeZone: "Europe/Berlin")))
        let local = CalendarNotificationTrigger(dateMatching: DateComponents(hour: 7), repeats: false)
        #expect(
            try NotificationRequest.message(of: local, now: Date()).dateComponents?.timeZone == nil,
            "no zone: the device's")
    }

    @Test("NT-1: a calendar trigger's next date is the next match in its time zone, smaller units at their start")
    func calendarNextDate() {
        let trigger = CalendarNotificationTrigger(
            dateMatching: DateComponents(timeZone: Self.berlin, hour: 7), repeats: true)
        #expect(trigger.nextTriggerDate(after: Self.tuesdayMorning - 1) == Self.tuesdayMorning)
        #expect(trigger.nextTriggerDate(after: Self.tuesdayMorning) == Self.tuesdayMorning + 86_400)
        let past = CalendarNotificationTrigger(dateMatching: DateComponents(year: 2020, month: 1), repeats: false)
        #expect(past.nextTriggerDate(after: Self.tuesdayMorning) == nil)
    }

    @Test("NT-1: date components the system cannot match, and other calendars, are refused, not ignored")
    func unsupportedComponents() {
        var components = DateComponents(hour: 7)
        components.weekOfYear = 3
        #expect(throws: NotificationError.self) {
            try NotificationRequest.message(
                of: CalendarNotificationTrigger(dateMatching: components, repeats: true), now: Date())
        }
        let hebrew = DateComponents(calendar: Calendar(identifier: .hebrew), hour: 7)
        #expect(throws: NotificationError.self) {
            try NotificationRequest.message(
                of: CalendarNotificationTrigger(dateMatching: hebrew, repeats: true), now: Date())
        }
    }

    @Test("NT-1: a repeating interval under 60 s is refused locally with the daemon's words; 60 s repeats")
    func repeatingIntervalMinimum() throws {
        let short = TimeIntervalNotificationTrigger(timeInterval: 30, repeats: true)
        #expect(
            throws: NotificationError(
                .invalidArgument, "a repeating time interval must be at least 60 s, not 30.0 s",
                fix: "repeat every 60 s or more, or do not repeat")
        ) { try NotificationRequest.message(of: short, now: Date()) }
        let once = TimeIntervalNotificationTrigger(timeInterval: 30, repeats: false)
        #expect(
            try NotificationRequest.message(of: once, now: Date())
                == .init(kind: "timeInterval", repeats: false, seconds: 30))
        let minute = TimeIntervalNotificationTrigger(timeInterval: 60, repeats: true)
        #expect(try NotificationRequest.message(of: minute, now: Date()).repeats == true)
        #expect(throws: NotificationError.self) {
            try NotificationRequest.message(
                of: TimeIntervalNotificationTrigger(timeInterval: 0, repeats: false), now: Date())
        }
    }

    @Test("NT-1: no trigger fires at once (a date trigger now); a date trigger sends seconds since the epoch")
    func dateTriggers() throws {
        #expect(
            try NotificationRequest.message(of: nil, now: Self.tuesdayMorning)
                == .init(kind: "date", date: 1_795_500_000))
        let trigger = DateNotificationTrigger(date: Self.tuesdayMorning)
        #expect(try NotificationRequest.message(of: trigger, now: Date()) == .init(kind: "date", date: 1_795_500_000))
    }

    @Test("NT-1: content sends only what is set; nested user info becomes JSON")
    func contentAndUserInfo() throws {
        let content = NotificationContent(
            title: "Alarm", body: "Time to wake up", sound: .default, badge: 1,
            userInfo: [
                "count": 3, "ratio": 0.5, "paid": true, "note": Optional<String>.none,
                "trip": ["stops": ["A", "B"], "legs": [1, 2], "meta": ["night": false] as [String: any Sendable]]
                    as [String: any Sendable],
            ], categoryIdentifier: "wake")
        let message = try content.message()
        #expect(message.title == "Alarm" && message.subtitle == nil && message.body == "Time to wake up")
        #expect(message.sound == "default" && message.badge == 1 && message.categoryIdentifier == "wake")
        #expect(message.threadIdentifier == nil)
        #expect(
            message.userInfo == [
                "count": .number(3), "ratio": .number(0.5), "paid": .bool(true), "note": .null,
                "trip": .object([
                    "stops": .array([.string("A"), .string("B")]), "legs": .array([.number(1), .number(2)]),
                    "meta": .object(["night": .bool(false)]),
                ]),
            ])
        let back = NotificationContent(message)
        #expect(back.userInfo["count"] as? Int == 3, "whole numbers come back as Int")
        #expect(back.userInfo["ratio"] as? Double == 0.5)
        #expect(back.userInfo["note"] == nil, "null is left out")
        let trip = try #require(back.userInfo["trip"] as? [String: any Sendable])
        #expect(trip["stops"] as? [any Sendable] != nil && (trip["legs"] as? [any Sendable])?.first as? Int == 1)
        #expect(back.sound == .default && back.badge == 1)
    }

    @Test("NT-1: a user-info value JSON cannot hold is refused, naming its key and the fix")
    func unsupportedUserInfo() {
        let content = NotificationContent(body: "x", userInfo: ["trip": ["when": Date()] as [String: any Sendable]])
        do {
            _ = try content.message()
            Issue.record("a Date in user info must be refused")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message == #"userInfo["trip.when"]: a Date cannot be sent as JSON"#)
            #expect(error.fix.contains("timeIntervalSince1970"))
        }
        #expect(throws: NotificationError.self) {
            try NotificationContent(body: "x", userInfo: ["n": Double.nan]).message()
        }
        #expect(throws: NotificationError.self) {
            try NotificationContent(body: "x", userInfo: ["n": UInt64.max]).message()
        }
    }

    @Test("NT-1: a wire request reads back as the SDK's request, trigger and time zone included")
    func requestFromWire() throws {
        let message = NotificationsInterface.RequestMessage(
            identifier: "alarm", content: .init(title: "Alarm", userInfo: ["n": .number(1)]),
            trigger: .init(
                kind: "calendar", repeats: true, dateComponents: .init(hour: 7, minute: 0, timeZone: "Europe/Berlin")))
        let request = NotificationRequest(message)
        let trigger = try #require(request.trigger as? CalendarNotificationTrigger)
        #expect(trigger.repeats && trigger.dateComponents.hour == 7 && trigger.dateComponents.timeZone == Self.berlin)
        #expect(request.identifier == "alarm" && request.content.title == "Alarm")
        #expect(try request.message(now: Date()) == message, "and goes out again the same")
    }
}
