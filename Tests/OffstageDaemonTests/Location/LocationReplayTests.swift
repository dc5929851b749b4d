import Foundation
import OffstageCore
import Synchronization
import Testing

@testable import OffstageDaemon

/// The replayed track, SPEC MODE-3's default source, and the fixed position set from the CLI. Every test runs on
/// the virtual clock except the one about stopping under real concurrency.
@Suite("Location: track replay and fixed position (MODE-3)")
struct LocationReplayTests {
    static func walk() throws -> LocationTrack { try LocationTrack.load(path: LocationFixtures.gpxPath) }

    static func settings(speed: Double = 1, loops: Bool = false) -> LocationSourceSettings {
        var settings = LocationSourceSettings()
        settings.replaySpeed = speed
        settings.replayLoops = loops
        return settings
    }

    @Test("A replay delivers every point in order, each stamped with the time of its delivery, then finishes")
    func realTimeOrderAndOffsets() async throws {
        let track = try Self.walk()
        let clock = VirtualClock(start: Instant(secondsSinceEpoch: 1_800_000_000))
        let start = clock.now
        let replay = TrackReplay(track: track, settings: Self.settings(), clock: clock.read, sleep: clock.sleep)
        let recorder = SourceRecorder()
        try replay.start(onFix: recorder.onFix(), onStatus: recorder.onStatus)
        #expect(await recorder.wait { _, statuses in statuses.contains(.finished) })
        let fixes = recorder.fixes
        #expect(fixes.count == track.points.count)
        for (fix, point) in zip(fixes, track.points) {
            #expect(fix.latitude == point.latitude && fix.longitude == point.longitude)
            // The wall time of delivery, not the recorded time: offsets replayed from the start.
            #expect(abs((fix.timestamp - start).inSeconds - point.offset) < 1e-6)
        }
        #expect(recorder.statuses == [.delivering, .finished])
        #expect(replay.description == "replaying walk.gpx at 1× (point 390 of 390), finished")
        replay.stop()
    }

    @Test("At 10× the gaps shrink tenfold, and the sleeps add up to the track's duration over ten")
    func speedUp() async throws {
        let track = try Self.walk()
        let clock = VirtualClock()
        let start = clock.now
        let replay = TrackReplay(track: track, settings: Self.settings(speed: 10), clock: clock.read, sleep: clock.sleep)
        let recorder = SourceRecorder()
        try replay.start(onFix: recorder.onFix(), onStatus: recorder.onStatus)
        #expect(await recorder.wait { _, statuses in statuses.contains(.finished) })
        let offsets = recorder.fixes.map { ($0.timestamp - start).inSeconds }
        #expect(offsets.count == 390)
        #expect(zip(offsets, track.points).allSatisfy { abs($0 - $1.offset / 10) < 1e-6 })
        #expect(abs(clock.sleeps.reduce(Duration.zero, +).inSeconds - 38.9) < 1e-6)
        #expect(replay.description.hasPrefix("replaying walk.gpx at 10× (point 390 of 390)"))
    }

    @Test("A looping replay starts over after the loop gap, and stopping from a callback ends it at once")
    func loopAndStopFromCallback() async throws {
        let track = try Self.walk()
        let clock = VirtualClock()
        let start = clock.now
        let replay = TrackReplay(
            track: track, settings: Self.settings(speed: 2, loops: true), clock: clock.read, sleep: clock.sleep)
        let recorder = SourceRecorder()
        let stopAt = 2 * 390 + 5
        try replay.start(
            onFix: recorder.onFix { count in if count == stopAt { replay.stop() } }, onStatus: recorder.onStatus)
        #expect(await recorder.wait { fixes, _ in fixes.count >= stopAt })
        // Whatever the task does next, nothing more arrives.
        try await Task.sleep(for: .milliseconds(50))
        let fixes = recorder.fixes
        #expect(fixes.count == stopAt)
        // The second pass begins (389 s + 1 s gap) / 2 after the start.
        #expect(abs((fixes[390].timestamp - start).inSeconds - 195) < 1e-6)
        #expect(fixes[390].latitude == track.points[0].latitude)
        #expect(!recorder.statuses.contains(.finished))
        #expect(replay.description == "replaying walk.gpx at 2× (point 5 of 390, pass 3, looping), stopped")
    }

    @Test("The speed-up is at least 0.01×, and the settings say so")
    func minimumSpeed() throws {
        let replay = TrackReplay(track: try Self.walk(), settings: Self.settings(speed: 0.001))
        #expect(replay.speed == 0.01)
        #expect(Self.settings(speed: 0.001).problems.count == 1)
        #expect(Self.settings(speed: 0.5).problems.isEmpty)
        #expect(TrackReplay(track: try Self.walk(), settings: Self.settings(speed: 0.5)).description.contains("at 0.5×"))
    }

    @Test("stop() on a real clock returns promptly and nothing is delivered after it returns")
    func stopUnderRealConcurrency() async throws {
        // 1 ms between points on the real clock: deliveries are flowing when stop() is called.
        let points = (0..<100_000).map { TrackPoint(offset: Double($0), latitude: 1, longitude: 2) }
        let track = try LocationTrack(name: "dense", format: .gpx, points: points)
        let replay = TrackReplay(track: track, settings: Self.settings(speed: 1000))
        let recorder = SourceRecorder()
        try replay.start(onFix: recorder.onFix(), onStatus: recorder.onStatus)
        #expect(await recorder.wait { fixes, _ in fixes.count >= 20 })
        let before = ContinuousClock.now
        replay.stop()
        let stopTook = ContinuousClock.now - before
        let atStop = recorder.fixes.count
        try await Task.sleep(for: .milliseconds(200))
        #expect(recorder.fixes.count == atStop)
        // Generous: stop() only closes a gate and cancels a sleep.
        #expect(stopTook < .seconds(2))
    }

    @Test("A replay cannot be started twice")
    func startOnce() throws {
        let replay = TrackReplay(track: try Self.walk(), clock: VirtualClock().read, sleep: VirtualClock().sleep)
        try replay.start(onFix: { _ in }, onStatus: { _ in })
        #expect(throws: LocationSourceStartError.self) { try replay.start(onFix: { _ in }, onStatus: { _ in }) }
        replay.stop()
        replay.stop()
    }

    @Test("A fixed position is delivered once at start and again when moved, never after stop")
    func fixedPosition() throws {
        let clock = VirtualClock()
        let source = StaticLocationSource(latitude: 48.85837, longitude: 2.294481, horizontalAccuracy: 8, clock: clock.read)
        #expect(source.description == "fixed position 48.85837, 2.29448 ±8 m")
        let recorder = SourceRecorder()
        try source.start(onFix: recorder.onFix(), onStatus: recorder.onStatus)
        #expect(recorder.fixes.map(\.latitude) == [48.85837])
        #expect(recorder.fixes.first?.timestamp == clock.now)
        #expect(recorder.statuses == [.delivering])
        var moved = try #require(recorder.fixes.first)
        moved.latitude = 51.5007
        moved.longitude = -0.1246
        source.move(to: moved)
        #expect(recorder.fixes.map(\.latitude) == [48.85837, 51.5007])
        #expect(source.description == "fixed position 51.50070, -0.12460 ±8 m")
        source.stop()
        source.move(to: moved)
        #expect(recorder.fixes.count == 2)
        #expect(throws: LocationSourceStartError.self) { try source.start(onFix: { _ in }, onStatus: { _ in }) }
    }
}
