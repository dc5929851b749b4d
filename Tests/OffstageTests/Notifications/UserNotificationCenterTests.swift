import Foundation
import OffstageProtocol
import Testing

@testable import Offstage

/// SPEC NT-1 and NT-2, the app's side: the center's calls against a stand-in daemon, and how the two notification
/// callbacks reach the delegate and are answered.
@Suite("UserNotificationCenter (NT-1, NT-2)", .serialized)
@MainActor
struct UserNotificationCenterTests {
    /// Records what the delegate heard, and how many callbacks were answered when it did.
    final class Recorder: UserNotificationCenterDelegate {
        var heard: [String] = []
        var options: NotificationPresentationOptions = []
        var answeredWhileHandling: [Int] = []
        var answered: () -> Int = { 0 }
        var userInfo: [String: any Sendable] = [:]

        func userNotificationCenter(
            _ center: UserNotificationCenter, willPresent notification: UserNotification
        ) async -> NotificationPresentationOptions {
            try? await Task.sleep(for: .milliseconds(30))  // an async handler: the answer waits for it
            answeredWhileHandling.append(answered())
            heard.append("willPresent \(notification.request.identifier)")
            userInfo = notification.request.content.userInfo
            return options
        }

        func userNotificationCenter(_ center: UserNotificationCenter, didReceive response: NotificationResponse) async {
            try? await Task.sleep(for: .milliseconds(30))
            answeredWhileHandling.append(answered())
            heard.append("didReceive \(response.notification.request.identifier) \(response.actionIdentifier)")
        }
    }

    /// A stand-in daemon: Add answers with one dropped request (and refuses `full`); Settings and Pending answer.
    static func daemon() throws -> FakeModesDaemon {
        try FakeModesDaemon { method, parameters in
            switch method {
            case NotificationsInterface.Method.add:
                let request = parameters["request"] as? [String: Any]
                if request?["identifier"] as? String == "full" {
                    return #"{"error":"io.offstage.Notifications.TooManyPendingRequests","parameters":"#
                        + #"{"message":"the app has 128 pending notifications","fix":"remove some first"}}"#
                }
                return #"{"parameters":{"due":1795500000,"dropped":["old"]}}"#
            case NotificationsInterface.Method.settings:
                return #"{"parameters":{"allowed":false,"badge":2,"timeZone":"Europe/Berlin"}}"#
            case NotificationsInterface.Method.pending:
                return
                    #"{"parameters":{"pending":[{"request":\#(Self.request),"addedAt":1795499940,"due":1795500000}]}}"#
            default:
                return #"{"parameters":{}}"#
            }
        }
    }

    nonisolated static let request =
        #"{"identifier":"alarm","content":{"title":"Alarm","body":"Time to wake up","sound":"default","badge":1,"#
        + #""userInfo":{"n":1}},"trigger":{"kind":"timeInterval","seconds":60}}"#

