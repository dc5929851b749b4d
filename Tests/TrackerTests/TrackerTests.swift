import Foundation
import Offstage
import OffstageTesting
import Testing

@testable import Tracker

/// The Tracker example's own tests, as its developer would write them with the test kit: its real delegate and
/// `Info.plist`, a run along a street fed as the location source would, on virtual time (SPEC MODE-3).
@Suite("Tracker, tested with OffstageTesting (KIT-1, MODE-3)")
@MainActor
struct TrackerTests {
    static let infoPlist = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Examples/Tracker/Info.plist")

    /// A run north from 52.5200° N, 13.4050° E, one point every 0.0009° of latitude (about 100 m).
    static func run(points: Int, from start: Double = 52.52) -> [(latitude: Double, longitude: Double)] {
        (0..<points).map { (latitude: start + Double($0) * 0.0009, longitude: 13.405) }
    }

    static func tracker(_ arguments: [String] = []) async throws -> (TestDevice, TestApp) {
        let device = await TestDevice()
        let app = try device.install(infoPlist: infoPlist) { TrackerDelegate(arguments: arguments) }
        try await device.open(app)
        return (device, app)
    }

    @Test("MODE-3: with background updates it keeps tracking after the user leaves, never suspended, and counts the whole run")
    func tracksInTheBackground() async throws {
        let (device, app) = try await Self.tracker()
        try await device.home()
        try await device.lock()
        try await device.moveAlong(Self.run(points: 11), every: .seconds(30))
        #expect(!app.wasSuspended)
        let tracker = try #require(app.delegate as? TrackerDelegate)
        #expect(abs(tracker.travelled - 1_000) < 5, "ten steps of 100 m: \(tracker.travelled)")
    }

    @Test("MODE-3: foreground-only, it is suspended when the user leaves and hears nothing of the run until it has gone about 500 m: the significant change it monitors wakes it with that one fix")
    func foregroundOnlyStopsWhenSuspended() async throws {
        let (device, app) = try await Self.tracker(["--foreground-only"])
        try await device.setLocation(latitude: 52.52, longitude: 13.405)
        try await device.home()
        try await device.advance(by: .seconds(10))
        #expect(app.isSuspended)
        try await device.moveAlong(Self.run(points: 4, from: 52.5209), every: .seconds(30))  // up to 400 m
        let tracker = try #require(app.delegate as? TrackerDelegate)
        #expect(tracker.travelled == 0, "no update reached it while suspended")
        try await device.setLocation(latitude: 52.5245, longitude: 13.405)  // 500 m from its last fix
        #expect(abs(tracker.travelled - 500) < 5, "\(tracker.travelled)")
        #expect(app.launches == [.user], "the suspended process was woken, not a new one launched")
    }

    @Test("MODE-3: force-quit, it is launched again in the background by a significant change of about 500 m")
    func significantChangeRelaunchesIt() async throws {
        let (device, app) = try await Self.tracker()
        try await device.setLocation(latitude: 52.52, longitude: 13.405)
        try await device.forceQuit(app)
        try await device.setLocation(latitude: 52.5218, longitude: 13.405)  // 200 m: not significant
        #expect(!app.isRunning)
        try await device.setLocation(latitude: 52.5263, longitude: 13.405)  // 700 m from where it was
        #expect(app.launches == [.user, .location], "\(app.launches)")
        #expect(app.state == .background)
    }

    @Test("KIT-6: a coordinate off the globe, a non-positive accuracy or a zero interval is refused, and nothing is delivered")
    func badLocationsAreRefused() async throws {
        let (device, app) = try await Self.tracker()
        let before = app.callbacks.count
        await #expect(throws: TestKitError.invalidArgument("latitude 91.0, longitude 0.0: outside −90…90, −180…180")) {
            try await device.setLocation(latitude: 91, longitude: 0)
        }
        await #expect(throws: TestKitError.invalidArgument("accuracy 0.0: a number of metres above 0")) {
            try await device.setLocation(latitude: 52, longitude: 13, accuracy: 0)
        }
        await #expect(throws: TestKitError.self) { try await device.moveAlong(Self.run(points: 2), every: .zero) }
        #expect(app.callbacks.count == before)
    }
}
