import OffstageCore
import OffstageProtocol

/// `io.offstage.Modes`: the calls an app's SDK makes for its long-running background modes (SPEC §7). The app is the
/// one that owns the calling process.
struct ModesService: VarlinkInterface {
    let engine: DaemonEngine

    var interfaceDescription: VarlinkInterfaceDescription {
        VarlinkInterfaceDescription(ModesInterface.definition)
    }

    var methods: [String: VarlinkMethodHandler] {
        let modes: [String: VarlinkMethodHandler] = [
            "SetAudioSession": { context, request, responder in
                let parameters = try request.decodeParameters(ModesInterface.SetAudioSessionParameters.self)
                let (id, pid) = try engine.requireApp(context, in: ModesInterface.name)
                let (background, actions) = try engine.modesCall { () throws(CoreError) in
                    let audioRequest = try parameters.session.request().get()
                    return try engine.core.setAudioSession(id, pid: pid, audioRequest, at: engine.now)
                }
                engine.apply(actions)
                responder.reply(
                    ModesInterface.SetAudioSessionReply(
                        backgroundAudio: background.verdict == .holds,
                        reason: background.verdict == .holds ? nil : background.reason))
            },
            "SetAudioPlaying": { context, request, responder in
                let parameters = try request.decodeParameters(ModesInterface.SetAudioPlayingParameters.self)
                let (id, pid) = try engine.requireApp(context, in: ModesInterface.name)
                engine.apply(
                    try engine.modesCall { () throws(CoreError) in
                        try engine.core.setAudioPlaying(id, pid: pid, playing: parameters.playing, at: engine.now)
                    })
                responder.reply()
            },
            "SetKeepAliveTimeout": { context, request, responder in
                let parameters = try request.decodeParameters(ModesInterface.SetKeepAliveParameters.self)
                let (id, pid) = try engine.requireApp(context, in: ModesInterface.name)
                engine.apply(
                    try engine.modesCall { () throws(CoreError) in
                        try engine.core.setKeepAliveTimeout(id, pid: pid, seconds: parameters.seconds, at: engine.now)
                    })
                responder.reply()
            },
            // HandOffSocket is served on the hand-off socket (descriptors cannot pass here): see `HandedOffChannels`.
            "StartUpdatingLocation": { context, request, responder in
                let parameters = try request.decodeParameters(ModesInterface.StartUpdatingLocationParameters.self)
                let (id, pid) = try engine.requireApp(context, in: ModesInterface.name)
                engine.apply(
                    try engine.modesCall { () throws(CoreError) in
                        try engine.core.startUpdatingLocation(id, pid: pid, parameters.request, at: engine.now)
                    })
                responder.reply()
            },
            "StopUpdatingLocation": { context, _, responder in
                let (id, pid) = try engine.requireApp(context, in: ModesInterface.name)
                engine.apply(
                    try engine.modesCall { () throws(CoreError) in
                        try engine.core.stopUpdatingLocation(id, pid: pid, at: engine.now)
                    })
                responder.reply()
            },
            "StartMonitoringSignificantChanges": { context, _, responder in
                let (id, pid) = try engine.requireApp(context, in: ModesInterface.name)
                engine.apply(
                    try engine.modesCall { () throws(CoreError) in
                        try engine.core.startMonitoringSignificantLocationChanges(id, pid: pid, at: engine.now)
                    })
                responder.reply()
            },
            "StopMonitoringSignificantChanges": { context, _, responder in
                let (id, pid) = try engine.requireApp(context, in: ModesInterface.name)
                engine.apply(
                    try engine.modesCall { () throws(CoreError) in
                        try engine.core.stopMonitoringSignificantLocationChanges(id, pid: pid, at: engine.now)
                    })
                responder.reply()
            },
        ]
        return modes.merging(accessoryMethods) { first, _ in first }
    }
}

extension DaemonEngine {
    /// Runs a core call for an app's modes, turning its error into the modes interface's error.
    func modesCall<Result>(_ body: () throws(CoreError) -> Result) throws(VarlinkError) -> Result {
        do {
            return try body()
        } catch {
            switch error.code {
            case .cannotInterruptOthers, .invalidArgument, .notPermitted:
                throw error.varlink(in: ModesInterface.name)
            default:
                throw CoreError(.appNotRunning, error.message, fix: error.fix).varlink(in: ModesInterface.name)
            }
        }
    }
}
