import Foundation
import OffstageProtocol

/// Why registering for remote notifications (or unregistering) failed: a stable ``code`` to branch on, what was
/// wrong, and the fix.
///
/// ```swift
/// do {
///     let registration = try await Application.shared.registerForRemoteNotifications()
///     await server.upload(token: registration.token)
/// } catch RemoteNotificationError.unavailable {
///     // no gateway on this device (or no daemon): try again at the next launch
/// } catch {
///     print("could not register: \(error)")
/// }
/// ```
public struct RemoteNotificationError: Error, Hashable, Sendable, CustomStringConvertible, LocalizedError {
    /// A stable code.
    public enum Code: String, Hashable, Sendable, CaseIterable {
        /// The process is not a running installed app: it was not launched by the daemon (or the daemon does not
        /// know this executable).
        case notRunning
        /// The daemon could not be reached, runs without a push gateway, or answered something this SDK cannot read.
        case unavailable
        /// The daemon refused an argument (a result it does not know, a run that is not the app's).
        case invalidArgument
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

    /// Not a running installed app (`catch RemoteNotificationError.notRunning`).
    public static var notRunning: Code { .notRunning }
    /// No daemon or no gateway (`catch RemoteNotificationError.unavailable`).
    public static var unavailable: Code { .unavailable }
    /// An argument the daemon refused (`catch RemoteNotificationError.invalidArgument`).
    public static var invalidArgument: Code { .invalidArgument }

    /// The code, the message and the fix: `unavailable: …; fix: …`.
    public var description: String { "\(code.rawValue): \(message); fix: \(fix)" }

    /// Same as ``description``, so that `localizedDescription` says what happened.
    public var errorDescription: String? { description }

    /// The SDK's error for what the daemon (or the connection to it) said.
    init(_ error: any Error) {
        if let error = error as? VarlinkError,
            [VarlinkError.Name.interfaceNotFound, VarlinkError.Name.methodNotFound].contains(error.name)
        {
            self.init(
                .unavailable, "the daemon does not serve \(PushInterface.name) (an offstaged without push)",
                fix: "update offstaged to a version with the push gateway")
            return
        }
        let refusal = DaemonRefusal(error)
        let code = refusal.code(
            in: PushInterface.name,
            ["NotAnApp": Code.notRunning, "AppNotRunning": .notRunning, "Unavailable": .unavailable,
             "InvalidArgument": .invalidArgument],
            otherwise: refusal.name == VarlinkError.Name.invalidParameter ? .invalidArgument : .unavailable)
        self.init(code, refusal.message, fix: refusal.fix)
    }
}

extension RemoteNotificationError.Code {
    /// Matches a ``RemoteNotificationError`` with this code, so that `catch RemoteNotificationError.unavailable`
    /// works.
    public static func ~= (code: Self, error: any Swift.Error) -> Bool {
        (error as? RemoteNotificationError)?.code == code
    }
}
