import Foundation

extension AudioPlayer {
    /// What the playback thread does next, decided under the lock.
    private enum Step: Sendable {
        /// Write these frames at this volume, after dropping the output's buffer if the app seeked.
        case write(Range<Int>, volume: Float, flushFirst: Bool)
        /// The file (and its loops) ended: let the output play out, then finish.
        case finish
        /// The app paused, stopped or started another session: drop the buffer and end the thread.
        case end
    }

    /// The output to play on, for ``init(contentsOf:)``: PulseAudio unless the app runs on a test device (its
    /// daemon is in its process: a test plays nothing aloud), `OFFSTAGE_AUDIO_OUTPUT=null` or PulseAudio cannot be
    /// used, else the paced null output with the reason PulseAudio was not used.
    static func openDefaultOutput(_ file: WAVFile) -> (output: any AudioOutput, note: String?) {
        let null = PacedNullOutput(sampleRate: file.sampleRate, channels: file.channels)
        if Application.runsInProcess { return (null, "the app runs on a test device") }
        let choice = ProcessInfo.processInfo.environment["OFFSTAGE_AUDIO_OUTPUT"]?.lowercased()
        if choice == "null" { return (null, "OFFSTAGE_AUDIO_OUTPUT=null") }
        do {
            let name = file.url.lastPathComponent
            return (try PulseAudioOutput(sampleRate: file.sampleRate, channels: file.channels, streamName: name), nil)
        } catch {
            return (null, error.description)
        }
    }

    /// Starts the thread that plays session `session` until it is paused, stopped, finished or superseded.
    ///
    /// A thread per playback rather than a shared queue: the writes block for real time, and an app that plays
    /// two sounds needs them to block independently. The thread holds the player weakly, so a player the app
    /// drops stops, as AVAudioPlayer does.
    func startPlaybackThread(session: Int) {
        let thread = Thread { [weak self] in
            // `self?.` everywhere: a strong reference held across the loop would keep a dropped player playing.
            guard let output = self?.openOutputForPlayback() else { return }
            var seenEpoch = session
            while let player = self, player.playStep(session: session, output: output, seenEpoch: &seenEpoch) {}
            output.close()
        }
        thread.name = "Offstage audio"
        thread.start()
    }

    /// Opens the output and records which it is.
    private func openOutputForPlayback() -> any AudioOutput {
        let (output, note) = openOutput(file)
        state.withLock { $0.outputDescription = output.description + (note.map { " (\($0))" } ?? "") }
        return output
    }

    /// Plays one chunk (about 20 ms), or ends the session; false when the thread should end.
    private func playStep(session: Int, output: any AudioOutput, seenEpoch: inout Int) -> Bool {
        let chunk = max(1, file.sampleRate / 50)
        let frameCount = file.frameCount
        let epochBefore = seenEpoch
        let (step, epoch) = state.withLock { state -> (Step, Int) in
            guard state.isPlaying, state.session == session else { return (.end, state.epoch) }
            if state.frame >= frameCount {
                guard state.numberOfLoops < 0 || state.loopsPlayed < state.numberOfLoops else {
                    return (.finish, state.epoch)
                }
                // Loop: the end of the previous pass is still in the output's buffer and plays before this one.
                state.loopsPlayed += 1
                state.frame = 0
                state.timeFloor = 0
            }
            let range = state.frame..<min(state.frame + chunk, frameCount)
            return (.write(range, volume: state.volume, flushFirst: state.epoch != epochBefore), state.epoch)
        }
        seenEpoch = epoch
        switch step {
        case .end:
            output.flush()
            return false
        case .finish:
            output.drain()
            finish(session: session, epoch: epoch)
            return false
        case .write(let range, let volume, let flushFirst):
            if flushFirst { output.flush() }  // a seek: what was buffered is from the old position
            do {
                try output.write(scaled(file.int16Samples(frames: range), by: volume))
            } catch {
                fail(session: session, epoch: epoch, error: error)
                return false
            }
            let latency = Int(output.latency * Double(file.sampleRate))
            state.withLock { state in
                // Paused, stopped or seeked during the write: the app's change wins, these frames do not count.
                guard state.isPlaying, state.session == session, state.epoch == epoch else { return }
                state.frame = range.upperBound
                state.latencyFrames = min(latency, state.frame)
            }
            return true
        }
    }

    /// `samples` at `volume` (0...1).
    private func scaled(_ samples: [Int16], by volume: Float) -> [Int16] {
        guard volume < 1 else { return samples }
        return samples.map { Int16((Float($0) * volume).rounded()) }
    }

    /// The end of the file, heard: rewinds, reports and tells the delegate, unless the app changed something
    /// meanwhile (a pause during the drain wins).
    private func finish(session: Int, epoch: Int) {
        let finished = state.withLock { state -> Bool in
            guard state.isPlaying, state.session == session, state.epoch == epoch else { return false }
            state.isPlaying = false
            // As AVAudioPlayer: after the end, currentTime is 0 and play() starts again from the beginning.
            state.frame = 0
            state.latencyFrames = 0
            state.loopsPlayed = 0
            state.epoch += 1
            return true
        }
        guard finished else { return }
        reportActivity()
        notifyFinished(successfully: true)
    }

    /// The output failed: stops where the sound stopped, reports and tells the delegate.
    private func fail(session: Int, epoch: Int, error: AudioPlayerError) {
        let failed = state.withLock { state -> Bool in
            guard state.isPlaying, state.session == session, state.epoch == epoch else { return false }
            state.isPlaying = false
            state.frame = max(0, state.frame - state.latencyFrames)
            state.latencyFrames = 0
            state.epoch += 1
            return true
        }
        guard failed else { return }
        reportActivity()
        notifyError(error)
    }
}
