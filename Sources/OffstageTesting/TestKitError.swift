import OffstageCore

/// What the test kit refuses, or what went wrong with the app under test.
public enum TestKitError: Error, Equatable, CustomStringConvertible {
    /// Virtual time moves forward only; the duration asked for was negative. Nothing happened.
    case timeGoesForwardOnly(Duration)
    /// The app did not answer a callback (its delegate method or handler did not return) within the device's
    /// `handlerTimeout` of real time.
    case handlerDidNotReturn(callback: String, after: Duration)
    /// The app never fell quiet: for `rounds` rounds in a row it made calls or got callbacks (a task of its calls the
    /// system in a loop without waiting for anything).
    case neverIdle(rounds: Int)
    /// The system refused what the test asked, as `offstaged` would have: its message and fix.
    case refused(message: String, fix: String)
    /// An argument the kit cannot use; the text names it and says why.
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .timeGoesForwardOnly(let duration):
            "virtual time moves forward only: cannot advance by \(duration); nothing happened. Advance by a duration "
                + "of zero or more"
        case .handlerDidNotReturn(let callback, let timeout):
            "the app did not answer \(callback) within \(timeout): a delegate method or handler that never returns "
                + "(or waits for something only the test can do) holds the app; return from it, or raise the device's "
                + "handlerTimeout if it is only slow"
        case .neverIdle(let rounds):
            "the app never fell quiet: for \(rounds) rounds it kept calling the system or getting callbacks; a task of "
                + "the app's that calls the system in a loop should wait between calls (a timer, or a scheduled task)"
        case .refused(let message, let fix): "refused: \(message); fix: \(fix)"
        case .invalidArgument(let text): "invalid argument: \(text)"
        }
    }
}

/// Runs `body`, turning what the core refused into ``TestKitError/refused(message:fix:)``.
func refusing<Result>(_ body: () throws -> Result) throws(TestKitError) -> Result {
    do {
        return try body()
    } catch let error as CoreError {
        throw .refused(message: error.message, fix: error.fix)
    } catch let error as TestKitError {
        throw error
    } catch {
        throw .invalidArgument("\(error)")
    }
}
