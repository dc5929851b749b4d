import Foundation
import Glibc
import Offstage
import OffstageTesting
import Testing

/// The daemon restarting under a running app (SPEC LC-8): the state survives as with the real one, and the app's
/// SDK attaches again and registers what the old daemon knew.
@Suite("OffstageTesting: the daemon restarts (KIT-2, LC-8)")
@MainActor
struct RestartTests {
    @Test("LC-8: the app in front stays in front and running across a restart: no new launch, no callback")
    func frontAppIsAdopted() async throws {
        let (device, app) = try await TestDeviceTests.weather()
        try await device.open(app)
        let callbacks = app.callbacks
        try await device.restartDaemon()
        #expect(app.state == .active)
        #expect(app.launches == [.user])
        #expect(app.callbacks == callbacks)
        #expect(app.log.contains { $0.contains("adopted") || $0.contains("reattached") }, "\(app.log)")
    }

    @Test("LC-8, SCH-10: a suspended app is adopted, attaches again and is suspended again; its scheduled refresh survives and runs")
    func scheduledWorkSurvives() async throws {
        let (device, app) = try await TestDeviceTests.weather()
        try await device.open(app)
        try await device.home()
        try await device.advance(by: .seconds(15))
        #expect(app.isSuspended)
        try await device.restartDaemon()
        try await device.advance(by: .seconds(15))
        #expect(app.isSuspended, "suspended again once adopted")
        #expect(app.launches == [.user])
        try await device.advance(by: .seconds(24 * 3600))
        #expect(app.callbacks.filter { $0 == .runTask(TestDeviceTests.RefreshingDelegate.identifier) }.count >= 2)
    }

    @Test("TR-6: a download waiting for its server when the daemon restarts goes on, and its file reaches the app")
    func transferSurvives() async throws {
        let (device, app, delegate) = try await TransferTests.openApp()
        _ = try #require(delegate.session).downloadTask(with: URL(string: "https://files.example.com/r.txt")!)
        try await device.home()
        try await device.restartDaemon()
        #expect(device.unansweredRequests == ["https://files.example.com/r.txt"], "started again from the journal")
        try await device.respond(to: "https://files.example.com/r.txt", with: .ok("after the restart"))
        try await device.advance(by: .seconds(5))
        #expect(delegate.events.suffix(2) == ["file after the restart", "completed"], "\(delegate.events)")
        #expect(app.launches == [.user])
    }

    @Test("MODE-2: the SDK hands the VoIP socket off again to the restarted daemon: the server's data still wakes the suspended app")
    func voipSocketIsHandedOffAgain() async throws {
        let (appEnd, server) = try VoIPTests.connection()
        defer { close(appEnd); close(server) }
        let (device, app) = try await VoIPTests.suspendedApp(fd: appEnd)
        try await device.restartDaemon()
        try await device.advance(by: .seconds(15))
        #expect(app.isSuspended)
        #expect(write(server, "BYE", 3) == 3)
        try await device.runUntilIdle()
        #expect((app.delegate as? VoIPTests.VoIPDelegate)?.events.contains("readable: BYE") == true)
    }
}
