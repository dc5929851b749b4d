import Foundation
import Offstage
import OffstageTesting
import Testing

/// Uninstalling and installing again through the kit (SPEC MAN-3).
@Suite("OffstageTesting: uninstall (KIT-2, MAN-3)")
@MainActor
struct InstallTests {
    /// Registers for pushes, keeps a file and schedules a reminder at launch.
    final class KeepingDelegate: ApplicationDelegate {
        func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
            application.registerForRemoteNotifications()
            try? Data("kept".utf8).write(to: URL(fileURLWithPath: DurableStore.standard.path).deletingLastPathComponent().appendingPathComponent("kept.txt"))
            Task {
                let trigger = TimeIntervalNotificationTrigger(timeInterval: 3600, repeats: false)
                _ = try? await UserNotificationCenter.current().add(
                    NotificationRequest(identifier: "later", content: NotificationContent(title: "Later", body: ""), trigger: trigger))
            }
            return true
        }
    }

    static let id = "com.example.keeping"

    @Test("MAN-3: uninstall ends the app in front with will-terminate and forgets it: its data, its notifications and its token (410) go; installed again it starts afresh")
    func uninstallForgetsEverything() async throws {
        let device = await TestDevice()
        let app = try device.install(bundleIdentifier: Self.id, backgroundModes: ["remote-notification"]) { KeepingDelegate() }
        try await device.open(app)
        let token = try #require(app.pushToken)
        let kept = app.dataDirectory.appendingPathComponent("kept.txt")
        #expect(FileManager.default.fileExists(atPath: kept.path))
        #expect(app.pendingNotifications.map(\.identifier) == ["later"])

        try await device.uninstall(app)
        #expect(!app.isRunning && app.callbacks.last == .willTerminate)
        #expect(!FileManager.default.fileExists(atPath: app.dataDirectory.path))
        #expect(app.pushToken == nil && app.pendingNotifications.isEmpty)
        let gone = try await device.sendPush(#"{"aps":{"alert":"x"}}"#, toDeviceToken: token, headers: ["apns-topic": Self.id])
        #expect(gone.status == 410 && gone.reason == "Unregistered", "\(gone)")
        await #expect(throws: TestKitError.self) { try await device.open(app) }
        await #expect(throws: TestKitError.self) { try await device.uninstall(app) }

        try device.install(bundleIdentifier: Self.id, backgroundModes: ["remote-notification"]) { KeepingDelegate() }
        try await device.open(app)
        #expect(app.pushToken != nil && app.pushToken != token, "a new token")
        #expect(app.launches.last == .user)
    }
}
