import Foundation
import OffstageCore
import OffstageProtocol
import Testing

/// The notification interfaces (SPEC NT-1, NT-2): valid IDL, Swift types that match it field for field (so the two
/// cannot drift), notification callbacks intact through both coders, and bad requests refused with what was wrong.
@Suite("io.offstage.Notifications and io.offstage.NotificationsControl")
struct NotificationsInterfaceTests {
    static let start = Instant(secondsSinceEpoch: 1_800_000_000)

    /// Every optional set, so a value encodes every key its type can have.
    static let content = NotificationsInterface.ContentMessage(
        title: "Wake up", subtitle: "It is seven", body: "Time to go", sound: "default", badge: 1,
        userInfo: ["alarm": .string("morning")], threadIdentifier: "alarms", categoryIdentifier: "alarm")
    static let components = NotificationsInterface.DateComponentsMessage(
        year: 2027, month: 1, day: 2, hour: 7, minute: 0, second: 0, weekday: 2, timeZone: "Europe/Berlin")
    static let trigger = NotificationsInterface.TriggerMessage(
        kind: "calendar", repeats: true, seconds: 60, dateComponents: components, date: 1_800_000_000)
    static let request = NotificationsInterface.RequestMessage(identifier: "wake", content: content, trigger: trigger)
    static let delivered = NotificationsInterface.DeliveredMessage(
        request: request, due: 1_800_000_060, deliveredAt: 1_800_000_060.5, late: true, route: "user")
    static let action = NotificationsInterface.ActionMessage(identifier: "snooze", title: "Snooze", foreground: false, destructive: true)

    static func record(route: NotificationRoute = .user) -> DeliveredNotification {
        let request = NotificationRequest(
            identifier: "wake/up \"now\"",
            content: NotificationContent(
                title: "Wake up", subtitle: "Seven", body: "ünïcode ✓", sound: "bell.caf", badge: 3,
                userInfo: #"{"nested":{"list":[1,2.5,null,true]},"path":"a/b"}"#, threadIdentifier: "t",
                categoryIdentifier: "alarm"),
            trigger: .calendar(DateMatch(hour: 7, minute: 0, timeZone: "Europe/Berlin"), repeats: true))
        return DeliveredNotification(
            app: "com.example.alarm", request: request, due: start + .milliseconds(60_123),
            deliveredAt: start + .milliseconds(60_200), late: false, route: route)
    }

