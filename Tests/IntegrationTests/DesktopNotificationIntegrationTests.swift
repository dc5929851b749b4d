import Foundation
import OffstageProtocol
import TestProcesses
import Testing

/// SPEC NT-2 end to end on a real desktop session: the real daemon on a private `dbus-daemon` with a notification
/// server written with another D-Bus implementation, the real `Alarm` example, the real CLI. The alarm is shown on the
/// desktop once; a click there opens the app as `offstage notifications tap` does; a dismissal there removes it.
@Suite("Local notifications on a desktop session (SPEC NT-2)", .serialized)
struct DesktopNotificationIntegrationTests {
    static let alarm = NotificationIntegrationTests.alarm

    /// Runs `body` with a private bus and its notification server, and a daemon whose session bus it is.
    private func withDesktop(_ body: (PrivateSessionBus, DaemonHarness) throws -> Void) throws {
        let bus = try PrivateSessionBus.start()
        defer { bus.stop() }
        try bus.startServer()
        try withDaemon(environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address]) { daemon in
            try body(bus, daemon)
        }
    }

    /// Installs the alarm due in `seconds`, opens it, force-quits it (so the alarm goes to the user) and waits until
    /// the server has the Notify; returns it and the delivery.
    private func alarmOnTheDesktop(
        _ bus: PrivateSessionBus, _ daemon: DaemonHarness, inSeconds seconds: Double = 2
    ) throws -> (notify: [String: Any], delivered: NotificationsControlInterface.AppDeliveredMessage) {
        try NotificationIntegrationTests.installAlarm(daemon, inSeconds: seconds)
        try NotificationIntegrationTests.openAndSchedule(daemon)
        try daemon.ok("force-quit", Self.alarm)
        try daemon.waitFor(Self.alarm, "notRunning")
        let delivered = try #require(try NotificationIntegrationTests.delivered(daemon).first)
        let records = bus.waitForRecords(1)
        try #require(records.count == 1, "the desktop got \(records)")
        return (records[0], delivered)
    }

    /// The desktop's id of a recorded Notify.
    private func desktopID(_ record: [String: Any]) throws -> Int {
        try #require(record["id"] as? Int)
    }

    @Test("NT-2: the alarm is shown on the desktop with its text, key and sound; a click there opens the app as a tap")
    func shownAndClickedOnTheDesktop() throws {
        try withDesktop { bus, daemon in
            #expect(
                daemon.daemonOutput.contains(
                    "notifications are shown on the desktop: offstage-test-server 1.0 (Offstage) on the session bus "
                        + bus.address), "\(daemon.daemonOutput)")
            let (notify, delivered) = try alarmOnTheDesktop(bus, daemon)
            #expect(notify["app_name"] as? String == Self.alarm)
            #expect(notify["summary"] as? String == "Alarm")
            #expect(notify["body"] as? String == "Time to wake up")
            #expect(notify["replaces_id"] as? Int == 0)
            let actions = try #require(notify["actions"] as? [String])
            #expect(actions.first == "default" && actions.count % 2 == 0, "key/label pairs, default first: \(actions)")
            let hints = try #require(notify["hints"] as? [String: [Any]])
            let key = try #require(hints["x-offstage-key"]?.last as? String)
            #expect(hints["x-offstage-key"]?.first as? String == "s")
            let due = try #require(key.split(separator: "@").last.flatMap { Double($0) })
            #expect(key.hasPrefix(Self.alarm + "/alarm@") && abs(due / 1e9 - delivered.due) < 1e-6, "\(key)")
            #expect(
                hints["sound-name"]?.last as? String == "message-new-instant", "the alarm asks for the default sound")
            #expect(hints["x-offstage-thread"] == nil && hints["category"] == nil)

            // The user clicks it on the desktop: the app is launched for it and hears the tap.
            try bus.command("invoke \(try desktopID(notify)) default")
            try daemon.waitUntil("the app heard the tap", timeout: 15) {
                daemon.output(Self.alarm).contains("the user tapped alarm 'alarm'")
            }
            #expect(daemon.output(Self.alarm).contains("did-finish-launching (notification)"))
            try daemon.waitFor(Self.alarm, "active")
            try daemon.waitUntil("the notification left the delivered list") {
                try NotificationIntegrationTests.notifications(daemon, Self.alarm).delivered.isEmpty
            }
            // Gone from the list, so taken off the desktop too; nothing was shown twice.
            #expect(
                PrivateSessionBus.waitFor(timeout: .seconds(10)) { bus.closeRequests().isEmpty ? nil : true } == true)
            #expect(bus.closeRequests() == [UInt32(try desktopID(notify))])
            #expect(bus.records().count == 1)
        }
    }

    @Test("NT-2: the user dismissing it on the desktop removes it from the delivered list and launches nothing")
    func dismissedOnTheDesktop() throws {
        try withDesktop { bus, daemon in
            let (notify, _) = try alarmOnTheDesktop(bus, daemon)
            try bus.command("close \(try desktopID(notify)) 2")
            try daemon.waitUntil("the notification left the delivered list") {
                try NotificationIntegrationTests.notifications(daemon, Self.alarm).delivered.isEmpty
            }
            #expect(try daemon.log(Self.alarm).contains { $0.message.contains("the user chose dismiss on 'alarm'") })
            #expect(try daemon.app(Self.alarm).state == "notRunning", "a dismissal launches nothing")
            #expect(!daemon.output(Self.alarm).contains("did-finish-launching (notification)"))
        }
    }

    @Test("NT-2: after a kill -9 of the daemon and a restart it is not shown again on the desktop, and stays delivered")
    func atMostOnceAcrossAKill() throws {
        try withDesktop { bus, daemon in
            let (_, delivered) = try alarmOnTheDesktop(bus, daemon)
            daemon.crash()
            try daemon.start()
            func deliveredDues() throws -> [Double] {
                try NotificationIntegrationTests.notifications(daemon, Self.alarm).delivered.map(\.due)
            }
            #expect(try deliveredDues() == [delivered.due], "the delivered list still has it")
            // Another alarm, due after the restart, is the barrier: the new daemon would have sent the first one
            // again before it, on the same connection.
            let other = "com.example.other-alarm"
            try NotificationIntegrationTests.installAlarm(daemon, inSeconds: 2, id: other)
            try NotificationIntegrationTests.openAndSchedule(daemon, id: other)
            try daemon.ok("force-quit", other)
            let records = bus.waitForRecords(2)
            #expect(records.map { $0["app_name"] as? String } == [Self.alarm, other], "shown at most once: \(records)")
            #expect(try deliveredDues() == [delivered.due])
        }
    }

    @Test("NT-2: the daemon's log says at start where notifications are shown, or why not, in words a user follows")
    func startLogSaysWhere() throws {
        try withDaemon { daemon in
            #expect(
                daemon.daemonOutput.contains(
                    "notifications are not shown on a desktop: no desktop session (DBUS_SESSION_BUS_ADDRESS is not set)"
                ),
                "\(daemon.daemonOutput)")
        }
        try withDaemon(environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/offstage-bus"]) { daemon in
            #expect(
                daemon.daemonOutput.contains(
                    "notifications are not shown on a desktop: cannot connect to the session bus: no session bus at "
                        + "unix:path=/nonexistent/offstage-bus"), "\(daemon.daemonOutput)")
        }
        let bus = try PrivateSessionBus.start()
        defer { bus.stop() }
        try withDaemon(environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address]) { daemon in
            #expect(
                daemon.daemonOutput.contains(
                    "notifications are shown on the desktop: the session bus \(bus.address), where no notification "
                        + "service answers yet: org.freedesktop.DBus.Error.ServiceUnknown"), "\(daemon.daemonOutput)")
        }
    }
}
