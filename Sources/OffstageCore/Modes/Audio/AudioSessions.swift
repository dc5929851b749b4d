/// Every app's audio session, and who has the audio (SPEC MODE-1).
///
/// An app with the `audio` mode keeps running in the background while its session is active, of a category that
/// continues in the background, and playing; it is suspended once playback stops. The foreground app always wins the
/// audio: when it activates a session that does not mix, every other session that does not mix is interrupted (its
/// app is told, and then suspended as nothing holds it any more); a background app cannot interrupt the foreground
/// app's audio. Sessions that mix play alongside everything. A system interruption (an incoming call) interrupts
/// every active session and, when it ends, tells them they may resume, waking those that were playing.
public struct AudioSessions: Hashable, Sendable {
    /// The sessions, by app. An app that never touched its session has none.
    public private(set) var sessions: [AppID: AudioSession] = [:]
    /// A system interruption (an incoming call) holds the audio.
    public private(set) var systemInterruption = false

    /// Creates the component with no sessions.
    public init() {}

    /// The app's session, if it has one.
    public func session(of app: AppID) -> AudioSession? { sessions[app] }

    // MARK: Inputs

    /// The app sets its session's category and options and activates or deactivates it.
    /// - Parameter foreground: the app in the foreground, which always wins the audio.
    mutating func configure(_ app: AppID, _ request: AudioSessionRequest, foreground: AppID?) throws(CoreError) -> [ModeAction] {
        var session = sessions[app] ?? AudioSession()
        session.category = request.category
        session.mixWithOthers = request.mixWithOthers
        var actions: [ModeAction] = []
        if request.active {
            if systemInterruption {
                throw CoreError(
                    .cannotInterruptOthers, "an interruption (an incoming call) holds the audio; '\(app)' cannot activate its session",
                    fix: "activate it again when the interruption ends: the app hears the end of the interruption")
            }
            if !session.mixes {
                if let foreground, foreground != app, let front = sessions[foreground], front.active, !front.mixes {
                    throw CoreError(
                        .cannotInterruptOthers,
                        "'\(foreground)' is in the foreground and its audio does not mix; '\(app)' in the background cannot interrupt it",
                        fix: "set the mixWithOthers option to play alongside it, or activate the session when the user leaves '\(foreground)'")
                }
                for other in sessions.keys.sorted() where other != app {
                    guard let session = sessions[other], session.active, !session.mixes else { continue }
                    actions += interrupt(other, by: .app(app))
                }
            }
            if !session.active { actions.append(.log(app, "audio session active (\(session.summaryOfCategory))")) }
            session.active = true
            session.interruption = nil
        } else {
            if session.active { actions.append(.log(app, "audio session inactive")) }
            session.active = false
            session.playing = false
            session.startedByUser = false
            actions += release(interruptedBy: .app(app), shouldResume: request.notifyOthersOnDeactivation)
        }
        sessions[app] = session
        actions.append(.reconsider(app))
        return actions
    }

    /// The app's players started or stopped playing (the SDK reports every change).
    mutating func setPlaying(_ app: AppID, _ playing: Bool, inForeground: Bool) -> [ModeAction] {
        var session = sessions[app] ?? AudioSession()
        guard session.playing != playing else { return [] }
        session.playing = playing
        if playing && inForeground { session.startedByUser = true }
        sessions[app] = session
        return [.log(app, playing ? "audio playing (\(session.summary))" : "audio stopped"), .reconsider(app)]
    }

    /// A system interruption begins (an incoming call): every active session is interrupted.
    mutating func beginSystemInterruption() -> [ModeAction] {
        guard !systemInterruption else { return [] }
        systemInterruption = true
        var actions: [ModeAction] = [.log(nil, "audio interruption began")]
        for app in sessions.keys.sorted() where sessions[app]?.active == true {
            actions += interrupt(app, by: .system)
        }
        return actions
    }

