import Foundation
import OffstageProtocol
import Testing

/// SPEC NT-1 and NT-2 on the real daemon with the real `Alarm` example: the platform guide's "time to wake up" alarm,
/// delivered once at its time whatever became of the app or the daemon in between.
@Suite("Local notifications on the real daemon (SPEC NT-1, NT-2)", .serialized)
struct NotificationIntegrationTests {
    static let alarm = "com.example.alarm"

    /// Installs the alarm, due `seconds` after it launches.
    static func installAlarm(_ daemon: DaemonHarness, inSeconds seconds: Double, id: String = alarm) throws {
        try daemon.install("Alarm", id: id, ["OffstageLinux": ["Environment": ["ALARM_IN_SECONDS": String(seconds)]]])
    }

    /// Opens the alarm and waits until it has scheduled its notification; returns its due time.
    @discardableResult
    static func openAndSchedule(_ daemon: DaemonHarness, id: String = alarm) throws -> Double {
        try daemon.ok("open", id)
        try daemon.waitUntil("the alarm is scheduled") { daemon.output(id).contains("scheduled alarm") }
        let pending = try notifications(daemon, id).pending
        let first = try #require(pending.first, "one pending notification")
        #expect(pending.count == 1 && first.request.identifier == "alarm")
        return first.due
    }

    static func notifications(_ daemon: DaemonHarness, _ id: String? = nil) throws -> NotificationsControlInterface.NotificationsReply {
        try JSONDecoder().decode(
            NotificationsControlInterface.NotificationsReply.self,
            from: Data(try daemon.ok(["--json", "notifications"] + (id.map { [$0] } ?? [])).utf8))
    }

    /// Waits until the app has `count` delivered notifications and returns them.
    static func delivered(
        _ daemon: DaemonHarness, _ id: String = alarm, count: Int = 1, timeout: Double = 15
    ) throws -> [NotificationsControlInterface.AppDeliveredMessage] {
        try daemon.waitUntil("\(count) notification(s) delivered", timeout: timeout) {
            try notifications(daemon, id).delivered.count >= count
        }
        return try notifications(daemon, id).delivered
    }

    @Test("NT-2: the alarm fires once, on time, with the app not running; a tap opens it with launch reason notification")
    func firesWithTheAppNotRunning() throws {
        try withDaemon { daemon in
            try Self.installAlarm(daemon, inSeconds: 3)
            let due = try Self.openAndSchedule(daemon)
            try daemon.ok("force-quit", Self.alarm)
            try daemon.waitFor(Self.alarm, "notRunning")
            let delivered = try Self.delivered(daemon)
            #expect(delivered.count == 1)
            let record = try #require(delivered.first)
            #expect(record.request.identifier == "alarm" && record.request.content.title == "Alarm")
            #expect(record.route == "user")
            #expect(record.due == due)
            // Delivered at its time: the daemon's own record, not this thread's wake-up, says when. (The bound is loose:
            // a loaded machine may run the daemon's timer late; it is then marked late, truthfully.)
            let lateness = record.deliveredAt - due
            #expect(lateness >= 0 && lateness < 5, "delivered \(lateness) s after due")
            #expect(record.late == (lateness > 1), "late iff more than the 1 s allowed")
            #expect(try Self.notifications(daemon, Self.alarm).pending.isEmpty)
            #expect(try daemon.app(Self.alarm).state == "notRunning", "a notification for the user does not launch the app")
            #expect(try Self.notifications(daemon, Self.alarm).badges.first?.badge == 1)

            // The user taps it: the app opens, hears the response, clears its badge; the notification leaves the list.
            try daemon.ok("notifications", "tap", Self.alarm, "alarm")
            try daemon.waitUntil("the app heard the tap") { daemon.output(Self.alarm).contains("the user tapped alarm 'alarm'") }
            #expect(daemon.output(Self.alarm).contains("did-finish-launching (notification)"))
            try daemon.waitFor(Self.alarm, "active")
            try daemon.waitUntil("the badge is cleared") { try Self.notifications(daemon, Self.alarm).badges.isEmpty }
            #expect(try Self.notifications(daemon, Self.alarm).delivered.isEmpty)
            let callbacks = try daemon.callbacks(Self.alarm)
            let launch = try #require(callbacks.lastIndex(of: "did-finish-launching"))
            #expect(Array(callbacks[launch...].prefix(3)) == ["did-finish-launching", "did-become-active", "notification-response"])
        }
    }

