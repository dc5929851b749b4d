import Foundation
import OffstageCore
import Synchronization

/// Replays a recorded track as a location source (SPEC MODE-3's default source): each point is delivered when
/// its offset, divided by the speed-up, has passed since the start, stamped with the wall-clock time of its
/// delivery, so apps see a live receiver moving along the recording.
///
/// One task sleeps from point to point (no polling); the clock and the sleep are injected so tests replay a
/// track of minutes in microseconds. `stop()` cancels the sleep, so it returns at once, and shuts the delivery
/// gate, so nothing is delivered after it returns. A looping replay runs until stopped.
public final class TrackReplay: LocationSource {
    private struct State: Sendable {
        var started = false
        var task: Task<Void, Never>?
        /// 1-based index of the point delivered last; 0 before the first.
        var point = 0
        /// Completed passes over the track (looping only).
        var pass = 0
        var finished = false
        var stopped = false
    }

    /// The track being replayed.
    public let track: LocationTrack
    /// The speed-up actually used: `settings.replaySpeed`, raised to `minimumReplaySpeed` if below it.
    public let speed: Double
    /// Whether the replay starts over after the last point.
    public let loops: Bool
    private let settings: LocationSourceSettings
    private let clock: @Sendable () -> Instant
    private let sleep: @Sendable (Duration) async throws -> Void
    private let gate = DeliveryGate()
    private let state = Mutex(State())

    /// A replay of `track` at `settings.replaySpeed`, looping if `settings.replayLoops`. `clock` stamps the
    /// fixes and schedules them; `sleep` waits and must throw promptly when its task is cancelled (as
    /// `Task.sleep` does).
    public init(
        track: LocationTrack, settings: LocationSourceSettings = .init(),
        clock: @escaping @Sendable () -> Instant = LocationClock.now,
        sleep: @escaping @Sendable (Duration) async throws -> Void = LocationClock.sleep
    ) {
        self.track = track
        self.settings = settings
        self.speed = settings.replaySpeed.isFinite
            ? max(settings.replaySpeed, LocationSourceSettings.minimumReplaySpeed) : 1
        self.loops = settings.replayLoops
        self.clock = clock
        self.sleep = sleep
    }

    public func start(
        onFix: @escaping @Sendable (LocationFix) -> Void, onStatus: @escaping @Sendable (LocationSourceStatus) -> Void
    ) throws {
        try state.withLock { state throws(LocationSourceStartError) in
            guard !state.started else { throw .alreadyStarted("the replay of \(track.name)") }
            state.started = true
            // The task holds the replay until it ends or is cancelled by `stop()`.
            state.task = Task.detached { [self] in
                gate.deliver { onStatus(.delivering) }
                await run(onFix: onFix, onStatus: onStatus)
            }
        }
    }

    public func stop() {
        gate.close()
        let task = state.withLock { state in
            state.stopped = true
            return state.task
        }
        task?.cancel()
    }

    /// "replaying walk.gpx at 10× (point 12 of 240)", with the pass when looping and the end when finished.
    public var description: String {
        let now = state.withLock { $0 }
        var text = "replaying \(track.name) at \(Self.format(speed))× (point \(now.point) of \(track.points.count)"
        if loops { text += ", pass \(now.pass + 1), looping" }
        text += ")"
        if now.finished { text += ", finished" } else if now.stopped { text += ", stopped" }
        return text
    }

    /// The replay loop: point after point, pass after pass, until the end, a cancellation or a closed gate.
    private func run(
        onFix: @escaping @Sendable (LocationFix) -> Void, onStatus: @escaping @Sendable (LocationSourceStatus) -> Void
    ) async {
        let start = clock()
        // A one-point track with no gap would loop without ever sleeping; one untimed spacing keeps it calm.
        let trackPeriod = track.duration + max(0, settings.replayLoopGap)
        let period = trackPeriod > 0 ? trackPeriod : max(settings.untimedPointSpacing, 1)
        var pass = 0
        while true {
            for (index, point) in track.points.enumerated() {
                let due = start + .seconds(double: (Double(pass) * period + point.offset) / speed)
                // Again if a sleep ends early: the clock, not the sleep, says when a point is due.
                while case let wait = due - clock(), wait > .zero {
                    do { try await sleep(wait) } catch { return }
                }
                if Task.isCancelled { return }
                let fix = point.fix(at: clock(), defaultHorizontalAccuracy: settings.defaultHorizontalAccuracy)
                state.withLock { state in
                    state.point = index + 1
                    state.pass = pass
                }
                guard gate.deliver({ onFix(fix) }) else { return }
            }
            guard loops else {
                state.withLock { $0.finished = true }
                gate.deliver { onStatus(.finished) }
                return
            }
            pass += 1
        }
    }

    /// 10 → "10", 0.5 → "0.5", 2.25 → "2.25".
    static func format(_ speed: Double) -> String {
        speed == speed.rounded() && abs(speed) < 1e9 ? String(Int(speed)) : String(format: "%g", speed)
    }
}
