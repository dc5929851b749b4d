import OffstageProtocol

extension AudioSession {
    /// What the app's audio is for (`AVAudioSession.Category`).
    public struct Category: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Sound that accompanies the app and mixes with others; stops when the app leaves the foreground.
        public static let ambient = Category(rawValue: "ambient")
        /// The default: the app's own sound, which silences others; stops when the app leaves the foreground.
        public static let soloAmbient = Category(rawValue: "soloAmbient")
        /// Playback central to the app (music, podcasts): goes on in the background with the `audio` mode.
        public static let playback = Category(rawValue: "playback")
        /// Recording: goes on in the background with the `audio` mode.
        public static let record = Category(rawValue: "record")
        /// Recording and playback (voice chat): goes on in the background with the `audio` mode.
        public static let playAndRecord = Category(rawValue: "playAndRecord")

        public var description: String { rawValue }
    }

    /// Options of a category (`AVAudioSession.CategoryOptions`).
    public struct CategoryOptions: OptionSet, Hashable, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }

        /// Play alongside other apps' audio instead of interrupting it.
        public static let mixWithOthers = CategoryOptions(rawValue: 1 << 0)
    }

    /// Options of ``AudioSession/setActive(_:options:)`` (`AVAudioSession.SetActiveOptions`).
    public struct SetActiveOptions: OptionSet, Hashable, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }

        /// On deactivation, tell the apps this session interrupted that they may resume their audio.
        public static let notifyOthersOnDeactivation = SetActiveOptions(rawValue: 1 << 0)
    }

    /// Whether an interruption begins or ends (`AVAudioSession.InterruptionType`).
    public enum InterruptionType: UInt, Hashable, Sendable {
        /// The interruption ended.
        case ended = 0
        /// The interruption began: the session is inactive and every player paused.
        case began = 1
    }

    /// Options of an ended interruption (`AVAudioSession.InterruptionOptions`).
    public struct InterruptionOptions: OptionSet, Hashable, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }

        /// The app may resume playback: activate the session and play.
        public static let shouldResume = InterruptionOptions(rawValue: 1 << 0)
    }

    /// One interruption event.
    public struct Interruption: Hashable, Sendable {
        /// Began or ended.
        public var type: InterruptionType
        /// On the end: whether the app may resume.
        public var options: InterruptionOptions
        /// Who interrupted, for people (an incoming call, another app's audio).
        public var reason: String
    }
}

/// Why an audio session call failed: a stable code, what was wrong, and the fix.
public struct AudioSessionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable code.
    public enum Code: String, Hashable, Sendable {
        /// The foreground app's audio, or an interruption, holds the audio (`cannotInterruptOthers`).
        case cannotInterruptOthers
        /// A player still plays (`isBusy`).
        case isBusy
        /// The daemon refused the request as malformed.
        case invalidArgument
        /// The process is not a running installed app.
        case notAnApp
        /// The daemon could not be reached.
        case daemonUnavailable
    }

    /// The code.
    public var code: Code
    /// What was wrong.
    public var message: String
    /// What to do about it.
    public var fix: String

    /// Creates an error.
    public init(_ code: Code, _ message: String, fix: String) {
        self.code = code
        self.message = message
        self.fix = fix
    }

    public var description: String { "\(message); \(fix)" }
}

extension AudioSessionError {
    /// The SDK's error for what the daemon (or the connection to it) said.
    init(_ error: any Error) {
        let refusal = DaemonRefusal(error)
        let code: Code =
            switch refusal.name {
            case nil: .daemonUnavailable
            case ModesInterface.name + ".CannotInterruptOthers": .cannotInterruptOthers
            case ModesInterface.name + ".NotAnApp", ModesInterface.name + ".AppNotRunning": .notAnApp
            default: .invalidArgument
            }
        self.init(code, refusal.message, fix: refusal.fix)
    }
}