    /// A notification callback as it comes on the wire.
    static func callback(_ id: UInt64, _ kind: String, action: String? = nil) throws -> AppInterface.CallbackMessage {
        let delivered =
            #"{"request":\#(request),"due":1795500000,"deliveredAt":1795500000.5,"late":false,"route":"app"}"#
        let json =
            #"{"id":\#(id),"kind":"\#(kind)","notification":\#(delivered)"#
            + (action.map { #","actionIdentifier":"\#($0)""# } ?? "") + "}"
        return try JSONDecoder().decode(AppInterface.CallbackMessage.self, from: Data(json.utf8))
    }

    static func center(_ daemon: FakeModesDaemon) -> UserNotificationCenter {
        UserNotificationCenter(link: DaemonLink(environment: ["OFFSTAGE_SOCKET": daemon.path]))
    }

    /// The calls the daemon read, once every call sent before this has been read (a call on the same connection).
    static func calls(_ daemon: FakeModesDaemon, _ center: UserNotificationCenter) -> [FakeModesDaemon.Call] {
        _ = try? center.call("io.offstage.Test.Barrier", NoParameters(), EmptyReply.self)
        return daemon.calls.filter { !$0.method.hasSuffix(".Barrier") }
    }

    @Test("NT-1: add sends the request and returns what was dropped; the daemon's refusal keeps its code and fix")
    func add() async throws {
        let daemon = try Self.daemon()
        defer { daemon.close() }
        let center = Self.center(daemon)
        let content = NotificationContent(title: "Alarm", body: "Time to wake up", sound: .default)
        let dropped = try await center.add(
            NotificationRequest(
                identifier: "alarm", content: content,
                trigger: TimeIntervalNotificationTrigger(timeInterval: 60, repeats: false)))
        #expect(dropped == ["old"])
        #expect(
            daemon.calls("Add").map(\.parameters) == [
                #"{"request":{"content":{"body":"Time to wake up","sound":"default","title":"Alarm"},"#
                    + #""identifier":"alarm","trigger":{"kind":"timeInterval","repeats":false,"seconds":60}}}"#
            ])
        await #expect(
            throws: NotificationError(
                .tooManyPending, "the app has 128 pending notifications", fix: "remove some first")
        ) { try await center.add(NotificationRequest(identifier: "full", content: content, trigger: nil)) }
        let short = TimeIntervalNotificationTrigger(timeInterval: 10, repeats: true)
        await #expect(throws: NotificationError.self) {
            try await center.add(NotificationRequest(identifier: "short", content: content, trigger: short))
        }
        #expect(daemon.calls("Add").count == 2, "a request refused locally is not sent")
    }

    @Test("NT-1: without a daemon the error says so and how to fix it")
    func unavailable() async throws {
        let center = UserNotificationCenter(link: DaemonLink(environment: ["OFFSTAGE_SOCKET": "/nonexistent/d.sock"]))
        do {
            _ = try await center.pendingNotificationRequests()
            Issue.record("listing without a daemon must fail")
        } catch {
            #expect(error.code == .unavailable && error.fix.contains("offstaged"))
        }
    }

    @Test("SET-2, NT-1: authorization is the per-app setting; settings, pending and removals are the daemon's")
    func settingsAndLists() async throws {
        let daemon = try Self.daemon()
        defer { daemon.close() }
        let center = Self.center(daemon)
        #expect(try await center.requestAuthorization(options: [.alert, .sound]) == false)
        #expect(
            try await center.notificationSettings()
                == NotificationSettings(
                    authorizationStatus: .denied, badgeCount: 2, timeZoneIdentifier: "Europe/Berlin"))
        let pending = try await center.pendingNotificationRequests()
        #expect(pending.map(\.identifier) == ["alarm"] && pending.first?.content.userInfo["n"] as? Int == 1)
        #expect((pending.first?.trigger as? TimeIntervalNotificationTrigger)?.timeInterval == 60)
        center.removePendingNotificationRequests(withIdentifiers: ["alarm"])
        center.removeAllPendingNotificationRequests()
        center.removeAllDeliveredNotifications()
        try await center.setBadgeCount(0)
        center.setNotificationCategories([
            NotificationCategory(
                identifier: "wake", actions: [NotificationAction(identifier: "snooze", title: "Snooze")])
        ])
        #expect(daemon.calls("RemovePending").map(\.parameters) == [#"{"identifiers":["alarm"]}"#, "{}"])
        #expect(daemon.calls("RemoveDelivered").map(\.parameters) == ["{}"])
        #expect(daemon.calls("SetBadge").map(\.parameters) == ["{}"], "0 removes the badge")
        #expect(
            daemon.calls("SetCategories").map(\.parameters) == [
                #"{"categories":[{"actions":[{"destructive":false,"foreground":false,"identifier":"snooze","#
                    + #""title":"Snooze"}],"identifier":"wake"}]}"#
            ])
    }

    @Test("NT-2: will-present asks the delegate; a banner answers present true, then the callback is answered")
    func willPresentBanner() async throws {
        let daemon = try Self.daemon()
        defer { daemon.close() }
        let center = Self.center(daemon)
        let recorder = Recorder()
        recorder.options = [.banner, .sound]
        recorder.answered = { daemon.calls("CallbackDone").count }
        center.delegate = recorder
        await center.respond(to: try Self.callback(7, "notificationWillPresent"))
        #expect(recorder.heard == ["willPresent alarm"] && recorder.answeredWhileHandling == [0])
        #expect(recorder.userInfo["n"] as? Int == 1)
        let calls = Self.calls(daemon, center)
        #expect(
            calls.map(\.method) == [NotificationsInterface.Method.answerWillPresent, AppInterface.Method.callbackDone])
        #expect(calls.map(\.parameters) == [#"{"due":1795500000,"identifier":"alarm","present":true}"#, #"{"id":7}"#])
    }

    @Test("NT-2: sound or badge alone, or no delegate at all, keeps the notification with the app (present false)")
    func willPresentKept() async throws {
        let daemon = try Self.daemon()
        defer { daemon.close() }
        let center = Self.center(daemon)
        await center.respond(to: try Self.callback(1, "notificationWillPresent"))
        let recorder = Recorder()
        recorder.options = [.sound, .badge]
        center.delegate = recorder
        await center.respond(to: try Self.callback(2, "notificationWillPresent"))
        let calls = Self.calls(daemon, center)
        #expect(
            calls.map(\.parameters) == [
                #"{"due":1795500000,"identifier":"alarm","present":false}"#, #"{"id":1}"#,
                #"{"due":1795500000,"identifier":"alarm","present":false}"#, #"{"id":2}"#,
            ])
    }

    @Test("NT-2: a response reaches did-receive with its action; the callback is answered after the handler returns")
    func didReceive() async throws {
        let daemon = try Self.daemon()
        defer { daemon.close() }
        let center = Self.center(daemon)
        let recorder = Recorder()
        recorder.answered = { daemon.calls("CallbackDone").count }
        center.delegate = recorder
        // As the main loop hands it over: in a task, answered when the task is done.
        center.handle(try Self.callback(3, "notificationResponse"))
        #expect(daemon.calls("CallbackDone").isEmpty, "not answered when the main loop hands it over")
        for _ in 0..<100 where Self.calls(daemon, center).isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        await center.respond(to: try Self.callback(4, "notificationResponse", action: "snooze"))
        #expect(recorder.heard == ["didReceive alarm default", "didReceive alarm snooze"])
        #expect(recorder.answeredWhileHandling == [0, 1])
        #expect(Self.calls(daemon, center).map(\.parameters) == [#"{"id":3}"#, #"{"id":4}"#])
    }

    @Test("NT-2: a response at launch, before there is a delegate, reaches the first one set")
    func responseKeptForDelegate() async throws {
        let daemon = try Self.daemon()
        defer { daemon.close() }
        let center = Self.center(daemon)
        await center.respond(to: try Self.callback(5, "notificationResponse"))
        #expect(Self.calls(daemon, center).map(\.parameters) == [#"{"id":5}"#], "answered at once: nothing to wait for")
        let recorder = Recorder()
        center.delegate = recorder
        #expect(recorder.heard.isEmpty, "given after the call that set the delegate returns")
        for _ in 0..<100 where recorder.heard.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        #expect(recorder.heard == ["didReceive alarm default"])
    }

    @Test("NT-2: launches for a tap are in the foreground; for a background action, in the background")
    func launchReasons() {
        #expect(LaunchReason(rawValue: "notification") == .notification && !LaunchReason.notification.isBackground)
        #expect(LaunchReason(rawValue: "notification-action") == .notificationAction)
        #expect(LaunchReason.notificationAction.isBackground)
    }
}
