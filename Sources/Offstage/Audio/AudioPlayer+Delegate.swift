import Dispatch

/// What an ``AudioPlayer`` tells its delegate, as `AVAudioPlayerDelegate` does on iOS.
///
/// Both methods are called on the main queue (`DispatchQueue.main.async`), so on the app's main thread, and have
/// empty default implementations.
@MainActor
public protocol AudioPlayerDelegate: AnyObject, Sendable {
    /// The player reached the end of the file (after its loops), or stopped because its output failed
    /// (`successfully` false). Not called for ``AudioPlayer/pause()`` or ``AudioPlayer/stop()``.
    func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool)
    /// Playback stopped on an error: the sound output failed while playing (the file itself is fully checked
    /// when the player is created). `error` is an ``AudioPlayerError`` that says what to do.
    func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: (any Error)?)
}

extension AudioPlayerDelegate {
    /// Does nothing.
    public func audioPlayerDidFinishPlaying(_ player: AudioPlayer, successfully flag: Bool) {}
    /// Does nothing.
    public func audioPlayerDecodeErrorDidOccur(_ player: AudioPlayer, error: (any Error)?) {}
}

extension AudioPlayer {
    /// Tells the delegate, on the main queue, that playback finished; the delegate is read then, as it is weak.
    func notifyFinished(successfully: Bool) {
        DispatchQueue.main.async {
            MainActor.assumeIsolated { self.delegate?.audioPlayerDidFinishPlaying(self, successfully: successfully) }
        }
    }

    /// Tells the delegate, on the main queue, that playback stopped on `error`, then that it finished unsuccessfully.
    func notifyError(_ error: AudioPlayerError) {
        DispatchQueue.main.async {
            MainActor.assumeIsolated {
                self.delegate?.audioPlayerDecodeErrorDidOccur(self, error: error)
                self.delegate?.audioPlayerDidFinishPlaying(self, successfully: false)
            }
        }
    }
}
