import Foundation
import Synchronization

/// Plays a WAV file, shaped like `AVAudioPlayer` so an iOS developer feels at home.
///
/// ```swift
/// let player = try AudioPlayer(contentsOf: url)
/// player.delegate = self
/// player.play()
/// ```
///
/// An app with the `audio` background mode keeps running in the background while a player plays (SPEC MODE-1);
/// the SDK learns it from the players themselves (see `AudioActivity`).
///
/// **Output.** Chosen each time playback starts: the machine's sound server through PulseAudio (also PipeWire's
/// PulseAudio socket; `PULSE_SERVER` picks the server, `PULSE_SINK` the sink) when libpulse is installed and the
/// server answers, else a null output that plays nothing at the same pace, so timing and the delegate behave the
/// same. Set the environment variable `OFFSTAGE_AUDIO_OUTPUT=null` to force the null output (tests, CI, quiet
/// machines). `OFFSTAGE_AUDIO_BUFFER_MS` sets the sound server's buffer (default 100): a pause drops it, so a
/// smaller one pauses sooner. ``outputDescription`` says which output plays.
///
/// **Threads.** Every method may be called from any thread. Each playing player has a thread of its own that
/// writes about 20 ms at a time to the output, blocking at the output's pace. Delegate methods come on the main
/// queue. As with `AVAudioPlayer`, keep a reference to the player: a deallocated player stops.
public final class AudioPlayer: Sendable {
    /// What the lock protects.
    struct State {
        /// Whether the player is playing (as the app sees it: false as soon as pause() returns).
        var isPlaying = false
        /// The next frame the playback thread writes; while not playing, the position.
        var frame = 0
        /// Frames written but not yet heard when the last write returned.
        var latencyFrames = 0
        /// The last ``currentTime`` reported while playing: reports never go back, except on a seek or a loop.
        var timeFloor: TimeInterval = 0
        /// Bumped by every play, pause, stop and seek: a write begun in an older epoch is not counted.
        var epoch = 0
        /// The epoch of the last play(): a playback thread of an older session ends.
        var session = 0
        /// As set by the app: 0 once, n more times, negative forever.
        var numberOfLoops = 0
        /// Loops played since the file started from the beginning.
        var loopsPlayed = 0
        /// Gain applied to the samples, 0...1.
        var volume: Float = 1
        /// The delegate, weak as on iOS.
        weak var delegate: (any AudioPlayerDelegate)?
        /// Which output the last playback used.
        var outputDescription = "none: playback has not started"
        /// What AudioActivity was last told (see reportActivity()).
        var reportedPlaying = false
        /// Whether a thread is telling AudioActivity now (see reportActivity()).
        var reporting = false
    }

    /// The file, read and checked.
    let file: WAVFile
    /// The state.
    let state = Mutex(State())
    /// Where the player reports starting and stopping.
    let activity: AudioActivity
    /// Opens the output when playback starts: returns it and, if it is a fallback, why.
    let openOutput: @Sendable (WAVFile) -> (output: any AudioOutput, note: String?)

    /// Reads the WAV file at `url` (PCM 8/16/24/32-bit or float 32-bit); throws an ``AudioPlayerError`` naming
    /// the file, the fault and the fix.
    public convenience init(contentsOf url: URL) throws {
        self.init(file: try WAVFile(contentsOf: url), activity: .shared, openOutput: AudioPlayer.openDefaultOutput)
    }

    /// A player of `file` that reports to `activity` and opens its output with `openOutput` (tests inject both).
    init(
        file: WAVFile, activity: AudioActivity,
        openOutput: @escaping @Sendable (WAVFile) -> (output: any AudioOutput, note: String?)
    ) {
        self.file = file
        self.activity = activity
        self.openOutput = openOutput
        activity.register(self)
    }

    /// A deallocated player stops; its playback thread notices and closes the output.
    deinit {
        if state.withLock({ $0.reportedPlaying }) { activity.playerDidStop(ObjectIdentifier(self)) }
    }

    /// The file played.
    public var url: URL { file.url }
    /// The file's length in seconds.
    public var duration: TimeInterval { file.duration }
    /// The file's channels.
    public var numberOfChannels: Int { file.channels }
    /// Whether the player is playing: true from play() until pause(), stop(), the end or an error.
    public var isPlaying: Bool { state.withLock { $0.isPlaying } }

