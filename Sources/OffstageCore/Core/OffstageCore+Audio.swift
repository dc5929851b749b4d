/// Audio inputs (SPEC MODE-1): the app's session and playback, and system interruptions. `pid` always comes from the
/// caller's connection, so an app can only change its own session.
extension OffstageCore {
    /// The app sets its audio session's category and options and activates or deactivates it.
    ///
    /// - Returns: whether playback in the session, as configured now, goes on in the background — denied, with the
    ///   reason, when the category stops in the background or the `audio` mode is not declared (SPEC MODE-6), so the
    ///   SDK can warn the developer at once —, and the actions.
    /// - Throws: ``CoreError/Code/cannotInterruptOthers`` when the foreground app's audio or an interruption holds
    ///   the audio; nothing changes then.
    public mutating func setAudioSession(
        _ id: AppID, pid: Int32, _ request: AudioSessionRequest, at now: Instant
    ) throws(CoreError) -> (background: ModeHold, actions: [CoreAction]) {
        _ = try runningProcess(id, pid: pid)
        let foreground = device.foregroundApp.flatMap { apps[$0]?.process?.phase.isForeground == true ? $0 : nil }
        let actions: [ModeAction]
        do {
            actions = try modes.audio.configure(id, request, foreground: foreground)
        } catch {
            log(now, id, .warning, "audio session refused: \(error.message)")
            throw error
        }
        perform(actions, now)
        let declared = apps[id]?.app.manifest.backgroundModes.contains(.audio) ?? false
        return (AudioSessions.backgroundVerdict(request.category, declared: declared), finish(now))
    }

    /// The app's players started or stopped playing.
    public mutating func setAudioPlaying(_ id: AppID, pid: Int32, playing: Bool, at now: Instant) throws(CoreError) -> [CoreAction] {
        let process = try runningProcess(id, pid: pid)
        perform(modes.audio.setPlaying(id, playing, inForeground: process.phase.isForeground), now)
        return finish(now)
    }

    /// A system audio interruption (an incoming call, an alarm) begins or ends (`offstage audio interrupt`).
    public mutating func audioInterruption(began: Bool, at now: Instant) throws(CoreError) -> [CoreAction] {
        if began == modes.audio.systemInterruption {
            throw CoreError(
                .invalidArgument, began ? "an audio interruption is already in progress" : "no audio interruption is in progress",
                fix: began ? "end it with `offstage audio interrupt --end`" : "begin one with `offstage audio interrupt --begin`")
        }
        perform(began ? modes.audio.beginSystemInterruption() : modes.audio.endSystemInterruption(), now)
        return finish(now)
    }
}
