import OffstageProtocol

/// Why a ``LocationManager`` gives no locations: a stable code, what was wrong and the fix.
public struct LocationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable code.
    public enum Code: String, Hashable, Sendable {
        /// The app does not declare the `location` background mode that the request needs (SPEC MODE-6).
        case notPermitted
        /// A setting is not acceptable (a distance filter that is not a number).
        case invalidArgument
        /// The location source failed or has no position; updates go on when it recovers.
        case sourceFailed
        /// The daemon could not be reached, or the process is not a running installed app.
        case unavailable
    }

    /// The code.
    public var code: Code
    /// What was wrong.
    public var message: String
    /// What to do about it.
    public var fix: String

    public var description: String { "\(message); \(fix)" }

    init(_ code: Code, _ message: String, fix: String) {
        self.code = code
        self.message = message
        self.fix = fix
    }

    /// The SDK's error for what the daemon (or the connection to it) said.
    init(_ error: any Error) {
        let refusal = DaemonRefusal(error)
        let code = refusal.code(notPermitted: Code.notPermitted, invalidArgument: .invalidArgument, otherwise: .unavailable)
        self.init(code, refusal.message, fix: refusal.fix)
    }
}
