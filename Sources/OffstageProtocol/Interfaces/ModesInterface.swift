import OffstageCore

/// `io.offstage.Modes`: what an app's process may ask of its long-running background modes (SPEC §7). As with
/// `io.offstage.App`, the daemon knows the calling app from the connection's peer credentials.
public enum ModesInterface {
    /// The interface name.
    public static let name = "io.offstage.Modes"

    /// The Varlink interface definition, served by `GetInterfaceDescription`.
    public static let definition = """
        # What an app's process may ask of its long-running background modes (audio, location, VoIP, accessories).
        # The daemon identifies the calling app from the connection's peer credentials (SO_PEERCRED).
        interface io.offstage.Modes

        # An audio session (SPEC MODE-1).
        type AudioSession (
          # ambient, soloAmbient, playback, record or playAndRecord
          category: string,
          # play alongside other apps' audio instead of interrupting it
          mixWithOthers: bool,
          active: bool,
          # on deactivation: tell the apps this session interrupted that they may resume
          notifyOthersOnDeactivation: ?bool
        )

        # Sets the app's audio session. backgroundAudio tells whether playback in this session goes on in the
        # background; when it does not, reason says why and what to change (the category, or the `audio` mode).
        method SetAudioSession(session: AudioSession) -> (backgroundAudio: bool, reason: ?string)

        # The app's players started or stopped playing.
        method SetAudioPlaying(playing: bool) -> ()

        # Sets the VoIP keep-alive timeout (at least 600 s; null clears it): the app's keep-alive handler runs in the
        # background before each timeout expires (SPEC MODE-2). Needs the `voip` mode.
        method SetKeepAliveTimeout(seconds: ?float) -> ()

        # Hands the daemon one connected socket, attached to the call (SCM_RIGHTS), which the daemon watches while the
        # app is suspended and never reads: data on it wakes the app. Called on the hand-off socket, the main
        # socket's path with ".handoff" appended, since descriptors cannot pass on the main socket. A new socket
        # replaces the previous one. Needs the `voip` mode.
        method HandOffSocket() -> (kind: string, domain: string)

        # Starts (or changes) standard location updates (SPEC MODE-3): each fix at least distanceFilter metres from the
        # last one given arrives as a `locations` callback while the app runs. With allowsBackground they keep the app
        # running in the background, which needs the `location` mode (NotPermitted otherwise). desiredAccuracy is a
        # hint to the source, in metres.
        method StartUpdatingLocation(desiredAccuracy: float, distanceFilter: float, allowsBackground: bool) -> ()

        # Stops standard location updates.
        method StopUpdatingLocation() -> ()

        # Starts monitoring significant location changes (about 500 m): they wake the app, or launch it into the
        # background (launch reason `location`), even after the user force-quit it. Kept across restarts until stopped.
        method StartMonitoringSignificantChanges() -> ()

        # Stops monitoring significant location changes.
        method StopMonitoringSignificantChanges() -> ()

        # An accessory the app registered (SPEC MODE-4).
        type Accessory (
          # the app's name for it: 1 to 64 letters, digits, '.', '_' or '-'
          name: string,
          # the absolute path of its channel: a character device (/dev/ttyACM0, /dev/rfcomm0), a link to one
          # (/dev/serial/by-id/...) or a Unix socket
          path: string,
          # external-accessory, bluetooth-central or bluetooth-peripheral
          mode: string,
          # whether the path exists now
          connected: bool,
          # whether the app handed off an open session to it
          session: bool
        )

        # Registers an accessory: from now on, even after the app's process ends and across restarts, the daemon
        # watches its path. When it appears the app is woken, or launched into the background (launch reason
        # `accessory`) unless the user force-quit it; when it goes the app is woken; each time the app has about 10 s
        # (an `accessory` callback). Needs the accessory's mode (NotPermitted otherwise). Registering the same
        # accessory again changes nothing; a new path for a name replaces the registration.
        method RegisterAccessory(name: string, path: string, mode: string) -> (accessory: Accessory)

        # Unregisters an accessory: it is not watched any more and its session is closed.
        method UnregisterAccessory(name: string) -> ()

        # The accessories the app registered.
        method Accessories() -> (accessories: []Accessory)

        # Hands the daemon the open channel to a registered accessory (a character device, a FIFO or a connected
        # socket), attached to the call (SCM_RIGHTS), on the hand-off socket as HandOffSocket is. The daemon watches
        # it while the app is suspended and never reads it: data wakes the app, a hang-up is a disconnection.
        # kind: character-device, fifo or socket. A new session of the same accessory replaces the previous one.
        method HandOffAccessorySession(name: string) -> (kind: string)

        # The calling process belongs to no installed app.
        error NotAnApp (pid: int, message: string, fix: string)

        # The calling process is not the app's running process.
        error AppNotRunning (message: string, fix: string)

        # The foreground app's audio, or an interruption, holds the audio.
        error CannotInterruptOthers (message: string, fix: string)

        # The manifest does not declare the mode the call needs (SPEC MODE-6).
        error NotPermitted (message: string, fix: string)

        # An argument is not acceptable.
        error InvalidArgument (message: string, fix: string)
        """

