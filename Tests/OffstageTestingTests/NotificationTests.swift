import Foundation
import Offstage
import OffstageTesting
import Testing

/// Local notifications through the kit (SPEC NT-1, NT-2): the app's own `UserNotificationCenter` calls and delegate.
@Suite("OffstageTesting: local notifications (KIT-2, KIT-3)")
@MainActor
struct NotificationTests {
    /// Schedules a reminder at launch; as the notification delegate, shows one that fires in front as a banner when
    /// told to, and records taps. `hangs`: its will-present method never returns.
    final class ReminderDelegate: ApplicationDelegate, UserNotificationCenterDelegate {
        let banner: Bool
        let hangs: Bool
        var presented: [String] = []
        var tapped: [String] = []

        init(banner: Bool = true, hangs: Bool = false) {
            self.banner = banner
            self.hangs = hangs
        }

        func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
            UserNotificationCenter.current().delegate = self
            Task {
                let content = NotificationContent(title: "Stand up", body: "An hour has passed")
                let trigger = TimeIntervalNotificationTrigger(timeInterval: 3600, repeats: false)
                _ = try? await UserNotificationCenter.current().add(
                    NotificationRequest(identifier: "stand-up", content: content, trigger: trigger))
            }
            return true
        }

        func userNotificationCenter(
            _ center: UserNotificationCenter, willPresent notification: UserNotification
        ) async -> NotificationPresentationOptions {
            presented.append(notification.request.identifier)
            if hangs { try? await Task.sleep(for: .seconds(3600)) }
            return banner ? .banner : []
        }

        func userNotificationCenter(_ center: UserNotificationCenter, didReceive response: NotificationResponse) async {
            tapped.append(response.notification.request.identifier)
        }
    }

    @Test("NT-1: a notification the app scheduled for an hour ahead is shown at that hour while the app is suspended")
    func shownWhileSuspended() async throws {
        let device = await TestDevice()
        let app = try device.install(bundleIdentifier: "com.example.reminders") { ReminderDelegate() }
        try await device.open(app)
        let opened = device.now
        #expect(app.pendingNotifications.map(\.identifier) == ["stand-up"])
        #expect(app.pendingNotifications.first?.due == opened.addingTimeInterval(3600))
        try await device.home()
        try await device.advance(by: .seconds(3599))
        #expect(device.shownNotifications.isEmpty)
        try await device.advance(by: .seconds(1))
        #expect(device.shownNotifications.map(\.title) == ["Stand up"])
        #expect(device.shownNotifications.first?.deliveredAt == opened.addingTimeInterval(3600))
        #expect(app.isSuspended, "showing a notification does not wake the app")
        #expect(app.deliveredNotifications.map(\.identifier) == ["stand-up"])

        try await device.tapNotification("stand-up", of: app)
        #expect((app.delegate as? ReminderDelegate)?.tapped == ["stand-up"])
        #expect(app.state == .active, "a tap brings the app to the front")
    }

    @Test("NT-2: in front, the delegate's will-present decides: a banner is shown, [] keeps it with the app")
    func willPresentInFront() async throws {
        for banner in [true, false] {
            let device = await TestDevice()
            let app = try device.install(bundleIdentifier: "com.example.reminders") { ReminderDelegate(banner: banner) }
            try await device.open(app)
            try await device.advance(by: .seconds(3600))
            #expect((app.delegate as? ReminderDelegate)?.presented == ["stand-up"])
            #expect(app.callbacks.contains(.other("notificationWillPresent")))
            #expect(device.shownNotifications.count == (banner ? 1 : 0))
        }
    }

    @Test("A delegate method that never returns fails the test with the callback's name instead of hanging it")
    func delegateThatNeverReturns() async throws {
        let device = await TestDevice()
        device.handlerTimeout = .milliseconds(200)
        let app = try device.install(bundleIdentifier: "com.example.reminders") { ReminderDelegate(hangs: true) }
        try await device.open(app)
        await #expect(throws: TestKitError.handlerDidNotReturn(callback: "notificationWillPresent", after: .milliseconds(200))) {
            try await device.advance(by: .seconds(3600))
        }
    }
}
