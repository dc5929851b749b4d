import Foundation
import Offstage
import OffstageTesting
import Testing

/// The history of scheduled work (SPEC SCH-8) and memory pressure (SPEC MEM-1) through the kit.
@Suite("OffstageTesting: explain history and memory pressure (KIT-2, KIT-3)")
@MainActor
struct HistoryAndMemoryTests {
    typealias Refreshing = TestDeviceTests.RefreshingDelegate

    @Test("KIT-3, SCH-8: the history says when the refresh ran and how each run ended, and how long the battery floor held it back")
    func historyOfARefresh() async throws {
        let (device, app) = try await TestDeviceTests.weather()
        try await device.open(app)
        try await device.setConditions(batteryLevel: 10, charging: false)
        try await device.home()
        try await device.advance(by: .seconds(2 * 3600))
        try await device.setConditions(charging: true)
        try await device.advance(by: .seconds(3600))

        let history = try #require(try app.history(Refreshing.identifier).first)
        #expect(history.identifier == Refreshing.identifier && history.kind == "refresh")
        #expect(!history.runs.isEmpty && history.runs.allSatisfy { $0.outcome == "completed" && $0.result == "newData" }, "\(history)")
        #expect(history.runs.allSatisfy { $0.start == "launched" || $0.start == "resumed" })
        let firstRun = try #require(history.runs.first?.startedAt)
        #expect(firstRun >= device.now.addingTimeInterval(-3600), "not before the charger was plugged in")
        // Each reason counts on its own: the battery floor held it from its submission at 08:00 until the charger came
        // at 10:00, its earliest begin for the first 15 minutes of that (and of each later wait).
        #expect(history.held.first?.reason == "battery-low" && history.heldBy("battery-low") == 2 * 3600, "\(history)")
        #expect(history.heldBy("earliest-begin") >= 15 * 60 && history.heldBy("no-such-reason") == 0, "\(history)")

        #expect(try app.history(Refreshing.identifier, since: device.now).first?.runs.isEmpty ?? true, "a window of no time")
        #expect(throws: TestKitError.self) { try app.history("com.example.unlisted") }
        #expect(throws: TestKitError.self) { try app.history(since: device.now.addingTimeInterval(60)) }
    }

    /// Keeps a cache it frees on a memory warning.
    final class CachingDelegate: ApplicationDelegate {
        var cacheEntries = 100

        func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool { true }
        func applicationDidReceiveMemoryWarning(_ application: Application) { cacheEntries = 0 }
    }

    @Test("MEM-1: memory pressure warns the app in front, which frees its cache; critical pressure that stays ends it, recorded with the pressure and its band; relief ends the episode")
    func memoryPressure() async throws {
        let device = await TestDevice()
        let app = try device.install(bundleIdentifier: "com.example.cache") { CachingDelegate() }
        try await device.open(app)
        try await device.setConditions(memoryPressure: .warning)
        #expect(app.callbacks.last == .memoryWarning)
        #expect((app.delegate as? CachingDelegate)?.cacheEntries == 0)

        try await device.setConditions(memoryPressure: .critical)
        try await device.advance(by: .seconds(30))
        #expect(!app.isRunning, "the last app, in front, is ended once no other is left")
        #expect(app.lastTermination?.hasPrefix("ended for memory (pressure critical): foreground") == true, "\(app.lastTermination ?? "nil")")
        #expect(!app.callbacks.contains(.willTerminate), "no callback (LC-5)")
        try await device.setConditions(memoryPressure: .normal)
        #expect(device.log.contains { $0.contains("memory pressure relieved after") }, "\(device.log.suffix(5))")
        try await device.open(app)
        #expect(app.state == .active, "opened again once memory is no longer short")
    }
}
