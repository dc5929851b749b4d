import Foundation
import Synchronization
import Testing

@testable import Offstage

/// A clock the test moves: sleeping jumps to the deadline at once and is recorded.
final class ManualClock: Sendable {
    /// Nanoseconds now, and every sleep's length.
    private let state = Mutex((now: UInt64(1_000_000_000), sleeps: [UInt64]()))

    /// The clock for an output.
    var clock: PacedNullOutput.Clock {
        PacedNullOutput.Clock(
            now: { self.state.withLock { $0.now } },
            sleepUntil: { deadline in
                self.state.withLock { state in
                    if deadline > state.now {
                        state.sleeps.append(deadline - state.now)
                        state.now = deadline
                    }
                }
            })
    }

    /// Time passes without the writer running: the process is frozen.
    func advance(by nanoseconds: UInt64) { state.withLock { $0.now += nanoseconds } }

    /// The time now.
    var now: UInt64 { state.withLock { $0.now } }

    /// The sleeps so far, and forgets them.
    func takeSleeps() -> [UInt64] {
        state.withLock { state in
            defer { state.sleeps.removeAll() }
            return state.sleeps
        }
    }
}

/// The null output keeps real time, so an app playing silently stays as busy as one playing sound (SPEC MODE-1).
@Suite("Paced null output (MODE-1)")
struct PacedNullOutputTests {
    /// 20 ms of stereo at 8000 Hz.
    let chunk = [Int16](repeating: 0, count: 160 * 2)

    @Test("N frames take N / sampleRate seconds: 40 chunks of 20 ms take at least 0.8 s on the real clock")
    func pacedInRealTime() {
        let output = PacedNullOutput(sampleRate: 8000, channels: 2)
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<40 { output.write(chunk) }
        let elapsed = clock.now - start
        // The first write returns after its own 20 ms, so the total is the audio's length; the upper bound is
        // only a sanity check, generous for a busy machine.
        #expect(elapsed >= .milliseconds(795), "took \(elapsed)")
        #expect(elapsed < .seconds(10), "took \(elapsed)")
        #expect(output.latency == 0)
        #expect(output.description == "null output, paced in real time")
    }

    @Test("Each write sleeps exactly its frames' duration, without drift over many writes")
    func exactPacing() {
        let time = ManualClock()
        let output = PacedNullOutput(sampleRate: 44100, channels: 1, clock: time.clock)
        let start = time.now
        // 441 frames is 10 ms at 44100 Hz; 1000 writes are 10 s, whatever the rounding of each.
        for _ in 0..<1000 { output.write([Int16](repeating: 0, count: 441)) }
        #expect(time.now - start == 10_000_000_000)
        #expect(output.resynchronisations == 0)
    }

    @Test("After a freeze longer than 100 ms it resynchronises to now: no burst of the missed audio")
    func noBurstAfterStall() {
        let time = ManualClock()
        let output = PacedNullOutput(sampleRate: 8000, channels: 2, clock: time.clock)
        for _ in 0..<5 { output.write(chunk) }
        #expect(time.takeSleeps().count == 5)
        // Frozen for 5 s (SIGSTOP, the cgroup freezer): 250 chunks' worth of time went by.
        time.advance(by: 5_000_000_000)
        let resumed = time.now
        for _ in 0..<10 { output.write(chunk) }
        // Each of the 10 writes waited its 20 ms: none returned at once to catch up on the 5 s.
        #expect(time.takeSleeps() == [UInt64](repeating: 20_000_000, count: 10))
        #expect(time.now - resumed == 200_000_000)
        #expect(output.resynchronisations == 1)
    }

    @Test("A delay under 100 ms (a busy machine) is caught up, not dropped")
    func smallDelayCaughtUp() {
        let time = ManualClock()
        let output = PacedNullOutput(sampleRate: 8000, channels: 2, clock: time.clock)
        output.write(chunk)
        let timelineStart = time.now - 20_000_000
        time.advance(by: 50_000_000)
        for _ in 0..<9 { output.write(chunk) }
        // The 10 chunks end 200 ms after the first began: the 50 ms were made up by writing without sleeping.
        #expect(time.now == timelineStart + 200_000_000)
        #expect(output.resynchronisations == 0)
    }

    @Test("flush() starts a new timeline: the next write is due from now")
    func flushRestarts() {
        let time = ManualClock()
        let output = PacedNullOutput(sampleRate: 8000, channels: 2, clock: time.clock)
        output.write(chunk)
        time.advance(by: 60_000_000)
        output.flush()
        _ = time.takeSleeps()
        output.write(chunk)
        #expect(time.takeSleeps() == [20_000_000])
    }

    @Test("The libpulse structs have the C layout: pa_sample_spec 12 bytes, pa_buffer_attr 20")
    func pulseStructLayout() {
        typealias Spec = PulseAudioOutput.SampleSpec
        typealias Attributes = PulseAudioOutput.BufferAttributes
        #expect(MemoryLayout<Spec>.offset(of: \Spec.format) == 0)
        #expect(MemoryLayout<Spec>.offset(of: \Spec.rate) == 4)
        #expect(MemoryLayout<Spec>.offset(of: \Spec.channels) == 8)
        #expect(MemoryLayout<Spec>.stride == 12 && MemoryLayout<Spec>.alignment == 4)
        #expect(MemoryLayout<Attributes>.size == 20)
        #expect(MemoryLayout<Attributes>.offset(of: \Attributes.tlength) == 4)
        #expect(MemoryLayout<Attributes>.offset(of: \Attributes.fragsize) == 16)
    }
}
