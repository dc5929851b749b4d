/// Why the core refused a request: a stable code, the thing that was wrong, and the fix.
public struct CoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable code; also the suffix of the Varlink error name.
    public enum Code: String, Hashable, Sendable, Codable {
        case appNotInstalled = "AppNotInstalled"
        case appNotRunning = "AppNotRunning"
        case deviceLocked = "DeviceLocked"
        case noInterruption = "NoInterruption"
        case alreadyRunning = "AlreadyRunning"
        case notAttached = "NotAttached"
        case invalidArgument = "InvalidArgument"
        /// Background work cannot be scheduled now: refresh is off, low power mode (SPEC SCH-2).
        case unavailable = "Unavailable"
        /// Too many pending requests of that kind (SPEC SCH-2).
        case tooManyPendingRequests = "TooManyPendingRequests"
        /// The manifest does not declare the mode or the identifier (SPEC SCH-2, MAN-4).
        case notPermitted = "NotPermitted"
        /// No such pending or running task.
        case noSuchTask = "NoSuchTask"
        /// The audio is held by the foreground app or an interruption (SPEC MODE-1), as
        /// `AVAudioSession.ErrorCode.cannotInterruptOthers`.
        case cannotInterruptOthers = "CannotInterruptOthers"
        /// No such pending or delivered notification (SPEC NT-1).
        case noSuchNotification = "NoSuchNotification"
    }

    /// The code.
    public var code: Code
    /// What was wrong, naming the thing.
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

    /// A number the caller chose is NaN, infinite or out of its field's range (``NumberOutOfRange``).
    public init(_ error: NumberOutOfRange) {
        self.init(.invalidArgument, "\(error.field) is \(error.value), out of range", fix: error.fix)
    }

    /// The result of `body`, a checked conversion, with its ``NumberOutOfRange`` as an `invalidArgument` error.
    @discardableResult
    public static func checking<T>(_ body: () throws(NumberOutOfRange) -> T) throws(CoreError) -> T {
        do { return try body() } catch { throw CoreError(error) }
    }

    /// No app with this id is installed.
    public static func notInstalled(_ id: AppID) -> CoreError {
        CoreError(.appNotInstalled, "no app '\(id)' is installed", fix: "install it with `offstage install BUNDLE_DIR`")
    }
}