    @Test("NT-2: a suspended app's alarm goes to the user; the app stays frozen")
    func suspendedAppStaysFrozen() throws {
        try withDaemon { daemon in
            try Self.installAlarm(daemon, inSeconds: 3)
            try Self.openAndSchedule(daemon)
            try daemon.ok("home")
            try daemon.waitFor(Self.alarm, "suspended")
            let pid = try #require(try daemon.app(Self.alarm).pid)
            let record = try #require(try Self.delivered(daemon).first)
            #expect(record.route == "user")
            #expect(try daemon.app(Self.alarm).state == "suspended")
            #expect(ProcessProbe.isFrozen(pid))
            #expect(!daemon.output(Self.alarm).contains("went off while the app is in front"))
        }
    }

    @Test("NT-2: with the app in front, the alarm goes to the app (will-present); it asks for a banner, so the user sees it too")
    func activeAppHearsWillPresent() throws {
        try withDaemon { daemon in
            try Self.installAlarm(daemon, inSeconds: 2)
            try Self.openAndSchedule(daemon)
            try daemon.waitUntil("the app was told", timeout: 15) {
                daemon.output(Self.alarm).contains("went off while the app is in front")
            }
            let record = try #require(try Self.delivered(daemon).first)
            #expect(record.route == "user", "the app's answer asked for a banner")
            #expect(try daemon.callbacks(Self.alarm).contains("notification-will-present"))
            #expect(try daemon.app(Self.alarm).state == "active")
        }
    }

    @Test("NT-2: a due time passed while the daemon was killed (-9) is delivered once on start, marked late")
    func lateAfterADaemonCrash() throws {
        try withDaemon { daemon in
            try Self.installAlarm(daemon, inSeconds: 2)
            let due = try Self.openAndSchedule(daemon)
            try daemon.ok("force-quit", Self.alarm)
            try daemon.waitFor(Self.alarm, "notRunning")
            daemon.crash()
            while DaemonHarness.now() < due + 1.5 { usleep(100_000) }
            try daemon.start()
            let record = try #require(try Self.delivered(daemon).first)
            #expect(record.late && record.due == due && record.deliveredAt > due + 1)
            // Restarting again delivers nothing new: exactly once.
            daemon.crash()
            try daemon.start()
            usleep(500_000)
            #expect(try Self.notifications(daemon, Self.alarm).delivered.count == 1)
            #expect(try Self.notifications(daemon, Self.alarm).pending.isEmpty)
        }
    }

    @Test("NT-1: a pending alarm survives a kill -9 of the daemon and fires at its time, not early and not twice")
    func pendingSurvivesACrash() throws {
        try withDaemon { daemon in
            try Self.installAlarm(daemon, inSeconds: 4)
            let due = try Self.openAndSchedule(daemon)
            try daemon.ok("force-quit", Self.alarm)
            daemon.crash()
            try daemon.start()
            #expect(try Self.notifications(daemon, Self.alarm).pending.map(\.due) == [due])
            let record = try #require(try Self.delivered(daemon).first)
            #expect(record.deliveredAt >= due && record.late == (record.deliveredAt - due > 1))
            usleep(300_000)
            #expect(try Self.notifications(daemon, Self.alarm).delivered.count == 1)
        }
    }

    @Test("SET-2: with the app's notifications off, the alarm fires but nobody is shown it")
    func notificationsOff() throws {
        try withDaemon { daemon in
            try Self.installAlarm(daemon, inSeconds: 2)
            try daemon.ok("settings", "--app", Self.alarm, "notifications=off")
            try Self.openAndSchedule(daemon)
            #expect(daemon.output(Self.alarm).contains("notifications are off for this app"))
            try daemon.ok("home")
            try daemon.waitUntil("the alarm fired", timeout: 15) {
                try Self.notifications(daemon, Self.alarm).pending.isEmpty
            }
            #expect(try Self.notifications(daemon, Self.alarm).delivered.isEmpty)
            #expect(try daemon.log(Self.alarm).contains { $0.message.contains("notifications are off") })
        }
    }

    @Test("NT-1: opening the alarm again replaces its notification (one pending, the new due time)")
    func reschedulingReplaces() throws {
        try withDaemon { daemon in
            try Self.installAlarm(daemon, inSeconds: 600)
            let first = try Self.openAndSchedule(daemon)
            try daemon.ok("force-quit", Self.alarm)
            try daemon.waitFor(Self.alarm, "notRunning")
            usleep(50_000)
            let second = try Self.openAndSchedule(daemon)
            let pending = try Self.notifications(daemon, Self.alarm).pending
            #expect(pending.count == 1 && second > first)
        }
    }