    /// The delegate, held weakly; its methods are called on the main queue.
    public var delegate: (any AudioPlayerDelegate)? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }

    /// How many times to play the file again after the first: 0 (the default) plays it once, a negative number
    /// loops until pause() or stop().
    public var numberOfLoops: Int {
        get { state.withLock { $0.numberOfLoops } }
        set { state.withLock { $0.numberOfLoops = newValue } }
    }

    /// The gain, 0 (silent) to 1 (as recorded, the default); applied to the samples from the next 20 ms on.
    public var volume: Float {
        get { state.withLock { $0.volume } }
        set { state.withLock { $0.volume = newValue.isNaN ? 0 : min(max(newValue, 0), 1) } }
    }

    /// Which output plays, or played last: "PulseAudio at unix:… (sink default)", "null output, paced in real
    /// time" (with the reason when it replaced PulseAudio).
    public var outputDescription: String { state.withLock { $0.outputDescription } }

    /// The position in seconds: while playing, what has been heard (frames written less the output's latency),
    /// never going backwards and never beyond ``duration``. Setting it seeks, playing or not; a value outside
    /// 0...duration is clamped.
    public var currentTime: TimeInterval {
        get {
            let rate = Double(file.sampleRate)
            return state.withLock { state in
                let heard = Double(max(0, state.frame - (state.isPlaying ? state.latencyFrames : 0))) / rate
                guard state.isPlaying else { return min(heard, duration) }
                state.timeFloor = max(state.timeFloor, min(heard, duration))
                return state.timeFloor
            }
        }
        set {
            let time = newValue.isNaN ? 0 : min(max(newValue, 0), duration)
            let frame = min(Int(time * Double(file.sampleRate)), file.frameCount)
            state.withLock { state in
                state.frame = frame
                state.latencyFrames = 0
                state.timeFloor = time
                state.epoch += 1  // the playback thread drops what it buffered and goes on from here
            }
        }
    }

    /// Starts or resumes playback from ``currentTime``; returns false only for a file without frames. Returns at
    /// once: the output opens on the player's thread.
    @discardableResult
    public func play() -> Bool {
        guard file.frameCount > 0 else { return false }
        let session = state.withLock { state -> Int? in
            guard !state.isPlaying else { return nil }
            state.isPlaying = true
            state.epoch += 1
            state.session = state.epoch
            state.latencyFrames = 0
            state.timeFloor = min(Double(state.frame) / Double(file.sampleRate), file.duration)
            return state.session
        }
        guard let session else { return true }  // already playing
        reportActivity()
        startPlaybackThread(session: session)
        return true
    }

    /// Pauses; ``currentTime`` stays where the sound stopped and play() resumes there. The audio buffered in the
    /// output is dropped, so the sound stops within about 20 ms.
    public func pause() {
        pauseReportingWhetherPlaying()
    }

    /// Stops playback and releases the output, as `AVAudioPlayer.stop()` does: ``currentTime`` is kept (set it
    /// to 0 to rewind) and the loops start again from the first. The delegate is not called.
    public func stop() {
        pauseReportingWhetherPlaying()
        state.withLock { $0.loopsPlayed = 0 }
    }

    /// Pauses, returning whether the player was playing (for `AudioActivity.pauseAll()`).
    @discardableResult
    func pauseReportingWhetherPlaying() -> Bool {
        let wasPlaying = state.withLock { state -> Bool in
            guard state.isPlaying else { return false }
            state.isPlaying = false
            // Resume from what was heard: the buffered audio the thread is about to drop will be played again.
            state.frame = max(0, state.frame - state.latencyFrames)
            state.latencyFrames = 0
            state.epoch += 1
            return true
        }
        if wasPlaying { reportActivity() }
        return wasPlaying
    }

    /// Tells ``activity`` whether the player plays, until what it was told matches the state.
    ///
    /// Called after each change, outside the lock (AudioActivity calls its observer, which may pause players).
    /// One thread reports at a time; another that changes the state meanwhile leaves it to that thread, which
    /// loops until the state stops changing: so the last word is always the current state.
    func reportActivity() {
        let id = ObjectIdentifier(self)
        let first = state.withLock { state -> Bool in
            guard !state.reporting else { return false }
            state.reporting = true
            return true
        }
        guard first else { return }
        while true {
            let tell = state.withLock { state -> Bool? in
                guard state.isPlaying != state.reportedPlaying else {
                    state.reporting = false
                    return nil
                }
                state.reportedPlaying = state.isPlaying
                return state.isPlaying
            }
            guard let tell else { return }
            if tell { activity.playerDidStart(id) } else { activity.playerDidStop(id) }
        }
    }
}
