import Foundation
import OffstageCore
import Synchronization
import Testing

@testable import OffstageDaemon

/// Paths and helpers shared by the location tests (SPEC MODE-3).
enum LocationFixtures {
    /// `Data/location/` at the root of the package.
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Data/location")

    /// The committed GPX track.
    static var gpxPath: String { directory.appendingPathComponent("walk.gpx").path }
    /// The same track as an NMEA log.
    static var nmeaPath: String { directory.appendingPathComponent("walk.nmea").path }

    /// 2024-05-18T09:30:00Z, the first point of the committed track.
    static let trackStart = Instant(nanosecondsSinceEpoch: 1_716_024_600 * 1_000_000_000)

    /// Parses `text` as a track file called `file`, expecting the error `code`; returns it.
    static func expectError(
        _ code: LocationTrackError.Code, in text: String, file: String = "track.nmea",
        settings: LocationSourceSettings = .init(), sourceLocation: SourceLocation = #_sourceLocation
    ) -> LocationTrackError? {
        do {
            let track = try LocationTrack.parse(Data(text.utf8), file: file, settings: settings)
            Issue.record("expected \(code.rawValue), got a track of \(track.points.count) points", sourceLocation: sourceLocation)
            return nil
        } catch let error as LocationTrackError {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
            #expect(error.file == file, sourceLocation: sourceLocation)
            #expect(error.description.hasPrefix(file), sourceLocation: sourceLocation)
            #expect(!error.fix.isEmpty, sourceLocation: sourceLocation)
            return error
        } catch {
            Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }
}

/// A clock that only moves when the code under test sleeps: a replay of minutes runs in microseconds, and every
/// timestamp is exact.
final class VirtualClock: Sendable {
    private let state: Mutex<(now: Instant, sleeps: [Duration])>

    init(start: Instant = LocationFixtures.trackStart) { state = Mutex((start, [])) }

    /// The current virtual time.
    var now: Instant { state.withLock { $0.now } }

    /// Every sleep requested, in order.
    var sleeps: [Duration] { state.withLock { $0.sleeps } }

    /// The clock function to inject.
    var read: @Sendable () -> Instant { { [self] in now } }

    /// The sleep function to inject: advances the time at once, throws when the task is cancelled.
    var sleep: @Sendable (Duration) async throws -> Void {
        { [self] duration in
            try Task.checkCancellation()
            state.withLock { state in
                state.now = state.now + duration
                state.sleeps.append(duration)
            }
            await Task.yield()
        }
    }
}

/// Collects what a source delivers and lets a test wait for it.
final class SourceRecorder: Sendable {
    private let state = Mutex<(fixes: [LocationFix], statuses: [LocationSourceStatus])>(([], []))

    /// Fixes so far.
    var fixes: [LocationFix] { state.withLock { $0.fixes } }
    /// Statuses so far.
    var statuses: [LocationSourceStatus] { state.withLock { $0.statuses } }

    /// The fix callback; `then` runs after recording, with the number of fixes so far.
    func onFix(then: @escaping @Sendable (Int) -> Void = { _ in }) -> @Sendable (LocationFix) -> Void {
        { [self] fix in then(state.withLock { $0.fixes.append(fix); return $0.fixes.count }) }
    }

    /// The status callback.
    var onStatus: @Sendable (LocationSourceStatus) -> Void {
        { [self] status in state.withLock { $0.statuses.append(status) } }
    }

    /// Waits until `condition` holds, checking every 10 ms for at most `timeout` (generous: a loaded 2-core
    /// machine); returns whether it held.
    func wait(
        timeout: Duration = .seconds(30),
        until condition: @Sendable ([LocationFix], [LocationSourceStatus]) -> Bool
    ) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if state.withLock({ condition($0.fixes, $0.statuses) }) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return state.withLock { condition($0.fixes, $0.statuses) }
    }
}
