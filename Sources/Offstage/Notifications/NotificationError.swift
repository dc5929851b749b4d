import Foundation
import OffstageProtocol

/// Why a notification call failed: a stable ``code`` to branch on, what was wrong, and the fix.
///
/// ```swift
/// do {
///     try await UserNotificationCenter.current().add(request)
/// } catch NotificationError.tooManyPending {
///     // remove some pending requests first
/// } catch {
///     print("could not schedule: \(error)")
/// }
/// ```
public struct NotificationError: Error, Hashable, Sendable, CustomStringConvertible, LocalizedError {
    /// A stable code.
    public enum Code: String, Hashable, Sendable, CaseIterable {
        /// A request or a value is not acceptable: a trigger (a repeating interval under 60 s, a date component out
        /// of range, an unknown time zone), an identifier, content that is empty or too large, user info JSON
        /// cannot hold, too many categories or actions.
        case invalidArgument
        /// The app has as many pending notifications as it may (128, a setting), all due before this one: nothing
        /// changed.
        case tooManyPending
        /// No such notification of the app.
        case noSuchNotification
        /// The process is not a running installed app: it was not launched by the daemon (or the daemon does not
        /// know this executable).
        case notRunning
        /// The daemon could not be reached, or does not serve notifications.
        case unavailable
    }

    /// The code.
    public var code: Code
    /// What was wrong.
    public var message: String
    /// What to do about it.
    public var fix: String

    /// An error with a code, a message and a fix.
    public init(_ code: Code, _ message: String, fix: String) {
        self.code = code
        self.message = message
        self.fix = fix
    }

    /// A request or value is not acceptable (`catch NotificationError.invalidArgument`).
    public static var invalidArgument: Code { .invalidArgument }
    /// Too many pending notifications (`catch NotificationError.tooManyPending`).
    public static var tooManyPending: Code { .tooManyPending }
    /// No such notification (`catch NotificationError.noSuchNotification`).
    public static var noSuchNotification: Code { .noSuchNotification }
    /// Not a running installed app (`catch NotificationError.notRunning`).
    public static var notRunning: Code { .notRunning }
    /// No daemon (`catch NotificationError.unavailable`).
    public static var unavailable: Code { .unavailable }

    /// The code, the message and the fix: `invalidArgument: …; fix: …`.
    public var description: String { "\(code.rawValue): \(message); fix: \(fix)" }

    /// Same as ``description``, so that `localizedDescription` says what happened.
    public var errorDescription: String? { description }

    /// The SDK's error for what the daemon (or the connection to it) said.
    init(_ error: any Error) {
        let refusal = DaemonRefusal(error)
        let code = refusal.code(
            in: NotificationsInterface.name,
            [
                "InvalidArgument": Code.invalidArgument, "TooManyPendingRequests": .tooManyPending,
                "NoSuchNotification": .noSuchNotification, "AppNotRunning": .notRunning, "NotAnApp": .notRunning,
            ], otherwise: refusal.name == VarlinkError.Name.invalidParameter ? .invalidArgument : .unavailable)
        self.init(code, refusal.message, fix: refusal.fix)
    }
}

extension NotificationError.Code {
    /// Matches an error thrown by the notification center with this code, so that
    /// `catch NotificationError.tooManyPending` works.
    public static func ~= (code: Self, error: any Swift.Error) -> Bool {
        (error as? NotificationError)?.code == code
    }
}
