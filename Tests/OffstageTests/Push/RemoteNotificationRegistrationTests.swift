import Foundation
import OffstageProtocol
import Testing

@testable import Offstage

/// SPEC NT-3, the app's side: registering for remote notifications against a stand-in daemon, and its refusals.
@Suite("Registering for remote notifications (NT-3)", .serialized)
struct RemoteNotificationRegistrationTests {
    static let token = "5f1c" + String(repeating: "ab", count: 30)

    static func daemon(answer: String) throws -> FakeModesDaemon {
        try FakeModesDaemon { method, _ in
            method == PushInterface.Method.register ? answer : #"{"parameters":{}}"#
        }
    }

    static func link(_ daemon: FakeModesDaemon) -> DaemonLink {
        DaemonLink(environment: ["OFFSTAGE_SOCKET": daemon.path])
    }

    @Test("NT-3: register returns the token (hex and bytes), the gateway and the topic; unregister revokes it")
    func register() throws {
        let daemon = try Self.daemon(
            answer: #"{"parameters":{"registration":{"token":"\#(Self.token)","gateway":"http://127.0.0.1:2197","#
                + #""topic":"com.example.messenger"}}}"#)
        defer { daemon.close() }
        let registration = try RemoteNotificationRegistration.register(link: Self.link(daemon))
        #expect(registration.token == Self.token && registration.deviceToken.prefix(2) == [0x5F, 0x1C])
        #expect(registration.gateway.absoluteString == "http://127.0.0.1:2197")
        #expect(registration.topic == "com.example.messenger")
        #expect(RemoteNotificationState.shared.registration == registration)
        try Self.link(daemon).unregisterForRemoteNotifications()
        #expect(daemon.calls("Register").map(\.parameters) == ["{}"])
        #expect(daemon.calls("Unregister").map(\.parameters) == ["{}"])
    }

    @Test("NT-3: the daemon's refusal keeps its message and fix, with a code to branch on")
    func refused() throws {
        let daemon = try Self.daemon(
            answer: #"{"error":"io.offstage.Push.Unavailable","parameters":{"message":"the daemon runs without a "#
                + #"push gateway","fix":"start offstaged with --push-gateway"}}"#)
        defer { daemon.close() }
        #expect(
            throws: RemoteNotificationError(
                .unavailable, "the daemon runs without a push gateway", fix: "start offstaged with --push-gateway")
        ) { try RemoteNotificationRegistration.register(link: Self.link(daemon)) }
        let notAnApp = try Self.daemon(
            answer: #"{"error":"io.offstage.Push.NotAnApp","parameters":{"pid":1,"message":"not an app","fix":"install it"}}"#)
        defer { notAnApp.close() }
        do throws(RemoteNotificationError) {
            _ = try RemoteNotificationRegistration.register(link: Self.link(notAnApp))
            Issue.record("a process that is not an app cannot register")
        } catch {
            #expect(error.code == .notRunning && error.fix == "install it")
        }
    }

    @Test("NT-3: an older daemon without io.offstage.Push, or no daemon, is unavailable with the fix")
    func unavailable() throws {
        let old = try Self.daemon(
            answer: #"{"error":"org.varlink.service.InterfaceNotFound","parameters":{"interface":"io.offstage.Push"}}"#)
        defer { old.close() }
        do throws(RemoteNotificationError) {
            _ = try RemoteNotificationRegistration.register(link: Self.link(old))
            Issue.record("an older daemon cannot register")
        } catch {
            #expect(error.code == .unavailable && error.fix.contains("update offstaged"))
        }
        let none = DaemonLink(environment: ["OFFSTAGE_SOCKET": "/nonexistent/d.sock"])
        do throws(RemoteNotificationError) {
            _ = try RemoteNotificationRegistration.register(link: none)
            Issue.record("registering without a daemon must fail")
        } catch {
            #expect(error.code == .unavailable && error.fix.contains("offstaged"))
        }
    }

    @Test("NT-3: a registration the SDK cannot read (not 64 hex digits) is refused, not passed on")
    func unreadable() throws {
        let daemon = try Self.daemon(
            answer: #"{"parameters":{"registration":{"token":"abc","gateway":"http://127.0.0.1:2197","topic":"t"}}}"#)
        defer { daemon.close() }
        #expect(throws: RemoteNotificationError.self) {
            try RemoteNotificationRegistration.register(link: Self.link(daemon))
        }
    }
}
