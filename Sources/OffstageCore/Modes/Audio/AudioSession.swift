/// An audio session's category: what the app's audio is for (SPEC MODE-1), as `AVAudioSession.Category` names them.
public enum AudioSessionCategory: String, CaseIterable, Hashable, Sendable, Codable {
    /// Sound that accompanies the app and always mixes with others; stops when the app leaves the foreground.
    case ambient
    /// The default: the app's own sound, which silences others; stops when the app leaves the foreground.
    case soloAmbient
    /// Playback that is central to the app (music, podcasts): goes on in the background with the `audio` mode.
    case playback
    /// Recording, which goes on in the background with the `audio` mode.
    case record
    /// Recording and playback (VoIP, voice chat): goes on in the background with the `audio` mode.
    case playAndRecord

    /// Whether audio of this category may keep an app running in the background.
    public var continuesInBackground: Bool {
        switch self {
        case .playback, .record, .playAndRecord: true
        case .ambient, .soloAmbient: false
        }
    }
}

/// What an app asks of its audio session: its category and options, and whether it is active.
public struct AudioSessionRequest: Hashable, Sendable, Codable {
    /// The category.
    public var category: AudioSessionCategory
    /// The `mixWithOthers` option: play alongside other apps' audio instead of interrupting it.
    public var mixWithOthers: Bool
    /// Whether the session should be active.
    public var active: Bool
    /// On deactivation: tell the apps this session interrupted that they may resume (`notifyOthersOnDeactivation`).
    public var notifyOthersOnDeactivation: Bool

    /// Creates a request.
    public init(
        category: AudioSessionCategory, mixWithOthers: Bool = false, active: Bool, notifyOthersOnDeactivation: Bool = false
    ) {
        self.category = category
        self.mixWithOthers = mixWithOthers
        self.active = active
        self.notifyOthersOnDeactivation = notifyOthersOnDeactivation
    }
}

/// One app's audio session as the core tracks it (SPEC MODE-1).
public struct AudioSession: Hashable, Sendable, Codable {
    /// Who interrupted a session.
    public enum Interrupter: Hashable, Sendable, Codable, CustomStringConvertible {
        /// The system: an incoming call, an alarm (`offstage audio interrupt`).
        case system
        /// Another app activated a session that does not mix.
        case app(AppID)

        public var description: String {
            switch self {
            case .system: "an incoming call (a system interruption)"
            case .app(let id): "'\(id)', which started audio that does not mix"
            }
        }
    }

    /// An interruption in progress.
    public struct Interruption: Hashable, Sendable, Codable {
        /// Who interrupted.
        public var by: Interrupter
        /// Whether the app was playing when it began (it may resume when it ends).
        public var wasPlaying: Bool

        /// Creates an interruption record.
        public init(by: Interrupter, wasPlaying: Bool) {
            self.by = by
            self.wasPlaying = wasPlaying
        }
    }

    /// The category.
    public var category: AudioSessionCategory = .soloAmbient
    /// The `mixWithOthers` option.
    public var mixWithOthers = false
    /// Whether the session is active.
    public var active = false
    /// Whether the app's players are playing (the SDK reports it).
    public var playing = false
    /// The interruption in progress; an interrupted session is inactive.
    public var interruption: Interruption?
    /// Playback began while the app was in the foreground: the user started it, so it may go on in the background
    /// even when the user turned background activity off (SPEC SET-2).
    public var startedByUser = false

    /// A session with the defaults (solo ambient, inactive).
    public init() {}

    /// Whether the session plays alongside other apps' audio.
    public var mixes: Bool { category == .ambient || mixWithOthers }

    /// `playback, mixes, active, playing`.
    public var summary: String {
        var parts = [category.rawValue]
        if mixWithOthers { parts.append("mixes with others") }
        if let interruption { parts.append("interrupted by \(interruption.by)") }
        parts.append(active ? "active" : "inactive")
        if playing { parts.append("playing") }
        return parts.joined(separator: ", ")
    }
}

/// An audio interruption as the app hears it (`AVAudioSession.interruptionNotification`).
public struct AudioInterruption: Hashable, Sendable, Codable {
    /// True when the interruption begins, false when it ends.
    public var began: Bool
    /// On the end: the app may resume playback (`AVAudioSession.InterruptionOptions.shouldResume`).
    public var shouldResume: Bool
    /// Who interrupted, for people.
    public var reason: String

    /// Creates an interruption event.
    public init(began: Bool, shouldResume: Bool = false, reason: String) {
        self.began = began
        self.shouldResume = shouldResume
        self.reason = reason
    }
}
