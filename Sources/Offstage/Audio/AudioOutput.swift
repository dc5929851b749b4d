import Foundation

/// Where a player's sound goes: a sink of interleaved signed 16-bit frames at one sample rate and channel count.
///
/// An output belongs to one player's playback thread, which is the only caller of every method: outputs need not
/// be thread-safe (libpulse-simple is not, for one stream).
protocol AudioOutput: AnyObject, CustomStringConvertible {
    /// Writes `samples` (interleaved, `channels` per frame, a whole number of frames), blocking at real-time pace:
    /// it returns once there is room for them, so a loop of writes plays no faster than the sound is heard.
    func write(_ samples: [Int16]) throws(AudioPlayerError)
    /// Drops the audio written but not yet heard, so a pause or a seek is heard at once.
    func flush()
    /// Waits until the audio written has been heard (at the end of a file, before saying it finished).
    func drain()
    /// How long, in seconds, before audio written now is heard: what was written but is still buffered.
    var latency: TimeInterval { get }
    /// Releases the output; nothing may be called after.
    func close()
    /// What plays, for people: "PulseAudio at unix:/run/user/1000/pulse/native (sink default)",
    /// "null output, paced in real time".
    var description: String { get }
}
