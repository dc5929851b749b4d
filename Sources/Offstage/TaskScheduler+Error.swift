import Foundation
import OffstageProtocol

extension TaskScheduler {
    /// Why ``TaskScheduler/submit(_:)`` refused a request, as `BGTaskScheduler.Error`: a ``code`` to branch on, and
    /// the daemon's ``message`` and ``fix`` to show a developer.
    ///
    /// ```swift
    /// do {
    ///     try TaskScheduler.shared.submit(request)
    /// } catch TaskScheduler.Error.notPermitted {
    ///     // the manifest does not allow it
    /// } catch {
    ///     print("could not schedule: \(error)")
    /// }
    /// ```
    public struct Error: Swift.Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
        /// What kind of refusal, as `BGTaskScheduler.Error.Code`.
        public enum Code: Int, Sendable, Hashable, CaseIterable {
            /// Background work cannot be scheduled now: background app refresh is off for the app or the device,
            /// low power mode is on, or the daemon cannot be reached.
            case unavailable = 1
            /// Too many pending requests of that kind (at most 10 processing requests per app).
            case tooManyPendingTaskRequests = 2
            /// The manifest does not declare the background mode the request needs (`fetch` for refresh,
            /// `processing` for processing) or does not list the identifier in `BGTaskSchedulerPermittedIdentifiers`.
            case notPermitted = 3
            /// An Offstage addition: a field of the request is not acceptable (an empty identifier, an earliest
            /// begin date too far ahead).
            case invalidArgument = 100
        }

        /// What kind of refusal.
        public var code: Code
        /// What was wrong, as the daemon said it.
        public var message: String
        /// What to do about it.
        public var fix: String

        /// An error with a code, a message and a fix.
        public init(_ code: Code, message: String, fix: String) {
            self.code = code
            self.message = message
            self.fix = fix
        }

        /// Background work cannot be scheduled now (`catch TaskScheduler.Error.unavailable`).
        public static var unavailable: Code { .unavailable }
        /// Too many pending requests of that kind (`catch TaskScheduler.Error.tooManyPendingTaskRequests`).
        public static var tooManyPendingTaskRequests: Code { .tooManyPendingTaskRequests }
        /// The manifest does not allow the request (`catch TaskScheduler.Error.notPermitted`).
        public static var notPermitted: Code { .notPermitted }
        /// A field of the request is not acceptable (`catch TaskScheduler.Error.invalidArgument`).
        public static var invalidArgument: Code { .invalidArgument }

        /// The code, the message and the fix, e.g. `notPermitted: 'com.example.x' is not in the
        /// BGTaskSchedulerPermittedIdentifiers of 'com.example.app'; fix: list it in …`.
        public var description: String { "\(code): \(message); fix: \(fix)" }

        /// Same as ``description``, so that `localizedDescription` says what happened.
        public var errorDescription: String? { description }
    }
}

extension TaskScheduler.Error.Code {
    /// Matches an error thrown by the scheduler with this code, so that `catch TaskScheduler.Error.notPermitted`
    /// works as it does with `BGTaskScheduler.Error`.
    public static func ~= (code: Self, error: any Swift.Error) -> Bool {
        (error as? TaskScheduler.Error)?.code == code
    }
}

extension TaskScheduler.Error {
    /// The error a daemon reply names, with its message and fix.
    init(_ error: VarlinkError) {
        let code: Code
        let defaultFix: String
        switch error.name {
        case AppInterface.name + ".Unavailable":
            code = .unavailable
            defaultFix = "try again later"
        case AppInterface.name + ".TooManyPendingRequests":
            code = .tooManyPendingTaskRequests
            defaultFix = "cancel a pending request first"
        case AppInterface.name + ".NotPermitted":
            code = .notPermitted
            defaultFix = "declare the background mode and list the identifier in the app's Info.plist"
        case AppInterface.name + ".InvalidArgument", VarlinkError.Name.invalidParameter:
            code = .invalidArgument
            defaultFix = "correct the request"
        default:
            // AppNotRunning, NotAnApp, or a daemon that predates scheduling: nothing can be scheduled now.
            code = .unavailable
            defaultFix = "run the app as an installed app under a running offstaged"
        }
        let message = error.stringParameter("message") ?? error.stringParameter("description") ?? error.description
        self.init(code, message: message, fix: error.stringParameter("fix") ?? defaultFix)
    }

    /// The error for a daemon that could not be reached.
    init(unreachable error: any Swift.Error) {
        self.init(
            .unavailable, message: "the Offstage daemon could not be reached (\(error))",
            fix: "submit again once offstaged is running")
    }
}
