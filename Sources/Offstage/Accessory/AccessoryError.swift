import Glibc
import OffstageProtocol

/// Why an accessory call failed: a stable code, what was wrong, and the fix.
public struct AccessoryError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable code.
    public enum Code: String, Hashable, Sendable {
        /// The app does not declare the accessory's background mode (SPEC MODE-6).
        case notPermitted
        /// A name, path or mode is not acceptable, the accessory is not registered, or the path is not a device,
        /// FIFO or socket.
        case invalidArgument
        /// Nothing is at the accessory's path: it is not connected.
        case notConnected
        /// The app may not open the accessory's path (its permissions, or the device is busy).
        case accessDenied
        /// The accessory hung up: the session is over; close it and open a new one when it connects again.
        case disconnected
        /// The session was closed by the app.
        case closed
        /// Reading, writing or setting up the channel failed.
        case ioFailed
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

    /// The error for a failed system call `call` on the accessory at `path`, from `errno`.
    static func system(_ call: String, path: String, errno code: Int32) -> AccessoryError {
        let reason = String(cString: strerror(code))
        switch code {
        case ENOENT, ENODEV, ENXIO, ECONNREFUSED:
            return AccessoryError(
                .notConnected, "the accessory at \(path) is not connected (\(call): \(reason))",
                fix: "connect it, or wait for the connected event (AccessoryManagerDelegate) before opening a session")
        case EACCES, EPERM, EBUSY:
            return AccessoryError(
                .accessDenied, "cannot open the accessory at \(path) (\(call): \(reason))",
                fix: "give the app's user access to the device (for a serial port, the 'dialout' group), or close "
                    + "the other program that holds it")
        case EIO, EPIPE, ECONNRESET, ENOTCONN:
            return disconnected(path)
        default:
            return AccessoryError(
                .ioFailed, "\(call) on the accessory at \(path) failed: \(reason)",
                fix: "close the session and open a new one; check that the device is still attached")
        }
    }

    /// The accessory at `path` hung up.
    static func disconnected(_ path: String) -> AccessoryError {
        AccessoryError(
            .disconnected, "the accessory at \(path) hung up",
            fix: "close the session; open a new one when the accessory connects again")
    }
}
