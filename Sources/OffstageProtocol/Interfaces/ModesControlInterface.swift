import OffstageCore

/// `io.offstage.ModesControl`: what the user (the `offstage` CLI) may see and simulate of the long-running background
/// modes (SPEC CLI-1, §7). Processes that belong to an app are refused, as with `io.offstage.Control`.
public enum ModesControlInterface {
    /// The interface name.
    public static let name = "io.offstage.ModesControl"

    /// The Varlink interface definition, served by `GetInterfaceDescription`.
    public static let definition = """
        # What the user may see and simulate of the long-running background modes.
        # Processes that belong to an installed app are refused (PermissionDenied).
        interface io.offstage.ModesControl

        # One app's audio session.
        type AudioSession (
          app: string,
          # ambient, soloAmbient, playback, record or playAndRecord
          category: string,
          mixWithOthers: bool,
          active: bool,
          playing: bool,
          # who interrupted it, while an interruption lasts
          interruptedBy: ?string,
          # what the audio mode says about the app: "audio: playing (playback)", or why it gives no background time
          hold: ?string
        )

        # Every audio session, and whether a system interruption (an incoming call) holds the audio.
        method AudioSessions() -> (sessions: []AudioSession, interruption: bool)

        # Begins (begin true) or ends a system audio interruption, as an incoming call does. Replies with the sessions
        # afterwards.
        method AudioInterruption(begin: bool) -> (sessions: []AudioSession, interruption: bool)

        # One VoIP app (SPEC MODE-2).
        type VoIPApp (
          app: string,
          # the keep-alive timeout, and when the current one expires (seconds since the Unix epoch)
          keepAliveTimeout: ?float,
          keepAliveExpiresAt: ?float,
          # whether the app handed off a socket, and whether the daemon watches it now (only while the app is frozen)
          socket: bool,
          watched: bool,
          # when it is launched again after an abnormal exit
          relaunchAt: ?float
        )

        # Every app with a keep-alive handler, a handed-off socket or a pending relaunch.
        method VoIPApps() -> (apps: []VoIPApp)

        # As if data (or, with closed, a hang-up) arrived on the socket the app handed off: the same effects, for
        # tests without a signalling server. The app must be suspended with its socket watched.
        method VoIPSocketEvent(app: string, closed: bool) -> (apps: []VoIPApp)

        # A system event, as the machine would post it (SPEC LC-4): every app with a process hears it; a suspended
        # one when it runs again, once per kind. kind: significant-time-change, time-zone-change, locale-change,
        # settings-change, battery-level-change, battery-state-change, network-change, accessory-connect or
        # accessory-disconnect.
        method SystemEvent(kind: string) -> (apps: int)

        # The app is not installed.
        error AppNotInstalled (message: string, fix: string)

        # A position (SPEC MODE-3): the fields of io.offstage.App's Location (named apart from the Location method).
        type Position (
          # degrees, WGS84
          latitude: float,
          longitude: float,
          # metres above mean sea level, when known
          altitude: ?float,
          # metres (68 % radius)
          horizontalAccuracy: float,
          verticalAccuracy: ?float,
          # metres per second, when known
          speed: ?float,
          # degrees clockwise from true north, when known
          course: ?float,
          # seconds since the Unix epoch
          timestamp: float
        )

        # One app that receives locations.
        type LocationApp (
          app: string,
          # standard updates on
          updating: bool,
          # metres; with updating
          distanceFilter: ?float,
          desiredAccuracy: ?float,
          allowsBackground: ?bool,
          # significant-change monitoring on (survives the process and restarts)
          significantChanges: bool,
          # what the location mode says about the app: "location: receiving location updates", or why it gives no
          # background time
          hold: ?string
        )

        # The location source and who listens. kind: none, replay, gpsd or fixed; source describes it; status says
        # how it is doing (or, with no source, how to set one).
        method Location() -> (kind: string, source: string, status: string, lastFix: ?Position, apps: []LocationApp)

        # Replays a GPX or NMEA track file (a path on the daemon's machine) at speed times real time (default 1),
        # from the start again after the end with loop. On a bad file nothing changes: BadTrack names the file, the
        # line and the fix.
        method ReplayTrack(path: string, speed: ?float, loop: ?bool) -> (
          kind: string, source: string, status: string, lastFix: ?Position, apps: []LocationApp
        )

        # Sets a fixed position (degrees) with accuracy metres of error (default 10).
        method SetLocation(latitude: float, longitude: float, accuracy: ?float) -> (
          kind: string, source: string, status: string, lastFix: ?Position, apps: []LocationApp
        )

        # Reads positions from gpsd at host (default 127.0.0.1) and port (default 2947); it reconnects if gpsd goes
        # away.
        method UseGpsd(host: ?string, port: ?int) -> (
          kind: string, source: string, status: string, lastFix: ?Position, apps: []LocationApp
        )

        # One registered accessory (SPEC MODE-4).
        type AccessoryLink (
          app: string,
          name: string,
          path: string,
          # external-accessory, bluetooth-central or bluetooth-peripheral
          mode: string,
          # whether its path exists; null until the daemon has looked (just after a start)
          connected: ?bool,
          # whether the app handed off a session, and whether the daemon watches it now (only while the app is frozen)
          session: bool,
          watched: bool,
          # what the accessory's mode says about the app while it handles an event, or why it gives no background time
          hold: ?string
        )

        # Every registered accessory, by app and name.
        method Accessories() -> (accessories: []AccessoryLink)

        # As if the app's accessory name connected, disconnected or sent data (event): the same effects as from the
        # device, for tests and for accessories the daemon cannot see (Bluetooth without an adapter). Replies with the
        # accessories afterwards.
        method AccessoryEvent(app: string, name: string, event: string) -> (accessories: []AccessoryLink)

        # A track file cannot be read or is not a usable GPX or NMEA track.
        error BadTrack (file: string, line: ?int, message: string, fix: string)

        # An argument is not acceptable, or the action does not apply now.
        error InvalidArgument (message: string, fix: string)
        """

