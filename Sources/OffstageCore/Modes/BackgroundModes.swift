/// The long-running background modes (SPEC §7), one component each, composed.
///
/// Each component owns its mode's state, takes one method per input and returns ``ModeAction``s; this type only
/// routes what every component must hear (a process ended) and collects their verdicts on holding an app. The core
/// asks ``holds(_:_:)`` before it suspends an app (SPEC LC-4).
public struct BackgroundModes: Hashable, Sendable {
    /// Audio sessions and who has the audio (SPEC MODE-1).
    public internal(set) var audio = AudioSessions()
    /// VoIP keep-alive handlers, handed-off sockets and relaunches (SPEC MODE-2).
    public internal(set) var voip = VoIPMode()
    /// Location updates and significant-change monitoring (SPEC MODE-3).
    public internal(set) var location = LocationUpdates()
    /// Registered accessories, their sessions and events (SPEC MODE-4).
    public internal(set) var accessories = Accessories()

    /// No mode active for any app.
    public init() {}

    /// Every component's verdict on the app: those that keep it running and those that would but may not.
    func holds(_ app: AppID, _ context: ModeContext) -> [ModeHold] {
        var holds: [ModeHold] = []
        if let audio = audio.hold(app, context) { holds.append(audio) }
        if let voip = voip.hold(app, context) { holds.append(voip) }
        if let location = location.hold(app, context) { holds.append(location) }
        if let accessory = accessories.hold(app, context) { holds.append(accessory) }
        return holds
    }

    /// The app's process is gone: every mode that ends with the process lets go of it; a VoIP app that exited
    /// abnormally is launched again at `relaunch`.
    mutating func processEnded(_ app: AppID, relaunch: Instant?) -> [ModeAction] {
        location.processEnded(app)
        return audio.processEnded(app) + voip.processEnded(app, relaunch: relaunch) + accessories.processEnded(app)
    }

    /// The app is uninstalled: the modes that outlive its process let go of it (a VoIP relaunch still waiting
    /// would otherwise be a deadline in the past for an app installed again under the same id).
    mutating func forget(_ app: AppID) -> [ModeAction] {
        voip.relaunchDone(app)
        return accessories.forget(app)
    }

    /// The app was upgraded to a manifest declaring `declared`: what outlives the process in a mode no longer
    /// declared ends (SPEC MODE-6).
    mutating func manifestChanged(_ app: AppID, declared: Set<BackgroundMode>) -> [ModeAction] {
        accessories.manifestChanged(app, declared: declared)
    }

    /// The app's process tree was frozen.
    mutating func frozen(_ app: AppID) -> [ModeAction] { voip.frozen(app) + accessories.frozen(app) }

    /// The app's process tree was thawed.
    mutating func thawed(_ app: AppID) -> [ModeAction] { voip.thawed(app) + accessories.thawed(app) }
}
