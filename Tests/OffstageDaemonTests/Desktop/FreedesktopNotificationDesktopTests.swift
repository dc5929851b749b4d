import Foundation
import TestProcesses
import Testing

@testable import OffstageDaemon

/// The daemon's desktop on the freedesktop notification service (SPEC NT-2): what a delivery becomes in `Notify`, and
/// what the service's answers and signals become for the daemon; then the same over a real private bus.
@Suite("Desktop: the daemon's notifications on the freedesktop service (NT-2)", .serialized)
struct FreedesktopNotificationDesktopTests {
    static let content = NotificationDesktopContent(
        appName: "com.example.alarm", summary: "Alarm", body: "Time to <b>wake</b> up & go",
        actions: [.init(identifier: "default", label: "Open"), .init(identifier: "snooze", label: "Snooze")],
        sound: .themeName("message-new-instant"), key: "com.example.alarm/alarm@1700000000.5", threadIdentifier: "",
        expireTimeout: -1)

    @Test("NT-2: a delivery is one Notify: actions in order (default first), the key and sound as hints, no others")
    func notifyCarriesTheContent() {
        let notification = FreedesktopNotificationDesktop.notification(Self.content, escapingBody: true)
        #expect(notification.appName == "com.example.alarm" && notification.summary == "Alarm")
        #expect(notification.replacesID == 0 && notification.icon.isEmpty && notification.expireTimeout == -1)
        #expect(notification.actions.map(\.key) == ["default", "snooze"])
        #expect(notification.actions.map(\.label) == ["Open", "Snooze"])
        #expect(
            notification.hints == [
                "x-offstage-key": .string("com.example.alarm/alarm@1700000000.5"),
                "sound-name": .string("message-new-instant"),
            ])
    }

    @Test("NT-2: a thread is a hint when the app gave one; a sound file is sound-file; no sound, no sound hint")
    func threadAndSoundHints() {
        var content = Self.content
        content.threadIdentifier = "mornings"
        content.sound = .file("/state/bundles/com.example.alarm@1/ring.wav")
        content.expireTimeout = 0
        let notification = FreedesktopNotificationDesktop.notification(content, escapingBody: true)
        #expect(notification.hints["x-offstage-thread"] == .string("mornings"))
        #expect(notification.hints["sound-file"] == .string("/state/bundles/com.example.alarm@1/ring.wav"))
        #expect(notification.hints["sound-name"] == nil && notification.expireTimeout == 0)
        content.sound = nil
        #expect(
            Set(FreedesktopNotificationDesktop.notification(content, escapingBody: true).hints.keys) == [
                "x-offstage-key", "x-offstage-thread",
            ])
    }

    @Test(
        "NT-2: the body's & < > are escaped for servers that read markup, kept for those that do not; not the summary")
    func bodyIsEscaped() {
        let notification = FreedesktopNotificationDesktop.notification(Self.content, escapingBody: true)
        #expect(notification.body == "Time to &lt;b&gt;wake&lt;/b&gt; up &amp; go")
        #expect(
            FreedesktopNotificationDesktop.escapingMarkup("&amp; <\u{301}i> 日本 ✉︎") == "&amp;amp; &lt;\u{301}i&gt; 日本 ✉︎")
        var content = Self.content
        content.summary = "<Alarm> & more"
        #expect(FreedesktopNotificationDesktop.notification(content, escapingBody: true).summary == "<Alarm> & more")
        let plain = FreedesktopNotificationDesktop.notification(Self.content, escapingBody: false)
        #expect(plain.body == "Time to <b>wake</b> up & go", "a server without body-markup shows the text as it is")
    }

    @Test("NT-2: the service's events map one for one; only a close with reason 2 is the user's dismissal")
    func eventsMapOneForOne() {
        let map = FreedesktopNotificationDesktop.event
        #expect(map(.shown(token: 7, id: 3)) == .shown(token: 7, desktopID: 3))
        #expect(map(.failed(token: 7, message: "no")) == .failed(token: 7, message: "no"))
        #expect(map(.actionInvoked(id: 3, action: "default")) == .clicked(desktopID: 3, action: "default"))
        #expect(map(.actionInvoked(id: 3, action: "snooze")) == .clicked(desktopID: 3, action: "snooze"))
        #expect(map(.closed(id: 3, reason: 2)) == .closed(desktopID: 3, byUser: true))
        for reason: UInt32 in [1, 3, 4, 0, 9] {
            #expect(map(.closed(id: 3, reason: reason)) == .closed(desktopID: 3, byUser: false))
        }
        #expect(map(.disconnected("gone")) == .disconnected(reason: "gone"))
    }

    @Test(
        "NT-2: over a real bus: the connector names the server, shows, reports the click and the dismissal, withdraws")
    func overARealBus() throws {
        let bus = try PrivateSessionBus.start()
        defer { bus.stop() }
        try bus.startServer()
        let events = ReportedEvents<NotificationDesktopEvent>()
        let desktop = try FreedesktopNotificationDesktop.connector(bus.address, events.handler)
        #expect(desktop.description == "offstage-test-server 1.0 (Offstage) on the session bus \(bus.address)")
        try desktop.show(Self.content, token: 11)
        #expect(events.waitFor(.shown(token: 11, desktopID: 1)), "events: \(events.all)")
        let record = try #require(bus.records().first)
        #expect(record["summary"] as? String == "Alarm")
        #expect(record["body"] as? String == "Time to &lt;b&gt;wake&lt;/b&gt; up &amp; go")
        #expect(record["actions"] as? [String] == ["default", "Open", "snooze", "Snooze"])
        let hints = try #require(record["hints"] as? [String: [Any]])
        #expect(hints["x-offstage-key"]?.last as? String == "com.example.alarm/alarm@1700000000.5")
        try bus.command("invoke 1 default")
        #expect(events.waitFor(.clicked(desktopID: 1, action: "default")), "events: \(events.all)")
        try bus.command("close 1 2")
        #expect(events.waitFor(.closed(desktopID: 1, byUser: true)), "events: \(events.all)")
        try desktop.withdraw(desktopID: 1)
        #expect(events.waitFor(.closed(desktopID: 1, byUser: false)), "events: \(events.all)")
        #expect(bus.closeRequests() == [1])
    }

    @Test("NT-2: a bus without a notification service is kept, and the description says none answers yet")
    func busWithoutAService() throws {
        let bus = try PrivateSessionBus.start()
        defer { bus.stop() }
        let events = ReportedEvents<NotificationDesktopEvent>()
        let desktop = try FreedesktopNotificationDesktop.connector(bus.address, events.handler)
        #expect(
            desktop.description.hasPrefix("the session bus \(bus.address), where no notification service answers yet: ")
        )
        #expect(desktop.description.contains("ServiceUnknown"), "\(desktop.description)")
        try desktop.show(Self.content, token: 1)
        let failure = events.first { event -> String? in
            if case .failed(1, let message) = event { message } else { nil }
        }
        #expect(failure?.contains("ServiceUnknown") == true, "events: \(events.all)")
    }

    @Test("NT-2: the connector throws the client's error when nothing listens at the address")
    func unreachableBusThrows() {
        #expect(throws: DesktopNotificationsError.self) {
            _ = try FreedesktopNotificationDesktop.connector("unix:path=/nonexistent/offstage-bus") { _ in }
        }
    }
}
