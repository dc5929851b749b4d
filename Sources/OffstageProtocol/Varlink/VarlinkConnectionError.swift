#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A failure on the client's side of a Varlink connection: connecting, sending, receiving or understanding a reply.
///
/// An error the service replied is a `VarlinkError`, not this.
public enum VarlinkConnectionError: Error, Sendable, Hashable {
    /// `connect` to the socket at `path` failed with `errno`.
    case connectFailed(path: String, errno: Int32)
    /// `path` does not fit in a Unix socket address (`limit` bytes).
    case socketPathTooLong(path: String, limit: Int)
    /// No complete reply to `method` came within `timeout`. The connection is closed: a late reply would otherwise be
    /// taken for the answer to the next call.
    case timedOut(method: String, timeout: Duration)
    /// The service closed the connection before replying to `method`.
    case disconnected(method: String)
    /// A reply to `method` was longer than `limit` bytes. The connection is closed.
    case replyTooLarge(method: String, limit: Int)
    /// The reply to `method` was not a Varlink reply, or its parameters did not decode as the expected type.
    case invalidReply(method: String, reason: String)
    /// The parameters of `method` could not be encoded to JSON.
    case encodingFailed(method: String, reason: String)
    /// `method` was called while a `more` call of `streaming` still had replies to come on this connection.
    case busy(method: String, streaming: String)
    /// The connection is closed (`reason` says why) and can no longer be used.
    case closed(reason: String)
    /// The system call `call` failed with `errno`.
    case systemCallFailed(call: String, errno: Int32)
}

extension VarlinkConnectionError: CustomStringConvertible {
    /// What went wrong and what to do about it.
    public var description: String {
        switch self {
        case .connectFailed(let path, let code):
            switch code {
            case ENOENT:
                return "Cannot connect to the Offstage daemon: there is no socket at \(path). Is the daemon running? "
                    + "Start it with `offstaged`, or set --socket/$\(OffstageSocketPath.environmentVariable) "
                    + "to the socket it listens on."
            case ECONNREFUSED:
                return "Cannot connect to the Offstage daemon: nothing listens on \(path) (a socket file left by a "
                    + "daemon that has exited). Start it with `offstaged`, or set "
                    + "--socket/$\(OffstageSocketPath.environmentVariable) to the socket it listens on."
            case EACCES, EPERM:
                return "Cannot connect to the Offstage daemon at \(path): permission denied. The socket belongs to "
                    + "another user; run as that user or start your own daemon with `offstaged`."
            case ENOTDIR:
                return "Cannot connect to the Offstage daemon at \(path): a part of the path is not a directory. "
                    + "Check --socket/$\(OffstageSocketPath.environmentVariable)."
            default:
                return "Cannot connect to the Offstage daemon at \(path): \(varlinkErrnoText(code)). "
                    + "Is the daemon running? Start it with `offstaged`, or set "
                    + "--socket/$\(OffstageSocketPath.environmentVariable)."
            }
        case .socketPathTooLong(let path, let limit):
            return "The socket path \(path) is \(path.utf8.count) bytes long; Unix sockets allow at most \(limit). "
                + "Choose a shorter --socket/$\(OffstageSocketPath.environmentVariable)."
        case .timedOut(let method, let timeout):
            return "\(method) did not reply within \(timeout); the connection was closed. The daemon may be stuck "
                + "or overloaded; retry on a new connection or raise the timeout."
        case .disconnected(let method):
            return "The Offstage daemon closed the connection before replying to \(method). It may have exited or "
                + "rejected the message; its log says which."
        case .replyTooLarge(let method, let limit):
            return "A reply to \(method) was longer than \(limit) bytes; the connection was closed. Raise "
                + "maximumMessageSize on the VarlinkConnection if such replies are expected."
        case .invalidReply(let method, let reason):
            return "The reply to \(method) could not be understood: \(reason). The daemon and this client may be "
                + "different versions."
        case .encodingFailed(let method, let reason):
            return "The parameters of \(method) could not be encoded as JSON: \(reason)."
        case .busy(let method, let streaming):
            return "Cannot call \(method): this connection is still receiving the replies of \(streaming) "
                + "(called with more). Finish or cancel that stream, or use a second VarlinkConnection."
        case .closed(let reason):
            return "The Varlink connection is closed (\(reason)); open a new VarlinkConnection."
        case .systemCallFailed(let call, let code):
            return "\(call) failed on the Varlink connection: \(varlinkErrnoText(code))."
        }
    }
}

func varlinkErrnoText(_ code: Int32) -> String {
    "\(String(cString: strerror(code))) (errno \(code))"
}
