import Foundation
import Synchronization

/// Dates as the daemon reads them: seconds since 1970 on the daemon's clock.
///
/// Against `offstaged` that clock is the system's, which the app's `Date()` reads too, and a date goes as it is.
/// Against the test kit's daemon, which runs on virtual time, a date the app computed from `Date()` is taken as the
/// same distance from the virtual now (rounded to the millisecond, so that a test gets the same instants run after
/// run), and a date from the daemon comes back as the same distance from `Date()`: relative dates
/// (`Date(timeIntervalSinceNow: 900)`) mean what the app meant.
enum WireTime {
    /// The daemon's now in seconds since 1970, when it is not the system clock's.
    private static let virtualNow = Mutex<(@Sendable () -> Double)?>(nil)

    /// Runs on `now` from now on; nil: on the system clock again.
    static func use(_ now: (@Sendable () -> Double)?) { virtualNow.withLock { $0 = now } }

    /// `date` for the daemon.
    static func seconds(_ date: Date) -> Double {
        guard let now = virtualNow.withLock({ $0 }) else { return date.timeIntervalSince1970 }
        return now() + (date.timeIntervalSinceNow * 1000).rounded() / 1000
    }

    /// The daemon's `seconds` as a date of the app's.
    static func date(_ seconds: Double) -> Date {
        guard let now = virtualNow.withLock({ $0 }) else { return Date(timeIntervalSince1970: seconds) }
        return Date(timeIntervalSinceNow: seconds - now())
    }
}
