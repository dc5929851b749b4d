import Foundation
import OffstageProtocol

/// Why a background transfer failed, or why the daemon refused a call about one: a stable ``code`` to branch on, the
/// HTTP status when the server's answer was the reason, what was wrong, and the fix.
///
/// The platform's `URLError` (and the `NSURLErrorBackgroundTaskCancelledReasonKey` of its user info) map to it so:
/// `.cancelled` is `URLError.cancelled`, `.forceQuit` is a cancellation with reason `userForceQuitApplication`,
/// `.timedOut` is `URLError.timedOut` (the resource timeout), `.badRequest` is `URLError.badURL` or
/// `unsupportedURL`, `.file` is `cannotOpenFile`/`cannotWriteToFile`. A server's 4xx is not an error on the
/// platform (the task completes and the response says 404); Offstage ends such a task with `.httpStatus` and
/// ``httpStatus`` instead, since a background download of an error page is never what the app wanted.
///
/// ```swift
/// func urlSession(_ session: BackgroundSession, task: BackgroundSessionTask, didCompleteWithError error: BackgroundTransferError?) {
///     switch error?.code {
///     case nil: print("done")
///     case .httpStatus: print("the server said \(error!.httpStatus!)")
///     case .cancelled, .forceQuit: break
///     default: print("failed: \(error!)")
///     }
/// }
/// ```
public struct BackgroundTransferError: Error, Hashable, Sendable, CustomStringConvertible, LocalizedError {
    /// A stable code.
    public enum Code: String, Hashable, Sendable, CaseIterable {
        // Why a task ended without success (the daemon's failure codes).

        /// The server answered a status that ends the task (a 4xx other than 408 and 429): ``httpStatus`` holds it.
        case httpStatus = "http-status"
        /// The request cannot succeed: a bad URL or scheme, too many redirects.
        case badRequest = "bad-request"
        /// The app (``BackgroundSessionTask/cancel()``) or the user (`offstage transfers cancel`) cancelled it.
        case cancelled
        /// The user force-quit the app, which cancels its transfers (SPEC TR-2).
        case forceQuit = "force-quit"
        /// No byte moved for the resource timeout (7 days by default).
        case timedOut = "timed-out"
        /// The upload's file could not be read, or the download's file could not be written or handed over.
        case file

        // Why a call was refused.

        /// The process is not a running installed app: it was not launched by the daemon.
        case notRunning
        /// The daemon could not be reached, does not serve transfers, or answered something this SDK cannot read.
        case unavailable
        /// The daemon refused an argument: a URL it cannot fetch, an upload file outside the app's data folder, a
        /// change that does not apply to the task's state.
        case invalidArgument
        /// No such session or task of this app.
        case noSuchTask
        /// The app has as many unfinished tasks as it may (`transfers.maximumTasksPerApp`).
        case tooManyTasks
        /// A failure code this SDK does not know (a newer daemon): see ``message``.
        case unknown
    }

    /// The code.
    public var code: Code
    /// The HTTP status, when the server's answer ended the task (``Code/httpStatus``).
    public var httpStatus: Int?
    /// What was wrong.
    public var message: String
    /// What to do about it.
    public var fix: String

    /// An error with a code, a message and a fix.
    public init(_ code: Code, httpStatus: Int? = nil, _ message: String, fix: String) {
        self.code = code
        self.httpStatus = httpStatus
        self.message = message
        self.fix = fix
    }

    /// The code, the status, the message and the fix: `http-status (404): …; fix: …`.
    public var description: String {
        "\(code.rawValue)\(httpStatus.map { " (\($0))" } ?? ""): \(message); fix: \(fix)"
    }

    /// Same as ``description``, so that `localizedDescription` says what happened.
    public var errorDescription: String? { description }

    /// The error of a finished task, from the daemon's failure.
    init(failure: TransfersInterface.FailureMessage) {
        let code = Code(rawValue: failure.code).flatMap { Self.failureCodes.contains($0) ? $0 : nil } ?? .unknown
        let fix: String =
            switch code {
            case .httpStatus: "check the URL and what the server answers for it"
            case .badRequest: "use an http or https URL the server serves"
            case .cancelled, .forceQuit: "create the task again if it is still wanted"
            case .timedOut: "create the task again when the server can be reached"
            case .file: "check the file and the free space, then create the task again"
            default: "see `offstage transfers` and `offstage log` for the daemon's side"
            }
        self.init(
            code, httpStatus: failure.status,
            code == .unknown ? "\(failure.code): \(failure.message)" : failure.message, fix: fix)
    }

    /// The codes of a finished task's failure.
    static let failureCodes: Set<Code> = [.httpStatus, .badRequest, .cancelled, .forceQuit, .timedOut, .file]

    /// The SDK's error for what the daemon (or the connection to it) said about a call.
    init(refusal error: any Error) {
        if let error = error as? VarlinkError,
            [VarlinkError.Name.interfaceNotFound, VarlinkError.Name.methodNotFound].contains(error.name)
        {
            self.init(
                .unavailable, "the daemon does not serve \(TransfersInterface.name) (an offstaged without transfers)",
                fix: "update offstaged to a version with background transfers")
            return
        }
        if error is DecodingError {
            self.init(
                .unavailable, "the daemon answered something this SDK cannot read: \(error)",
                fix: "use an SDK and an offstaged of the same version")
            return
        }
        let refusal = DaemonRefusal(error)
        let code = refusal.code(
            in: TransfersInterface.name,
            ["NotAnApp": Code.notRunning, "AppNotRunning": .notRunning, "NoSuchTask": .noSuchTask,
             "TooManyPendingRequests": .tooManyTasks, "InvalidArgument": .invalidArgument],
            otherwise: refusal.name == VarlinkError.Name.invalidParameter ? .invalidArgument : .unavailable)
        self.init(code, refusal.message, fix: refusal.fix)
    }
}

extension BackgroundTransferError.Code {
    /// Matches a ``BackgroundTransferError`` with this code, so that `catch BackgroundTransferError.Code.cancelled`
    /// works.
    public static func ~= (code: Self, error: any Swift.Error) -> Bool {
        (error as? BackgroundTransferError)?.code == code
    }
}
