import Foundation
import OffstageCore
import OffstageProtocol
@testable import OffstageDaemon
import Testing

/// The device's time zone in the daemon (SPEC NT-1): the machine's from the first start, set by hand with
/// `offstage device`, kept across restarts, and following the machine's when that changes.
@Suite("The device's time zone", .serialized)
struct DeviceTimeZoneTests {
    typealias Fixture = NotificationEngineFixture

    @Test("NT-1: the first start takes the machine's zone; one set by hand is kept across a restart; an unknown one is refused")
    func setByHand() throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        let engine = try fixture.engine(desktop: nil)
        let machine = MachineTimeZone().identifier
        #expect(try fixture.onLoop(engine) { engine.core.device.settings.timeZone } == machine)
        let refused = try fixture.onLoop(engine) { () -> VarlinkError? in
            do throws(VarlinkError) {
                try engine.setDevice(ControlInterface.SetDeviceParameters(lowPowerMode: true, timeZone: "Mars/Olympus"))
                return nil
            } catch {
                return error
            }
        }
        #expect(refused?.name == "io.offstage.Control.InvalidArgument")
        #expect(refused?.stringParameter("message")?.contains("'Mars/Olympus' is not a time zone") == true)
        #expect(refused?.stringParameter("fix")?.contains("Europe/Berlin") == true)
        // All or nothing: low power mode did not change either.
        #expect(try fixture.onLoop(engine) { engine.core.device.settings.lowPowerMode } == false)
        let reply = try fixture.onLoop(engine) { () throws -> ControlInterface.DeviceReply in
            try engine.setDevice(ControlInterface.SetDeviceParameters(timeZone: "Pacific/Auckland"))
            return engine.deviceReply()
        }
        #expect(reply.timeZone == "Pacific/Auckland")
        try fixture.settle(engine)
        let restarted = try fixture.engine(desktop: nil)
        #expect(try fixture.onLoop(restarted) { restarted.deviceReply().timeZone } == "Pacific/Auckland")
    }

    @Test("NT-1: when the machine's zone changes the device follows it, and calendar triggers in the device's zone move")
    func followsMachine() throws {
        let fixture = try Fixture()
        defer { fixture.tearDown() }
        let engine = try fixture.engine(desktop: nil)
        let due = try fixture.onLoop(engine) { () throws -> Instant? in
            let request = NotificationRequest(
                identifier: "seven", content: NotificationContent(title: "Good morning"),
                trigger: .calendar(DateMatch(hour: 7, minute: 0), repeats: true))
            engine.apply(try engine.core.addNotification(Fixture.app, pid: Fixture.pid, request, at: engine.now).actions)
            return engine.core.notifications.pending[Fixture.app]?["seven"]?.due
        }
        try fixture.onLoop(engine) { engine.followMachineTimeZone("Asia/Kolkata", postEventIfSame: true) }
        let moved = try fixture.onLoop(engine) { engine.core.notifications.pending[Fixture.app]?["seven"]?.due }
        #expect(try fixture.onLoop(engine) { engine.core.device.settings.timeZone } == "Asia/Kolkata")
        #expect(moved != nil && moved != due)
        // Moved in the store too, and the machine's zone remembered, so a restart notices only a further change.
        let stored = try OffstageStore(path: fixture.folder + "/offstage.sqlite").loadNotifications().pending
        #expect(stored.map(\.1.due) == [moved])
        #expect(try OffstageStore(path: fixture.folder + "/offstage.sqlite").meta(MachineTimeZone.metaKey) == "Asia/Kolkata")
    }
}
