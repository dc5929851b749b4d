import OffstageCore
import OffstageProtocol

/// `io.offstage.ModesControl`: what the user may see and simulate of the long-running background modes (SPEC CLI-1).
/// A process that belongs to an app is refused.
struct ModesControlService: VarlinkInterface {
    let engine: DaemonEngine

    var interfaceDescription: VarlinkInterfaceDescription {
        VarlinkInterfaceDescription(ModesControlInterface.definition)
    }

    var methods: [String: VarlinkMethodHandler] {
        let audio: [String: VarlinkMethodHandler] = [
            "AudioSessions": { context, _, responder in
                try engine.requireUser(context)
                responder.reply(engine.audioSessionsReply())
            },
            "AudioInterruption": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(ModesControlInterface.AudioInterruptionParameters.self)
                do throws(CoreError) {
                    engine.apply(try engine.core.audioInterruption(began: parameters.begin, at: engine.now))
                } catch {
                    throw error.varlink(in: ModesControlInterface.name)
                }
                responder.reply(engine.audioSessionsReply())
            },
            "SystemEvent": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(ModesControlInterface.SystemEventParameters.self)
                let event: SystemEvent
                do throws(CoreError) {
                    event = try parameters.event().get()
                } catch {
                    throw error.varlink(in: ModesControlInterface.name)
                }
                let (told, actions) = engine.core.systemEvent(event, at: engine.now)
                engine.apply(actions)
                responder.reply(ModesControlInterface.SystemEventReply(apps: told))
            },
            "VoIPApps": { context, _, responder in
                try engine.requireUser(context)
                responder.reply(engine.voipAppsReply())
            },
            "VoIPSocketEvent": { context, request, responder in
                try engine.requireUser(context)
                let parameters = try request.decodeParameters(ModesControlInterface.VoIPSocketEventParameters.self)
                let id = try engine.appID(parameters.app)
                do throws(CoreError) {
                    engine.apply(try engine.core.simulateVoIPSocketEvent(id, closed: parameters.closed, at: engine.now))
                } catch {
                    throw error.varlink(in: ModesControlInterface.name)
                }
                responder.reply(engine.voipAppsReply())
            },
        ]
        return audio.merging(locationMethods) { first, _ in first }.merging(accessoryMethods) { first, _ in first }
    }
}

extension DaemonEngine {
    /// Every audio session, sorted by app, with the audio mode's verdict on each app.
    func audioSessionsReply() -> ModesControlInterface.AudioSessionsReply {
        let audio = core.modes.audio
        let now = self.now
        let sessions = audio.sessions.keys.sorted().compactMap { id -> ModesControlInterface.AudioSessionMessage? in
            guard let session = audio.session(of: id) else { return nil }
            let hold = core.modeHolds(of: id, at: now).first { $0.mode == .audio }
            return ModesControlInterface.AudioSessionMessage(app: id, session: session, hold: hold)
        }
        return ModesControlInterface.AudioSessionsReply(sessions: sessions, interruption: audio.systemInterruption)
    }
}

extension DaemonEngine {
    /// Every app the VoIP mode knows of, sorted by app.
    func voipAppsReply() -> ModesControlInterface.VoIPAppsReply {
        let voip = core.modes.voip
        let ids = Set(voip.keepAlives.keys).union(voip.sockets.keys).union(voip.relaunchAt.keys).sorted()
        return ModesControlInterface.VoIPAppsReply(apps: ids.map { ModesControlInterface.VoIPAppMessage(app: $0, voip: voip) })
    }
}
