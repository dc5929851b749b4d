import OffstageCore

/// What a simulated app does with audio, through the same core inputs the SDK's audio session uses (SPEC MODE-1).
extension Simulation {
    /// Activates the app's audio session and starts playing; a refusal is recorded in ``errors``.
    mutating func playAudio(_ request: AudioSessionRequest, pid: Int32, app id: AppID) {
        do throws(CoreError) {
            perform(try core.setAudioSession(id, pid: pid, request, at: now).actions)
            processes[pid]?.audio = request
            setPlaying(true, pid: pid, app: id)
        } catch {
            errors.append(error)
        }
    }

    /// The app's players start or stop.
    mutating func setPlaying(_ playing: Bool, pid: Int32, app id: AppID) {
        do throws(CoreError) {
            perform(try core.setAudioPlaying(id, pid: pid, playing: playing, at: now))
        } catch {
            errors.append(error)
        }
    }

    /// A system audio interruption (an incoming call) begins or ends.
    public mutating func audioInterruption(began: Bool) throws(CoreError) {
        perform(try core.audioInterruption(began: began, at: now))
    }
}

extension Simulation {
    /// The app's code sets its audio session outside any callback (a button the user taps, a remote command).
    public mutating func setAudioSession(_ id: AppID, _ request: AudioSessionRequest) throws(CoreError) {
        let pid = core.apps[id]?.process?.pid ?? -1
        perform(try core.setAudioSession(id, pid: pid, request, at: now).actions)
        if request.active, let pid = core.apps[id]?.process?.pid { processes[pid]?.audio = request }
    }

    /// The app's code starts or stops its players outside any callback.
    public mutating func setAudioPlaying(_ id: AppID, _ playing: Bool) throws(CoreError) {
        perform(try core.setAudioPlaying(id, pid: core.apps[id]?.process?.pid ?? -1, playing: playing, at: now))
    }
}