    /// The system interruption ends: the sessions it interrupted may resume, and the apps that were playing are woken
    /// to hear it.
    mutating func endSystemInterruption() -> [ModeAction] {
        guard systemInterruption else { return [] }
        systemInterruption = false
        return [.log(nil, "audio interruption ended")] + release(interruptedBy: .system, shouldResume: true)
    }

    /// The app's process is gone: its session with it; sessions it interrupted hear the end (without resuming).
    mutating func processEnded(_ app: AppID) -> [ModeAction] {
        guard sessions.removeValue(forKey: app) != nil else { return [] }
        return release(interruptedBy: .app(app), shouldResume: false)
    }

    // MARK: Holding the app

    /// Whether the audio mode keeps the app running: holds while its session is active, of a category that goes on
    /// in the background, and playing; denied when the mode is not declared (SPEC MODE-6) or background activity is
    /// off and the user did not start the audio (SPEC SET-2).
    func hold(_ app: AppID, _ context: ModeContext) -> ModeHold? {
        guard let session = sessions[app], session.active, session.playing, session.interruption == nil else { return nil }
        let verdict = Self.backgroundVerdict(session.category, declared: context.declared.contains(.audio))
        guard verdict.verdict == .holds else {
            return ModeHold(.audio, .denied, "playing (\(session.category.rawValue)), but \(verdict.reason)")
        }
        guard context.backgroundActivity || session.startedByUser else {
            return ModeHold(
                .audio, .denied,
                "playing, but background activity is off for this app and the user did not start this audio in the "
                    + "foreground; turn background activity on with `offstage settings APP_ID background-activity=on`")
        }
        return ModeHold(.audio, .holds, "playing (\(session.summaryOfCategory))")
    }

    /// Whether playback of `category` goes on in the background for an app that does or does not declare `audio`.
    public static func backgroundVerdict(_ category: AudioSessionCategory, declared: Bool) -> ModeHold {
        guard category.continuesInBackground else {
            return ModeHold(
                .audio, .denied,
                "the \(category.rawValue) category stops when the app leaves the foreground; "
                    + "use playback (or record, playAndRecord) to keep playing")
        }
        guard declared else { return ModeHold(.audio, .denied, ModeContext.undeclared(.audio)) }
        return ModeHold(.audio, .holds, "\(category.rawValue) goes on in the background")
    }

    // MARK: Helpers

    private mutating func interrupt(_ app: AppID, by interrupter: AudioSession.Interrupter) -> [ModeAction] {
        guard var session = sessions[app] else { return [] }
        session.interruption = AudioSession.Interruption(by: interrupter, wasPlaying: session.playing)
        session.active = false
        session.playing = false
        sessions[app] = session
        let event = AudioInterruption(began: true, reason: interrupter.description)
        return [
            .log(app, "audio interrupted by \(interrupter)"), .notify(app, .audioInterruption(event)), .reconsider(app),
        ]
    }

    /// Ends the interruptions by `interrupter`; with `shouldResume`, the apps that were playing are woken to hear it.
    private mutating func release(interruptedBy interrupter: AudioSession.Interrupter, shouldResume: Bool) -> [ModeAction] {
        var actions: [ModeAction] = []
        for app in sessions.keys.sorted() {
            guard var session = sessions[app], let interruption = session.interruption, interruption.by == interrupter
            else { continue }
            session.interruption = nil
            sessions[app] = session
            let event = AudioInterruption(began: false, shouldResume: shouldResume, reason: interrupter.description)
            actions += [.log(app, "audio interruption by \(interrupter) ended"), .notify(app, .audioInterruption(event))]
            if shouldResume && interruption.wasPlaying {
                actions.append(.resume(app, because: "it may resume the audio that \(interrupter) interrupted"))
            }
            actions.append(.reconsider(app))
        }
        return actions
    }
}

extension AudioSession {
    /// `playback` or `playback, mixes with others`.
    var summaryOfCategory: String {
        mixWithOthers ? "\(category.rawValue), mixes with others" : category.rawValue
    }
}
