import Foundation
import OffstageProtocol
import Testing

/// Local notifications end to end on the real daemon (SPEC NT-1, NT-2, MAN-3): an app's process adds them through
/// io.offstage.Notifications (a raw Varlink client inside the app's cgroup, so the daemon knows the app from the
/// connection), and the user sees and taps them through io.offstage.NotificationsControl.
@Suite("Notifications: delivery on the real daemon", .serialized)
struct NotificationDeliveryIntegrationTests {
    static let app = "com.example.tea"
    static let other = "com.example.other"

    /// `Notifications` of one app, decoded.
    static func notifications(_ daemon: DaemonHarness, app: String? = nil) throws -> NotificationsControlInterface.NotificationsReply {
        let client = try RawClient(path: daemon.socket)
        defer { client.close() }
        let reply = try client.call(NotificationsControlInterface.Method.notifications, app.map { ["app": $0] } ?? [:])
        let parameters = try NotificationControlIntegrationTests.parameters(reply)
        let data = try JSONSerialization.data(withJSONObject: parameters)
        return try JSONDecoder().decode(NotificationsControlInterface.NotificationsReply.self, from: data)
    }

    static func request(_ identifier: String, _ trigger: [String: Any], content: [String: Any] = ["title": "Tea"]) -> [String: Any] {
        ["request": ["identifier": identifier, "content": content, "trigger": trigger]]
    }

    @Test("NT-1, NT-2, MAN-3: a notification fires at its time to the user, once across a restart; a tap opens the app; uninstall removes every one")
    func endToEnd() throws {
        try withDaemon { daemon in
            try daemon.install("FiniteTask", id: Self.app)
            try daemon.install("FiniteTask", id: Self.other)
            try daemon.ok("open", Self.app)
            try daemon.waitFor(Self.app, "active")
            // The app goes to the background (running its background task): its notifications are for the user.
            try daemon.ok("open", Self.other)
            try daemon.waitFor(Self.other, "active")
            let added = DaemonHarness.now()
            let method = NotificationsInterface.Method.self
            let replies = try daemon.callAsApp(
                Self.app,
                [
                    (method.add, Self.request("soon", ["kind": "timeInterval", "seconds": 1], content: ["title": "Tea", "badge": 2, "userInfo": ["cup": 1]])),
                    (method.add, Self.request("daily", ["kind": "calendar", "repeats": true, "dateComponents": ["hour": 7, "minute": 0]])),
                    (method.add, Self.request("often", ["kind": "timeInterval", "seconds": 10, "repeats": true])),
                    (method.pending, [:]),
                    (method.settings, [:]),
                ])
            let returned = DaemonHarness.now()
            let errors = replies.map { $0["error"] as? String }
            #expect(errors == [nil, nil, "io.offstage.Notifications.InvalidArgument", nil, nil], "\(replies)")
            let due = try #require((replies[0]["parameters"] as? [String: Any])?["due"] as? Double)
            // One second after the daemon took the call: between this thread's clock before the call and after it.
            #expect(due >= added + 1 - 0.001 && due <= returned + 1 + 0.001, "due \(due), called \(added)...\(returned)")
            #expect(((replies[3]["parameters"] as? [String: Any])?["pending"] as? [Any])?.count == 2)
            let settings = replies[4]["parameters"] as? [String: Any]
            #expect(settings?["allowed"] as? Bool == true && settings?["timeZone"] as? String != nil)

            try daemon.waitUntil("the notification is delivered", timeout: 10) {
                try !Self.notifications(daemon, app: Self.app).delivered.isEmpty
            }
            let delivered = try Self.notifications(daemon, app: Self.app)
            #expect(delivered.delivered.map(\.request.identifier) == ["soon"] && delivered.delivered.first?.route == "user")
            #expect(delivered.delivered.first?.request.content.userInfo == ["cup": .int(1)])
            #expect(delivered.pending.map(\.request.identifier) == ["daily"])
            #expect(delivered.badges.map(\.badge) == [2])

            // Once, not twice, across a restart; the repeating one keeps its time.
            daemon.stop()
            try daemon.start()
            let restarted = try Self.notifications(daemon, app: Self.app)
            #expect(restarted.delivered.map(\.due) == delivered.delivered.map(\.due))
            #expect(restarted.pending == delivered.pending && restarted.badges == delivered.badges)

            // A tap needs the device unlocked, as opening the app does.
            try daemon.ok("lock")
            let client = try RawClient(path: daemon.socket)
            defer { client.close() }
            let locked = try client.call(NotificationsControlInterface.Method.tap, ["app": Self.app, "identifier": "soon"])
            #expect(locked["error"] as? String == "io.offstage.NotificationsControl.DeviceLocked", "\(locked)")
            #expect(try Self.notifications(daemon, app: Self.app).delivered.count == 1)
            try daemon.ok("unlock")
            _ = try NotificationControlIntegrationTests.parameters(
                try client.call(NotificationsControlInterface.Method.tap, ["app": Self.app, "identifier": "soon"]))
            try daemon.waitFor(Self.app, "active")
            #expect(try daemon.app(Self.app).launchReason == "notification")
            #expect(try Self.notifications(daemon, app: Self.app).delivered.isEmpty)

            // Uninstalling removes every notification of the app, for good.
            try daemon.ok("uninstall", Self.app)
            let cleared = try Self.notifications(daemon)
            #expect(cleared.pending.isEmpty && cleared.delivered.isEmpty && cleared.badges.isEmpty)
            daemon.stop()
            try daemon.start()
            let afterRestart = try Self.notifications(daemon)
            #expect(afterRestart.pending.isEmpty && afterRestart.delivered.isEmpty && afterRestart.badges.isEmpty)
        }
    }

    @Test("§11 reliability, NT-2: a kill -9 of the daemon before a notification's time loses it not; after its delivery, repeats it not")
    func killedDaemon() throws {
        try withDaemon { daemon in
            try daemon.install("FiniteTask", id: Self.app)
            try daemon.install("FiniteTask", id: Self.other)
            try daemon.ok("open", Self.app)
            try daemon.waitFor(Self.app, "active")
            try daemon.ok("open", Self.other)
            try daemon.waitFor(Self.other, "active")
            let replies = try daemon.callAsApp(
                Self.app,
                [(NotificationsInterface.Method.add, Self.request("soon", ["kind": "timeInterval", "seconds": 1]))])
            #expect(replies.map { $0["error"] as? String } == [nil], "\(replies)")
            // Down at its time: delivered when the daemon is back, marked late, and once.
            daemon.crash()
            // More than the lateness allowed (notificationLateAfter, 1 s) after its time.
            usleep(3_000_000)
            try daemon.start()
            let late = try Self.notifications(daemon, app: Self.app)
            #expect(late.pending.isEmpty && late.delivered.map(\.request.identifier) == ["soon"], "\(late)")
            #expect(late.delivered.first?.late == true)
            daemon.crash()
            try daemon.start()
            let again = try Self.notifications(daemon, app: Self.app)
            #expect(again.delivered.map(\.due) == late.delivered.map(\.due) && again.pending.isEmpty)
            #expect(try daemon.log(Self.app).filter { $0.message.hasPrefix("delivered 'soon'") }.count == 1)
        }
    }
}
