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

        # An argument is not acceptable, or the action does not apply now.
        error InvalidArgument (message: string, fix: string)
        """

    /// Full method names.
    public enum Method {
        public static let audioSessions = "io.offstage.ModesControl.AudioSessions"
        public static let audioInterruption = "io.offstage.ModesControl.AudioInterruption"
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
}