    @Test("the interface definitions are valid and declare the methods the Swift names call")
    func definitionsAreValid() throws {
        let app = try VarlinkIDLChecker.check(NotificationsInterface.definition)
        #expect(app.name == NotificationsInterface.name)
        #expect(
            app.methods == [
                "Add", "RemovePending", "Pending", "Delivered", "RemoveDelivered", "SetBadge", "Settings", "SetCategories",
                "AnswerWillPresent",
            ])
        let names = [
            NotificationsInterface.Method.add, NotificationsInterface.Method.removePending, NotificationsInterface.Method.pending,
            NotificationsInterface.Method.delivered, NotificationsInterface.Method.removeDelivered,
            NotificationsInterface.Method.setBadge, NotificationsInterface.Method.settings,
            NotificationsInterface.Method.setCategories, NotificationsInterface.Method.answerWillPresent,
        ]
        #expect(names.map { String($0.split(separator: ".").last!) } == app.methods)
        let control = try VarlinkIDLChecker.check(NotificationsControlInterface.definition)
        #expect(control.name == NotificationsControlInterface.name && control.methods == ["Notifications", "Tap", "Clear"])
        let controlNames = [
            NotificationsControlInterface.Method.notifications, NotificationsControlInterface.Method.tap,
            NotificationsControlInterface.Method.clear,
        ]
        #expect(controlNames.map { String($0.split(separator: ".").last!) } == control.methods)
    }

    @Test("NT-1: every type and method of io.offstage.Notifications has exactly the IDL's fields")
    func notificationsMatchIDL() throws {
        let text = NotificationsInterface.definition
        func type(_ name: String) throws -> Set<String> { Set(try #require(IDLFields.type(name, in: text)).keys) }
        func method(_ name: String) throws -> (input: Set<String>, output: Set<String>) {
            let fields = try #require(IDLFields.method(name, in: text))
            return (Set(fields.input.keys), Set(fields.output.keys))
        }
        #expect(try IDLFields.keys(of: Self.content) == type("Content"))
        #expect(try IDLFields.keys(of: Self.components) == type("DateComponents"))
        #expect(try IDLFields.keys(of: Self.trigger) == type("Trigger"))
        #expect(try IDLFields.keys(of: Self.request) == type("Request"))
        let pending = NotificationsInterface.PendingMessage(request: Self.request, addedAt: 1, due: 2)
        #expect(try IDLFields.keys(of: pending) == type("PendingRequest"))
        #expect(try IDLFields.keys(of: Self.delivered) == type("Notification"))
        #expect(try IDLFields.keys(of: Self.action) == type("Action"))
        let category = NotificationsInterface.CategoryMessage(identifier: "alarm", actions: [Self.action])
        #expect(try IDLFields.keys(of: category) == type("Category"))

        let none = Set<String>()
        #expect(try IDLFields.keys(of: NotificationsInterface.AddParameters(request: Self.request)) == method("Add").input)
        #expect(try IDLFields.keys(of: NotificationsInterface.AddReply(due: 1, dropped: ["a"])) == method("Add").output)
        let identifiers = NotificationsInterface.IdentifiersParameters(identifiers: ["a"])
        for name in ["RemovePending", "RemoveDelivered"] {
            #expect(try IDLFields.keys(of: identifiers) == method(name).input && method(name).output == none)
        }
        #expect(try method("Pending").input == none && method("Delivered").input == none && method("Settings").input == none)
        #expect(try IDLFields.keys(of: NotificationsInterface.PendingReply(pending: [pending])) == method("Pending").output)
        #expect(
            try IDLFields.keys(of: NotificationsInterface.DeliveredReply(delivered: [Self.delivered])) == method("Delivered").output)
        #expect(try IDLFields.keys(of: NotificationsInterface.SetBadgeParameters(badge: 2)) == method("SetBadge").input)
        #expect(
            try IDLFields.keys(of: NotificationsInterface.SettingsReply(allowed: true, badge: 2, timeZone: "UTC"))
                == method("Settings").output)
        #expect(
            try IDLFields.keys(of: NotificationsInterface.SetCategoriesParameters(categories: [category]))
                == method("SetCategories").input)
        let answer = NotificationsInterface.AnswerWillPresentParameters(identifier: "a", due: 1, present: true)
        #expect(try IDLFields.keys(of: answer) == method("AnswerWillPresent").input)
        #expect(try method("AnswerWillPresent").output == none && method("SetBadge").output == none)
    }

    @Test("NT-2: every type and method of io.offstage.NotificationsControl has exactly the IDL's fields")
    func controlMatchesIDL() throws {
        let text = NotificationsControlInterface.definition
        func type(_ name: String) throws -> Set<String> { Set(try #require(IDLFields.type(name, in: text)).keys) }
        func method(_ name: String) throws -> (input: Set<String>, output: Set<String>) {
            let fields = try #require(IDLFields.method(name, in: text))
            return (Set(fields.input.keys), Set(fields.output.keys))
        }
        // The request's types are the same text as in io.offstage.Notifications.
        #expect(try IDLFields.keys(of: Self.request) == type("Request"))
        #expect(try IDLFields.keys(of: Self.trigger) == type("Trigger"))
        let pending = NotificationsControlInterface.AppPendingMessage(
            app: "com.example.alarm", request: Self.request, trigger: "every 60 s", addedAt: 1, due: 2)
        #expect(try IDLFields.keys(of: pending) == type("AppPending"))
        let delivered = NotificationsControlInterface.AppDeliveredMessage(Self.record())
        #expect(try IDLFields.keys(of: delivered) == type("AppDelivered"))
        let badge = NotificationsControlInterface.AppBadgeMessage(app: "com.example.alarm", badge: 3)
        #expect(try IDLFields.keys(of: badge) == type("AppBadge"))
        let reply = NotificationsControlInterface.NotificationsReply(
            pending: [pending], delivered: [delivered], badges: [badge], timeZone: "Europe/Berlin")
        #expect(try IDLFields.keys(of: NotificationsControlInterface.NotificationsParameters(app: "a")) == method("Notifications").input)
        #expect(try IDLFields.keys(of: reply) == method("Notifications").output)
        let tap = NotificationsControlInterface.TapParameters(app: "a", identifier: "b", action: "snooze")
        #expect(try IDLFields.keys(of: tap) == method("Tap").input && method("Tap").output.isEmpty)
        let clear = NotificationsControlInterface.ClearParameters(app: "a", identifiers: ["b"])
        #expect(try IDLFields.keys(of: clear) == method("Clear").input)
        #expect(try IDLFields.keys(of: NotificationsControlInterface.ClearReply(removed: 1)) == method("Clear").output)
    }

    @Test("NT-2: the callback's notification fields are in the IDL, and a notification is the IDL's Notification")
    func callbackMatchesIDL() throws {
        let text = AppInterface.definition
        let callbackFields = Set(try #require(IDLFields.type("Callback", in: text)).keys)
        let response = AppInterface.CallbackMessage(
            Callback(
                id: CallbackID(9),
                kind: .notificationResponse(NotificationResponse(notification: Self.record(), actionIdentifier: "snooze")),
                deadline: Self.start))
        #expect(try IDLFields.keys(of: response).isSubset(of: callbackFields))
        #expect(callbackFields.isSuperset(of: ["notification", "actionIdentifier"]))
        #expect(response.kind == "notificationResponse" && response.actionIdentifier == "snooze")
        let notification = try #require(response.notification)
        #expect(try IDLFields.keys(of: notification) == Set(try #require(IDLFields.type("Notification", in: text)).keys))
        #expect(try IDLFields.keys(of: notification.request) == Set(try #require(IDLFields.type("Request", in: text)).keys))
    }

    @Test(
        "NT-2: a notification callback travels intact through the hand-written and the Foundation coders",
        arguments: [
            CallbackKind.notificationWillPresent(NotificationsInterfaceTests.record(route: .app)),
            CallbackKind.notificationResponse(
                NotificationResponse(notification: NotificationsInterfaceTests.record(), actionIdentifier: "default")),
        ])
    func callbackRoundTrip(kind: CallbackKind) throws {
        let callback = AppInterface.CallbackMessage(Callback(id: CallbackID(12), kind: kind, deadline: Self.start + .seconds(30)))
        var json = VarlinkDirectJSON()
        try callback.appendJSON(to: &json)
        let direct = try JSONDecoder().decode(AppInterface.CallbackMessage.self, from: Data(json.bytes))
        #expect(direct == callback)
        #expect(try JSONDecoder().decode(AppInterface.CallbackMessage.self, from: JSONEncoder().encode(callback)) == callback)
        // Through a whole reply as an app reads it, the way the SDK decodes its stream.
        let reply = AppInterface.AttachReply(callback: callback)
        var replyJSON = VarlinkDirectJSON()
        try reply.appendJSON(to: &replyJSON)
        #expect(try JSONDecoder().decode(AppInterface.AttachReply.self, from: Data(replyJSON.bytes)) == reply)
        // What the app gets back is the notification it was given: the same request, and a due time naming the firing.
        let message = try #require(direct.notification)
        let request = try message.request.request()
        let record = Self.record()
        #expect(request == record.request)
        #expect(NotificationsInterface.dueInstant(message.due) == record.due)
    }

    @Test(
        "NT-1: a malformed trigger is refused naming what was wrong and the fix",
        arguments: [
            (NotificationsInterface.TriggerMessage(kind: "weekly"), "'weekly' is not a trigger kind", "timeInterval, calendar or date"),
            (NotificationsInterface.TriggerMessage(kind: "timeInterval", repeats: true), "needs seconds", "give seconds"),
            (NotificationsInterface.TriggerMessage(kind: "calendar"), "needs dateComponents", "give dateComponents"),
            (NotificationsInterface.TriggerMessage(kind: "date"), "needs date, in seconds since the Unix epoch", "give date"),
            (NotificationsInterface.TriggerMessage(kind: "date", date: .infinity), "date is inf, out of range", "give date as a number of seconds"),
            (NotificationsInterface.TriggerMessage(kind: "date", date: 253_402_300_800), "date is 253402300800, out of range", "to 9223372035"),
            (NotificationsInterface.TriggerMessage(kind: "date", repeats: true, date: 1_800_000_000), "cannot repeat", "calendar trigger"),
        ])
    func badTrigger(trigger: NotificationsInterface.TriggerMessage, problem: String, fix: String) throws {
        let request = NotificationsInterface.RequestMessage(identifier: "a", content: Self.content, trigger: trigger)
        let error = try #require(throws: CoreError.self) { try request.request() }
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains(problem), "\(error.message)")
        #expect(error.fix.contains(fix), "\(error.fix)")
    }

    @Test("NT-1: user info that is not a JSON object is refused when the call is read, naming where it is")
    func userInfoNotAnObject() throws {
        for userInfo in [#"[1, 2]"#, #""text""#, "3", "true"] {
            let message = Data(
                #"{"method":"io.offstage.Notifications.Add","parameters":{"request":{"identifier":"a","content":{"title":"t","userInfo":\#(userInfo)},"trigger":{"kind":"timeInterval","seconds":60}}}}"#
                    .utf8)
            let error = try #require(throws: VarlinkError.self) {
                try VarlinkCodec.decodeCallParameters(message, as: NotificationsInterface.AddParameters.self)
            }
            #expect(error.name == VarlinkError.Name.invalidParameter)
            #expect(error.stringParameter("parameter") == "request")
            #expect(error.stringParameter("description")?.contains("request.content.userInfo") == true, "\(error)")
        }
        // The core refuses user info that is not an object however it came (the SDK's own types carry it as text).
        let text = NotificationContent(title: "t", userInfo: "[1]")
        let request = NotificationRequest(identifier: "a", content: text, trigger: .timeInterval(seconds: 60, repeats: false))
        var core = OffstageCore()
        core.restore(
            InstalledApp(manifest: Manifest(id: "com.example.a", executable: "A"), bundlePath: "/b", installedAt: Self.start, settings: .init()),
            durable: AppDurableState())
        _ = core.adopt("com.example.a", pid: 10, at: Self.start)
        let error = try #require(throws: CoreError.self) {
            try core.addNotification("com.example.a", pid: 10, request, at: Self.start)
        }
        #expect(error.code == .invalidArgument && error.message.contains("is not a JSON object"))
        #expect(error.fix.contains("dictionary"))
    }

    @Test("NT-1: the device's time zone is in GetDevice and SetDevice of io.offstage.Control, as the IDL says")
    func deviceTimeZoneMatchesIDL() throws {
        let text = ControlInterface.definition
        let parameters = ControlInterface.SetDeviceParameters(
            batteryLevel: 50, charging: true, network: "metered", idle: false, lowPowerMode: true, clear: ["idle"],
            timeZone: "Europe/Berlin", memoryPressure: "critical", thermalState: "serious")
        let set = try #require(IDLFields.method("SetDevice", in: text))
        #expect(try IDLFields.keys(of: parameters) == Set(set.input.keys))
        #expect(set.input["timeZone"] == true && set.output["timeZone"] == false)
        let get = try #require(IDLFields.method("GetDevice", in: text))
        #expect(get.output == set.output)
        let reply = ControlInterface.DeviceReply(
            conditions: .init(DeviceConditions(batteryLevel: 50, charging: true, network: .metered, idle: false, lowPowerMode: false)),
            machine: .init(MachineReading()), overrides: .init(ConditionOverrides()), timeZone: "Europe/Berlin")
        #expect(try IDLFields.keys(of: reply) == Set(get.output.keys))
        // A reply from a daemon that had no time zone yet still reads, as UTC (its zone then).
        var object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(reply)) as? [String: Any])
        object["timeZone"] = nil
        let old = try JSONDecoder().decode(ControlInterface.DeviceReply.self, from: JSONSerialization.data(withJSONObject: object))
        #expect(old.timeZone == "UTC" && old.conditions == reply.conditions)
    }
}