    /// Full method names.
    public enum Method {
        public static let audioSessions = "io.offstage.ModesControl.AudioSessions"
        public static let audioInterruption = "io.offstage.ModesControl.AudioInterruption"
        public static let voipApps = "io.offstage.ModesControl.VoIPApps"
        public static let voipSocketEvent = "io.offstage.ModesControl.VoIPSocketEvent"
        public static let systemEvent = "io.offstage.ModesControl.SystemEvent"
        public static let location = "io.offstage.ModesControl.Location"
        public static let replayTrack = "io.offstage.ModesControl.ReplayTrack"
        public static let setLocation = "io.offstage.ModesControl.SetLocation"
        public static let useGpsd = "io.offstage.ModesControl.UseGpsd"
        public static let accessories = "io.offstage.ModesControl.Accessories"
        public static let accessoryEvent = "io.offstage.ModesControl.AccessoryEvent"
    }

    /// `SystemEvent` parameters.
    public struct SystemEventParameters: Codable, Hashable, Sendable {
        public var kind: String
        public init(kind: String) { self.kind = kind }

        /// The core's event, or what is wrong with the kind.
        public func event() -> Result<SystemEvent, CoreError> {
            guard let event = SystemEvent(rawValue: kind) else {
                return .failure(
                    CoreError(
                        .invalidArgument, "\(QuotedText.quote(kind)) is not a system event",
                        fix: "use one of \(SystemEvent.allCases.map(\.rawValue).joined(separator: ", "))"))
            }
            return .success(event)
        }
    }

    /// `SystemEvent` reply: how many apps were told (or will be, when they run again).
    public struct SystemEventReply: Codable, Hashable, Sendable {
        public var apps: Int
        public init(apps: Int) { self.apps = apps }
    }

    /// One app's audio session on the wire.
    public struct AudioSessionMessage: Codable, Hashable, Sendable {
        public var app: String
        public var category: String
        public var mixWithOthers: Bool
        public var active: Bool
        public var playing: Bool
        public var interruptedBy: String?
        public var hold: String?

        /// The wire form of an app's session and the audio mode's verdict on the app.
        public init(app: AppID, session: AudioSession, hold: ModeHold?) {
            self.app = app.rawValue
            category = session.category.rawValue
            mixWithOthers = session.mixWithOthers
            active = session.active
            playing = session.playing
            interruptedBy = session.interruption.map { $0.by.description }
            self.hold = hold?.description
        }

        // Optionals are written as null (not left out) so scripts can rely on every key being present.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(app, forKey: .app)
            try container.encode(category, forKey: .category)
            try container.encode(mixWithOthers, forKey: .mixWithOthers)
            try container.encode(active, forKey: .active)
            try container.encode(playing, forKey: .playing)
            try container.encode(interruptedBy, forKey: .interruptedBy)
            try container.encode(hold, forKey: .hold)
        }
    }

    /// `AudioSessions` and `AudioInterruption` reply.
    public struct AudioSessionsReply: Codable, Hashable, Sendable {
        public var sessions: [AudioSessionMessage]
        public var interruption: Bool
        public init(sessions: [AudioSessionMessage], interruption: Bool) {
            self.sessions = sessions
            self.interruption = interruption
        }
    }

    /// `AudioInterruption` parameters.
    public struct AudioInterruptionParameters: Codable, Hashable, Sendable {
        public var begin: Bool
        public init(begin: Bool) { self.begin = begin }
    }

    /// One VoIP app on the wire.
    public struct VoIPAppMessage: Codable, Hashable, Sendable {
        public var app: String
        public var keepAliveTimeout: Double?
        public var keepAliveExpiresAt: Double?
        public var socket: Bool
        public var watched: Bool
        public var relaunchAt: Double?

        /// The wire form of what the VoIP mode knows of `app`.
        public init(app: AppID, voip: VoIPMode) {
            self.app = app.rawValue
            keepAliveTimeout = voip.keepAlives[app].map { Double($0.interval.components.seconds) }
            keepAliveExpiresAt = voip.keepAlives[app]?.expiresAt.secondsSinceEpoch
            socket = voip.sockets[app] != nil
            watched = voip.sockets[app]?.armed ?? false
            relaunchAt = voip.relaunchAt[app]?.secondsSinceEpoch
        }

        // Optionals are written as null (not left out) so scripts can rely on every key being present.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(app, forKey: .app)
            try container.encode(keepAliveTimeout, forKey: .keepAliveTimeout)
            try container.encode(keepAliveExpiresAt, forKey: .keepAliveExpiresAt)
            try container.encode(socket, forKey: .socket)
            try container.encode(watched, forKey: .watched)
            try container.encode(relaunchAt, forKey: .relaunchAt)
        }
    }

    /// `VoIPApps` and `VoIPSocketEvent` reply.
    public struct VoIPAppsReply: Codable, Hashable, Sendable {
        public var apps: [VoIPAppMessage]
        public init(apps: [VoIPAppMessage]) { self.apps = apps }
    }

    /// `VoIPSocketEvent` parameters.
    public struct VoIPSocketEventParameters: Codable, Hashable, Sendable {
        public var app: String
        public var closed: Bool
        public init(app: String, closed: Bool) {
            self.app = app
            self.closed = closed
        }
    }
}
