import Foundation
import OffstageCore
@testable import OffstageDaemon
import Testing

/// The daemon's shell of notification delivery on a desktop (SPEC NT-2): each delivery shown at most once, also across
/// restarts; the desktop's answers recorded; the user's clicks and dismissals on the desktop turned into responses.
@Suite("Notifications on the desktop", .serialized)
struct NotificationDesktopTests {
    typealias Fixture = NotificationEngineFixture

    func withFixture(_ body: (Fixture) throws -> Void) throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        try body(fixture)
    }

    @Test("NT-2: a delivery is shown on the desktop once, recorded as shown with its id, and not again after a restart")
    func shownOnce() throws {
        try withFixture { fixture in
            let desktop = RecordingDesktop()
            let engine = try fixture.engine(desktop: desktop)
            try fixture.fireNow(engine, "wake")
            let shown = try #require(desktop.shown.only)
            #expect(shown.content.summary == "Alarm wake" && shown.content.body == "Wake up")
            #expect(shown.content.appName == Fixture.app.rawValue && shown.content.actions.map(\.identifier) == ["default"])
            #expect(try fixture.deliveries().map(\.desktopState) == [.shown])
            try fixture.onLoop(engine) { engine.desktopEvent(.shown(token: shown.token, desktopID: 42)) }
            #expect(try fixture.deliveries().map(\.desktopID) == [42])

            let again = RecordingDesktop()
            let restarted = try fixture.engine(desktop: again)
            try fixture.settle(restarted)
            #expect(again.shown.isEmpty)
            #expect(try fixture.onLoop(restarted) { restarted.core.notifications.delivered[Fixture.app]?.count } == 1)
        }
    }

    @Test("NT-2: a burst of firings (all due at once) is recorded and each shown once")
    func burst() throws {
        try withFixture { fixture in
            let desktop = RecordingDesktop()
            let engine = try fixture.engine(desktop: desktop)
            try fixture.onLoop(engine) {
                let due = engine.now
                for number in 0..<50 {
                    let request = NotificationRequest(
                        identifier: "n\(number)", content: NotificationContent(title: "Reminder \(number)"),
                        trigger: .date(due + .microseconds(number)))
                    engine.apply(try engine.core.addNotification(Fixture.app, pid: Fixture.pid, request, at: engine.now).actions)
                }
                usleep(3_000)
                engine.apply(engine.core.advance(to: engine.now))
            }
            // The limit of delivered notifications per app (64) keeps all 50.
            #expect(desktop.shown.count == 50)
            #expect(Set(desktop.shown.map(\.content.summary)) == Set((0..<50).map { "Reminder \($0)" }))
            let rows = try fixture.deliveries()
            #expect(rows.count == 50 && rows.allSatisfy { $0.desktopState == .shown })
        }
    }

    @Test("NT-2: a delivery recorded but not yet shown when the daemon stopped is shown after the restart, once")
    func shownAfterRestart() throws {
        try withFixture { fixture in
            let engine = try fixture.engine(desktop: RecordingDesktop())
            try fixture.fireNow(engine, "wake")
            // As if the daemon had stopped between the firing's transaction and the desktop.
            let key = try #require(try fixture.deliveries().only?.record.key)
            try OffstageStore(path: fixture.folder + "/offstage.sqlite").recordDesktop(key, state: .pending, desktopID: nil)
            let desktop = RecordingDesktop()
            _ = try fixture.engine(desktop: desktop)
            #expect(desktop.shown.map(\.content.key) == [key.description])
            #expect(try fixture.deliveries().map(\.desktopState) == [.shown])
            let third = RecordingDesktop()
            _ = try fixture.engine(desktop: third)
            #expect(third.shown.isEmpty)
        }
    }

    @Test("NT-2: with no desktop a delivery is recorded as never shown, so a later start with a desktop shows nothing stale")
    func noDesktop() throws {
        try withFixture { fixture in
            let engine = try fixture.engine(desktop: nil)
            try fixture.fireNow(engine, "wake")
            #expect(try fixture.deliveries().map(\.desktopState) == [.none])
            #expect(try fixture.onLoop(engine) { engine.core.notifications.delivered[Fixture.app]?.count } == 1)
            let desktop = RecordingDesktop()
            _ = try fixture.engine(desktop: desktop)
            #expect(desktop.shown.isEmpty)
        }
    }

    @Test("NT-2: a desktop that refuses a notification, or cannot be reached, leaves it recorded as never shown")
    func refused() throws {
        try withFixture { fixture in
            let desktop = RecordingDesktop()
            let engine = try fixture.engine(desktop: desktop)
            try fixture.fireNow(engine, "one")
            let token = try #require(desktop.shown.only?.token)
            try fixture.onLoop(engine) { engine.desktopEvent(.failed(token: token, message: "too many notifications")) }
            desktop.state.withLock { $0.refuseToSend = true }
            try fixture.fireNow(engine, "two")
            #expect(try fixture.deliveries().map(\.desktopState) == [.none, .none])
            let again = RecordingDesktop()
            _ = try fixture.engine(desktop: again)
            #expect(again.shown.isEmpty)
        }
    }

    @Test("NT-2: a click on the desktop is the user's tap: the notification leaves the list, the store and the desktop")
    func clicked() throws {
        try withFixture { fixture in
            let desktop = RecordingDesktop()
            let engine = try fixture.engine(desktop: desktop)
            try fixture.fireNow(engine, "wake")
            let token = try #require(desktop.shown.only?.token)
            try fixture.onLoop(engine) {
                engine.desktopEvent(.shown(token: token, desktopID: 7))
                engine.desktopEvent(.clicked(desktopID: 7, action: "default"))
                // The desktop closes what was clicked; that is no dismissal of anything left.
                engine.desktopEvent(.closed(desktopID: 7, byUser: true))
            }
            #expect(try fixture.onLoop(engine) { engine.core.notifications.delivered[Fixture.app] } == nil)
            #expect(try fixture.onLoop(engine) { engine.core.device.foregroundApp } == Fixture.app)
            #expect(desktop.withdrawn == [7])
            #expect(try fixture.deliveries().isEmpty)
        }
    }

    @Test("NT-2: dismissed on the desktop by the user, a notification leaves the list; one that expired stays")
    func dismissed() throws {
        try withFixture { fixture in
            let desktop = RecordingDesktop()
            let engine = try fixture.engine(desktop: desktop)
            try fixture.fireNow(engine, "expires")
            try fixture.fireNow(engine, "dismissed")
            let tokens = desktop.shown.map(\.token)
            try #require(tokens.count == 2)
            try fixture.onLoop(engine) {
                engine.desktopEvent(.shown(token: tokens[0], desktopID: 1))
                engine.desktopEvent(.shown(token: tokens[1], desktopID: 2))
                engine.desktopEvent(.closed(desktopID: 1, byUser: false))
                engine.desktopEvent(.closed(desktopID: 2, byUser: true))
            }
            let left = try fixture.onLoop(engine) { engine.core.notifications.delivered[Fixture.app]?.map(\.request.identifier) }
            #expect(left == ["expires"])
            // Off the desktop, the remaining one keeps no id there (the desktop may give it to another notification).
            #expect(try fixture.deliveries().map(\.desktopID) == [nil])
            #expect(desktop.withdrawn.isEmpty)
        }
    }

    @Test("NT-2: a notification removed before the desktop answered is taken off the desktop when the answer comes")
    func removedBeforeAnswer() throws {
        try withFixture { fixture in
            let desktop = RecordingDesktop()
            let engine = try fixture.engine(desktop: desktop)
            try fixture.fireNow(engine, "wake")
            let token = try #require(desktop.shown.only?.token)
            try fixture.onLoop(engine) {
                engine.apply(try engine.core.removeDeliveredNotifications(Fixture.app, pid: nil, identifiers: nil, at: engine.now))
                engine.desktopEvent(.shown(token: token, desktopID: 11))
            }
            #expect(desktop.withdrawn == [11])
            #expect(try fixture.deliveries().isEmpty)
        }
    }

    @Test("NT-2: the desktop gone, later deliveries are recorded as never shown")
    func disconnected() throws {
        try withFixture { fixture in
            let desktop = RecordingDesktop()
            let engine = try fixture.engine(desktop: desktop)
            try fixture.onLoop(engine) { engine.desktopEvent(.disconnected(reason: "the session bus closed")) }
            try fixture.fireNow(engine, "wake")
            #expect(desktop.shown.isEmpty)
            #expect(try fixture.deliveries().map(\.desktopState) == [.none])
        }
    }
}

extension Array {
    /// The one element, or nil when there are none or several.
    var only: Element? { count == 1 ? first : nil }
}
