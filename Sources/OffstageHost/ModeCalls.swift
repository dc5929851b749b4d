import OffstageCore
import OffstageProtocol

/// The calls of `io.offstage.Modes` that ask or tell the core (SPEC §7: audio, location, the VoIP keep-alive),
/// answered the same way by every shell. Handing off a socket or an accessory session passes descriptors, so each shell
/// answers those its own way; accessories' registration checks a device path on the machine, which is the daemon's.
public enum ModeCalls {
    /// The methods answered here, unqualified.
    public static let methods: Set<String> = [
        "SetAudioSession", "SetAudioPlaying", "SetKeepAliveTimeout", "StartUpdatingLocation", "StopUpdatingLocation",
        "StartMonitoringSignificantChanges", "StopMonitoringSignificantChanges",
    ]

    /// Answers `method` (one of ``methods``) for `caller` at `now`.
    ///
    /// - Throws: `org.varlink.service.InvalidParameter` for parameters that do not decode, and
    ///   `io.offstage.Modes.<Code>` for what the core refused (``refusing(_:)``).
    public static func answer(
        _ method: String, _ call: VarlinkReceivedCall, caller: AppCaller, core: inout OffstageCore, at now: Instant
    ) throws(VarlinkError) -> HostAnswer {
        let (id, pid) = (caller.app, caller.pid)
        switch method {
        case "SetAudioSession":
            let parameters = try call.decodeParameters(as: ModesInterface.SetAudioSessionParameters.self)
            let (background, actions) = try refusing { () throws(CoreError) in
                let request = try parameters.session.request().get()
                return try core.setAudioSession(id, pid: pid, request, at: now)
            }
            let holds = background.verdict == .holds
            return HostAnswer(
                reply: ModesInterface.SetAudioSessionReply(backgroundAudio: holds, reason: holds ? nil : background.reason),
                actions: actions)
        case "SetAudioPlaying":
            let parameters = try call.decodeParameters(as: ModesInterface.SetAudioPlayingParameters.self)
            return HostAnswer(
                actions: try refusing { () throws(CoreError) in
                    try core.setAudioPlaying(id, pid: pid, playing: parameters.playing, at: now)
                })
        case "SetKeepAliveTimeout":
            let parameters = try call.decodeParameters(as: ModesInterface.SetKeepAliveParameters.self)
            return HostAnswer(
                actions: try refusing { () throws(CoreError) in
                    try core.setKeepAliveTimeout(id, pid: pid, seconds: parameters.seconds, at: now)
                })
        case "StartUpdatingLocation":
            let parameters = try call.decodeParameters(as: ModesInterface.StartUpdatingLocationParameters.self)
            return HostAnswer(
                actions: try refusing { () throws(CoreError) in
                    try core.startUpdatingLocation(id, pid: pid, parameters.request, at: now)
                })
        case "StopUpdatingLocation":
            return HostAnswer(actions: try refusing { () throws(CoreError) in try core.stopUpdatingLocation(id, pid: pid, at: now) })
        case "StartMonitoringSignificantChanges":
            return HostAnswer(
                actions: try refusing { () throws(CoreError) in
                    try core.startMonitoringSignificantLocationChanges(id, pid: pid, at: now)
                })
        case "StopMonitoringSignificantChanges":
            return HostAnswer(
                actions: try refusing { () throws(CoreError) in
                    try core.stopMonitoringSignificantLocationChanges(id, pid: pid, at: now)
                })
        default:
            throw VarlinkError.methodNotFound("\(ModesInterface.name).\(method)")
        }
    }

    /// Runs a core call for an app's modes; a refusal is the modes interface's error: `CannotInterruptOthers`,
    /// `InvalidArgument` and `NotPermitted` as they are, anything else `AppNotRunning` (the process the call came from is
    /// not the app's running one).
    public static func refusing<Result>(_ body: () throws(CoreError) -> Result) throws(VarlinkError) -> Result {
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