    @Test("NT-2, §11: a process that is not an app cannot read or change notifications; the CLI cannot tap what is not there")
    func onlyAppsAndOnlyTheirOwn() throws {
        try withDaemon { daemon in
            try Self.installAlarm(daemon, inSeconds: 600)
            try Self.openAndSchedule(daemon)
            // The test process is not an app: the app interface refuses it, whatever it claims.
            let raw = try RawClient(path: daemon.socket)
            defer { raw.close() }
            let reply = try raw.call(NotificationsInterface.Method.pending)
            #expect(reply["error"] as? String == NotificationsInterface.name + ".NotAnApp", "\(reply)")
            let remove = try raw.call(NotificationsInterface.Method.removePending, ["identifiers": ["alarm"]])
            #expect(remove["error"] as? String == NotificationsInterface.name + ".NotAnApp", "\(remove)")
            #expect(try Self.notifications(daemon, Self.alarm).pending.count == 1, "nothing changed")
            let tap = try daemon.cli(["notifications", "tap", Self.alarm, "alarm"])
            #expect(tap.status != 0 && tap.stderr.contains("no delivered notification 'alarm'"), "\(tap.stderr)")
        }
    }

    @Test("NT-1: bad requests from an app get a clear error and change nothing; an app cannot remove another app's")
    func badInputFromAnApp() throws {
        try withDaemon { daemon in
            try Self.installAlarm(daemon, inSeconds: 600)
            try Self.installAlarm(daemon, inSeconds: 600, id: "com.example.other-alarm")
            try Self.openAndSchedule(daemon)
            let before = try Self.notifications(daemon)
            func request(_ trigger: [String: Any], content: [String: Any] = ["title": "t"]) -> [String: Any] {
                ["request": ["identifier": "x", "content": content, "trigger": trigger]]
            }
            let bad: [(String, [String: Any], String, String)] = [
                ("repeating interval under 60 s", request(["kind": "timeInterval", "seconds": 30, "repeats": true]),
                 "InvalidArgument", "at least 60 s"),
                ("unknown trigger", request(["kind": "sunrise"]), "InvalidArgument", "is not a trigger kind"),
                ("oversized content", request(["kind": "timeInterval", "seconds": 60], content: ["body": String(repeating: "b", count: 5000)]),
                 "InvalidArgument", "more than the 4096 allowed"),
                ("month 13", request(["kind": "calendar", "dateComponents": ["month": 13]]), "InvalidArgument", "month 13"),
                ("unknown zone", request(["kind": "calendar", "dateComponents": ["hour": 7, "timeZone": "Mars/Olympus"]]),
                 "InvalidArgument", "is not a time zone"),
            ]
            let replies = try daemon.callAsApp(Self.alarm, bad.map { (NotificationsInterface.Method.add, $0.1) })
            for ((what, _, error, message), reply) in zip(bad, replies) {
                #expect(reply["error"] as? String == NotificationsInterface.name + "." + error, "\(what): \(reply)")
                let parameters = reply["parameters"] as? [String: Any]
                #expect((parameters?["message"] as? String)?.contains(message) == true, "\(what): \(reply)")
                #expect((parameters?["fix"] as? String)?.isEmpty == false, "\(what) names the fix")
            }
            // The other app removes "alarm": its own (none), never the first app's.
            try daemon.ok("open", "com.example.other-alarm")
            try daemon.waitUntil("the other alarm is scheduled") { daemon.output("com.example.other-alarm").contains("scheduled alarm") }
            _ = try daemon.callAsApp("com.example.other-alarm", [(NotificationsInterface.Method.removePending, ["identifiers": ["alarm"]])])
            let after = try Self.notifications(daemon)
            #expect(after.pending.filter { $0.app == Self.alarm } == before.pending.filter { $0.app == Self.alarm })
            #expect(after.pending.filter { $0.app == "com.example.other-alarm" }.isEmpty)
        }
    }

    @Test("NT-1, CLI-1: offstage device --time-zone moves an alarm set for a time of day; a zone that does not exist is refused")
    func timeZoneMovesTheDailyAlarm() throws {
        try withDaemon { daemon in
            try daemon.install("Alarm", id: Self.alarm, ["OffstageLinux": ["Environment": ["ALARM_AT": "07:00"]]])
            try daemon.ok("device", "--time-zone", "UTC")
            let utc = try Self.openAndSchedule(daemon)
            #expect(Int(utc) % 86_400 == 7 * 3600, "07:00 UTC")
            let shown = try daemon.ok("device", "--time-zone", "Asia/Tokyo")
            #expect(shown.contains("Asia/Tokyo"), "\(shown)")
            let tokyo = try #require(try Self.notifications(daemon, Self.alarm).pending.first?.due)
            #expect(Int(tokyo) % 86_400 == 22 * 3600, "07:00 in Tokyo is 22:00 UTC")
            let refused = try daemon.cli(["device", "--time-zone", "Mars/Olympus"])
            #expect(refused.status != 0 && refused.stderr.contains("Mars/Olympus"), "\(refused.stderr)")
            #expect(try Self.notifications(daemon).timeZone == "Asia/Tokyo", "nothing changed")
            #expect(try Self.notifications(daemon, Self.alarm).pending.first?.due == tokyo)
        }
    }
}
