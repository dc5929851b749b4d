import Glibc

/// Why talking to the desktop's notification service failed: what was wrong, and the fix.
public enum DesktopNotificationsError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Nothing could be reached at the bus address (`reason` says why for each address tried).
    case noSessionBus(address: String, reason: String)
    /// The bus refused `AUTH EXTERNAL` or answered the handshake with something else (`reason`: what it said).
    case authenticationRefused(reason: String)
    /// The bus sent bytes that are not a valid D-Bus message; the connection is closed after it.
    case malformedMessage(String)
    /// A value cannot be sent as it is (a string with a NUL byte, say).
    case unsupportedValue(String)
    /// The connection has ended (`reason`: why) or was closed.
    case disconnected(String)
    /// No reply to `method` came within `timeout`.
    case timedOut(method: String, timeout: Duration)
    /// The bus or the service answered with the D-Bus error `name`.
    case errorReply(name: String, message: String)
    /// The reply to `method` had the body signature `signature`, not the one the specification gives.
    case unexpectedReply(method: String, signature: String)
    /// A blocking call was made on the thread that delivers replies, where it could only wait for itself.
    case calledOnEventsThread(method: String)
    /// A system call failed.
    case systemCallFailed(call: String, errno: Int32)

    public var description: String {
        switch self {
        case .noSessionBus(let address, let reason):
            let shown = address.isEmpty ? "(no address)" : address
            return "no session bus at \(shown) (\(reason)): set DBUS_SESSION_BUS_ADDRESS to the desktop session's bus, "
                + "or start a session bus and a notification daemon"
        case .authenticationRefused(let reason):
            return "authentication refused by the bus (\(reason)): the daemon must run as the user who owns the "
                + "desktop session, since the bus accepts only its uid"
        case .malformedMessage(let what):
            return "malformed message from the bus: \(what); the connection was closed, connect again (and report "
                + "the notification daemon or bus if it recurs)"
        case .unsupportedValue(let what):
            return "cannot send \(what) over D-Bus: change the notification's text or hints"
        case .disconnected(let reason):
            return "the bus connection ended (\(reason)): connect again once the session bus is back"
        case .timedOut(let method, let timeout):
            return "no reply to \(method) within \(timeout): the notification daemon is busy or hung; restart it"
        case .errorReply(let name, let message):
            let fix =
                name == "org.freedesktop.DBus.Error.ServiceUnknown"
                ? "no notification daemon runs in this session; start one (dunst, mako, a desktop's own)"
                : "see the notification daemon's log"
            return "\(name): \(message) (\(fix))"
        case .unexpectedReply(let method, let signature):
            return "the reply to \(method) has the signature \"\(signature)\", not the one the specification gives: "
                + "the notification daemon does not follow the Desktop Notifications specification"
        case .calledOnEventsThread(let method):
            return "\(method) cannot wait for a reply on the thread that delivers the events: call it from another "
                + "thread"
        case .systemCallFailed(let call, let code):
            return "\(call) failed: \(String(cString: strerror(code))); the system is out of descriptors or memory, "
                + "free some and try again"
        }
    }
}
