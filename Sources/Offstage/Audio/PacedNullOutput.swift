import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An output that plays nothing but takes as long as the sound would: `write` of N frames returns N / sampleRate
/// seconds after the previous one's end, by the monotonic clock.
///
/// It is the fallback when no sound server answers (a headless machine, a CI runner) and what
/// `OFFSTAGE_AUDIO_OUTPUT=null` forces, so a player's timing — `currentTime`, the end of the file, the app staying
/// busy in the background (SPEC MODE-1) — is the same with or without sound.
///
/// After the process was frozen (SIGSTOP, the cgroup freezer of a suspended app) the clock has moved on while no
/// frame was written. Catching up would write the missed seconds in a burst, as fast as the loop runs; a real
/// sound server would not do that either (it underruns and goes on from now). So when the output finds itself
/// more than ``maximumLag`` behind, it resynchronises: the next frames are due from now.
final class PacedNullOutput: AudioOutput {
    /// The clock the output paces itself by: the monotonic clock, or a test's.
    struct Clock: Sendable {
        /// Nanoseconds on a clock that never goes backwards.
        var now: @Sendable () -> UInt64
        /// Returns at or after `deadline` on the same clock.
        var sleepUntil: @Sendable (_ deadline: UInt64) -> Void

        /// CLOCK_MONOTONIC: it goes on while the process is frozen, which is what lets the output see the stall.
        static let monotonic = Clock(
            now: {
                var time = timespec()
                clock_gettime(CLOCK_MONOTONIC, &time)
                return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
            },
            sleepUntil: { deadline in
                var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
                // An absolute deadline: a signal that interrupts the sleep does not lengthen it when resumed.
                while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &time, nil) == EINTR {}
            })
    }

    /// How far behind the output may fall before it gives up catching up (100 ms: more than any scheduling delay
    /// of a busy machine, less than a freeze).
    static let maximumLag: UInt64 = 100_000_000

    /// Frames per second.
    let sampleRate: Int
    /// Samples per frame.
    let channels: Int
    /// The clock.
    private let clock: Clock
    /// When the frames counted in `framesSinceAnchor` started to play; nil before the first write and after a flush.
    private var anchor: UInt64?
    /// Frames written since `anchor`: they end at anchor + frames / rate, computed whole to avoid rounding drift.
    private var framesSinceAnchor: UInt64 = 0
    /// How many times the output resynchronised after falling behind (for tests and diagnostics).
    private(set) var resynchronisations = 0

    /// An output of `channels` channels at `sampleRate` paced by `clock`.
    init(sampleRate: Int, channels: Int, clock: Clock = .monotonic) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.clock = clock
    }

    /// When the frames written so far have all been "heard".
    private var deadline: UInt64? {
        anchor.map { $0 + framesSinceAnchor * 1_000_000_000 / UInt64(sampleRate) }
    }

    /// Sleeps until the frames written before these are heard plus these frames' duration.
    func write(_ samples: [Int16]) {
        let frames = UInt64(samples.count / channels)
        let now = clock.now()
        if let deadline, now > deadline + Self.maximumLag {
            // Frozen or starved for a while: the missed time is gone, as with a sound server's underrun.
            resynchronisations += 1
            anchor = nil
        }
        if anchor == nil {
            anchor = now
            framesSinceAnchor = 0
        }
        framesSinceAnchor += frames
        // Slightly late (under maximumLag) the deadline may already have passed: return at once to catch up.
        if let deadline, deadline > now { clock.sleepUntil(deadline) }
    }

    /// Nothing is buffered; the next write starts a new timeline.
    func flush() { anchor = nil }

    /// Nothing is buffered: each write returned when its frames were heard.
    func drain() {}

    /// Zero: each write returns when its frames are heard.
    var latency: TimeInterval { 0 }

    /// Nothing to release.
    func close() {}

    /// Says that the sound goes nowhere but takes its time.
    var description: String { "null output, paced in real time" }
}