    /// Full method names.
    public enum Method {
        public static let setAudioSession = "io.offstage.Modes.SetAudioSession"
        public static let setAudioPlaying = "io.offstage.Modes.SetAudioPlaying"
        public static let setKeepAliveTimeout = "io.offstage.Modes.SetKeepAliveTimeout"
        public static let handOffSocket = "io.offstage.Modes.HandOffSocket"
        public static let startUpdatingLocation = "io.offstage.Modes.StartUpdatingLocation"
        public static let stopUpdatingLocation = "io.offstage.Modes.StopUpdatingLocation"
        public static let startMonitoringSignificantChanges = "io.offstage.Modes.StartMonitoringSignificantChanges"
        public static let stopMonitoringSignificantChanges = "io.offstage.Modes.StopMonitoringSignificantChanges"
        public static let registerAccessory = "io.offstage.Modes.RegisterAccessory"
        public static let unregisterAccessory = "io.offstage.Modes.UnregisterAccessory"
        public static let accessories = "io.offstage.Modes.Accessories"
        public static let handOffAccessorySession = "io.offstage.Modes.HandOffAccessorySession"
    }

    /// An audio session on the wire.
    public struct AudioSessionMessage: Codable, Hashable, Sendable {
        public var category: String
        public var mixWithOthers: Bool
        public var active: Bool
        public var notifyOthersOnDeactivation: Bool?

        public init(category: String, mixWithOthers: Bool, active: Bool, notifyOthersOnDeactivation: Bool? = nil) {
            self.category = category
            self.mixWithOthers = mixWithOthers
            self.active = active
            self.notifyOthersOnDeactivation = notifyOthersOnDeactivation
        }

        /// The core's request, or what is wrong with the message.
        public func request() -> Result<AudioSessionRequest, CoreError> {
            guard let category = AudioSessionCategory(rawValue: category) else {
                let names = AudioSessionCategory.allCases.map(\.rawValue).joined(separator: ", ")
                return .failure(
                    CoreError(
                        .invalidArgument, "\(QuotedText.quote(category)) is not an audio session category",
                        fix: "use one of \(names)"))
            }
            return .success(
                AudioSessionRequest(
                    category: category, mixWithOthers: mixWithOthers, active: active,
                    notifyOthersOnDeactivation: notifyOthersOnDeactivation ?? false))
        }
    }

    /// `SetAudioSession` parameters.
    public struct SetAudioSessionParameters: Codable, Hashable, Sendable {
        public var session: AudioSessionMessage
        public init(session: AudioSessionMessage) { self.session = session }
    }

    /// `SetAudioSession` reply.
    public struct SetAudioSessionReply: Codable, Hashable, Sendable {
        public var backgroundAudio: Bool
        public var reason: String?
        public init(backgroundAudio: Bool, reason: String? = nil) {
            self.backgroundAudio = backgroundAudio
            self.reason = reason
        }
    }

    /// `SetAudioPlaying` parameters.
    public struct SetAudioPlayingParameters: Codable, Hashable, Sendable {
        public var playing: Bool
        public init(playing: Bool) { self.playing = playing }
    }

    /// `SetKeepAliveTimeout` parameters.
    public struct SetKeepAliveParameters: Codable, Hashable, Sendable {
        public var seconds: Double?
        public init(seconds: Double?) { self.seconds = seconds }

        // Null clears the timeout: written, not left out, so the call says what it means.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(seconds, forKey: .seconds)
        }
    }

    /// `HandOffSocket` reply: what the daemon found the socket to be.
    public struct HandOffReply: Codable, Hashable, Sendable {
        /// `stream` or `datagram`.
        public var kind: String
        /// `inet`, `inet6` or `unix`.
        public var domain: String
        public init(kind: String, domain: String) {
            self.kind = kind
            self.domain = domain
        }
    }

    /// The hand-off socket of the daemon whose main socket is at `mainSocket`.
    public static func handOffSocketPath(forMain mainSocket: String) -> String { mainSocket + ".handoff" }

    /// `StartUpdatingLocation` parameters.
    public struct StartUpdatingLocationParameters: Codable, Hashable, Sendable {
        public var desiredAccuracy: Double
        public var distanceFilter: Double
        public var allowsBackground: Bool
        public init(desiredAccuracy: Double, distanceFilter: Double, allowsBackground: Bool) {
            self.desiredAccuracy = desiredAccuracy
            self.distanceFilter = distanceFilter
            self.allowsBackground = allowsBackground
        }

        /// The core's request.
        public var request: LocationRequest {
            LocationRequest(desiredAccuracy: desiredAccuracy, distanceFilter: distanceFilter, allowsBackground: allowsBackground)
        }
    }
}
