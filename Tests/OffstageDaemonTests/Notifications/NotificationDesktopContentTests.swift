import OffstageCore
@testable import OffstageDaemon
import Testing

/// How a delivered notification looks on the desktop (SPEC NT-2): what the daemon decides, so a desktop client only
/// carries it to the notification service.
@Suite("A notification as the desktop shows it")
struct NotificationDesktopContentTests {
    static func record(_ content: NotificationContent) -> DeliveredNotification {
        let request = NotificationRequest(identifier: "wake", content: content, trigger: .timeInterval(seconds: 60, repeats: false))
        let due = Instant(secondsSinceEpoch: 1_800_000_000)
        return DeliveredNotification(app: "com.example.alarm", request: request, due: due, deliveredAt: due, late: false, route: .user)
    }

    @Test("NT-2: the title leads, the subtitle and body follow as lines; without a title the subtitle, then the app, leads")
    func text() {
        let full = NotificationDesktopContent(
            Self.record(NotificationContent(title: "Alarm", subtitle: "Seven", body: "Wake up", threadIdentifier: "t")),
            category: nil, bundlePath: nil, expireTimeout: -1)
        #expect(full.summary == "Alarm" && full.body == "Seven\nWake up" && full.threadIdentifier == "t")
        #expect(full.key == "com.example.alarm/wake@1800000000000000000" && full.expireTimeout == -1)
        let noTitle = NotificationDesktopContent(
            Self.record(NotificationContent(subtitle: "Seven", body: "Wake up")), category: nil, bundlePath: nil, expireTimeout: 5_000)
        #expect(noTitle.summary == "Seven" && noTitle.body == "Wake up" && noTitle.expireTimeout == 5_000)
        let bodyOnly = NotificationDesktopContent(
            Self.record(NotificationContent(body: "Wake up")), category: nil, bundlePath: nil, expireTimeout: -1)
        #expect(bodyOnly.summary == "com.example.alarm" && bodyOnly.body == "Wake up")
    }

    @Test("NT-2: a click on the notification is `default`; its category's actions are buttons, in order")
    func actions() {
        let category = NotificationCategory(
            identifier: "alarm",
            actions: [
                NotificationActionButton(identifier: "snooze", title: "Snooze"),
                NotificationActionButton(identifier: "stop", title: "Stop", destructive: true),
            ])
        let content = NotificationDesktopContent(
            Self.record(NotificationContent(title: "Alarm", categoryIdentifier: "alarm")), category: category, bundlePath: nil,
            expireTimeout: -1)
        #expect(content.actions.map(\.identifier) == ["default", "snooze", "stop"])
        #expect(content.actions.map(\.label) == ["Open", "Snooze", "Stop"])
    }

    @Test("NT-1: `default` plays the theme's sound, a name plays that file of the app's bundle, a path plays nothing")
    func sound() {
        #expect(NotificationDesktopContent.sound(nil, bundlePath: "/b") == nil)
        #expect(NotificationDesktopContent.sound("default", bundlePath: nil) == .themeName("message-new-instant"))
        #expect(NotificationDesktopContent.sound("bell.caf", bundlePath: "/b/alarm") == .file("/b/alarm/bell.caf"))
        for escaping in ["../../etc/passwd", "/etc/passwd", "..", "."] {
            #expect(NotificationDesktopContent.sound(escaping, bundlePath: "/b/alarm") == nil, "\(escaping)")
        }
    }
}
