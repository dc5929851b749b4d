import Foundation
import Synchronization
import Testing

@testable import Offstage

/// An output that records what it is given and is paced like the null output, so players keep real time.
final class RecordingOutput: AudioOutput, Sendable {
    /// What happened, for the test thread to read.
    struct Log {
        /// Every sample written, in order.
        var samples: [Int16] = []
        /// The sample count at each flush.
        var flushes: [Int] = []
        /// Whether close() was called.
        var closed = false
        /// Writes so far.
        var writes = 0
    }

    /// The log.
    let log = Mutex(Log())
    /// The pacing, as the real null output does it (used only by the playback thread).
    private let pacer: Mutex<PacedNullOutput>
    /// Samples per frame.
    let channels: Int
    /// The write after which writes fail; nil never.
    let failAfter: Int?

    /// An output for `channels` at `sampleRate`.
    init(sampleRate: Int, channels: Int, failAfter: Int? = nil) {
        self.pacer = Mutex(PacedNullOutput(sampleRate: sampleRate, channels: channels))
        self.channels = channels
        self.failAfter = failAfter
    }

    /// Records, fails if told to, then paces.
    func write(_ samples: [Int16]) throws(AudioPlayerError) {
        let fail = log.withLock { log -> Bool in
            if let failAfter, log.writes >= failAfter { return true }
            log.writes += 1
            log.samples += samples
            return false
        }
        if fail { throw .outputFailed(output: description, reason: "unplugged by the test") }
        pacer.withLock { $0.write(samples) }
    }

    /// Records the flush.
    func flush() {
        log.withLock { $0.flushes.append($0.samples.count) }
        pacer.withLock { $0.flush() }
    }

    /// Nothing buffered.
    func drain() {}
    /// A constant latency would complicate the arithmetic the tests check: none.
    var latency: TimeInterval { 0 }
    /// Records the close.
    func close() { log.withLock { $0.closed = true } }
    /// Names itself.
    var description: String { "recording output" }
}

/// The outputs a player opened, one per playback.
final class RecordingOutputs: Sendable {
    /// The outputs, oldest first.
    private let opened = Mutex([RecordingOutput]())
    /// Passed to each output.
    let failAfter: Int?

    /// Outputs that fail after `failAfter` writes, or never.
    init(failAfter: Int? = nil) { self.failAfter = failAfter }

    /// The player's `openOutput`.
    var open: @Sendable (WAVFile) -> (output: any AudioOutput, note: String?) {
        { file in
            let output = RecordingOutput(sampleRate: file.sampleRate, channels: file.channels, failAfter: self.failAfter)
            self.opened.withLock { $0.append(output) }
            return (output, nil)
        }
    }

    /// Every output opened so far.
    var all: [RecordingOutput] { opened.withLock { $0 } }
    /// Every sample written to any of them, in order of opening.
    var samples: [Int16] { all.flatMap { output in output.log.withLock { $0.samples } } }
}

/// Records the delegate's calls and whether they came on the main thread.
@MainActor
final class DelegateRecorder: AudioPlayerDelegate {
    /// The `successfully` of each finish.
    var finished: [Bool] = []
    /// The message of each error.
    var errors: [String] = []
    /// False if any call came on another queue than the main queue.
    var allOnMainQueue = true

    /// Marks the main queue, so a call can tell it runs there (`Thread.isMainThread` is not reliable under the
    /// Linux test runner, which drains the main queue from a thread of its own).
    nonisolated static let mainQueueKey: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// A recorder.
    nonisolated init() { _ = Self.mainQueueKey }

    /// Records.
    func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool) {
        finished.append(flag)
        allOnMainQueue = allOnMainQueue && DispatchQueue.getSpecific(key: Self.mainQueueKey) == true
    }

    /// Records.
    func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: (any Error)?) {
        errors.append(error.map { "\($0)" } ?? "nil")
        allOnMainQueue = allOnMainQueue && DispatchQueue.getSpecific(key: Self.mainQueueKey) == true
    }
}

/// Waits up to `seconds` for `condition`, checking every 10 ms; returns whether it held.
func eventually(within seconds: Double = 10, _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return await condition()
}

/// A player of `builder`'s file on recording outputs, reporting to `activity`.
func makePlayer(
    _ builder: WAVBuilder, outputs: RecordingOutputs, activity: AudioActivity = AudioActivity()
) throws -> AudioPlayer {
    let file = try WAVFile(bytes: Data(builder.bytes), url: URL(fileURLWithPath: "/test/sound.wav"))
    return AudioPlayer(file: file, activity: activity, openOutput: outputs.open)
}

/// A mono 8000 Hz file whose sample i is i % 30000: a sample's value tells its position.
func ramp(seconds: Double) -> WAVBuilder {
    WAVBuilder.pcm16((0..<Int(seconds * 8000)).map { Int16($0 % 30000) })
}
