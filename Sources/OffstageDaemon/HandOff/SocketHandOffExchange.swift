import COffstageSystem
import Foundation
import Glibc
import OffstageProtocol

/// The I/O of one hand-off connection of ``SocketHandOffServer``: reading the call with its descriptor, the caller's
/// credentials, and the reply. The connection is non-blocking; every wait is a `poll` that also watches the server's
/// stop eventfd, so that neither a silent client nor a stop waits longer than it must.
struct SocketHandOffExchange {
    /// What reading a call came to.
    enum Outcome {
        /// The call's JSON text, without its NUL.
        case message(Data)
        /// The call cannot be served; this error is the reply.
        case failed(VarlinkError)
        /// Nothing to answer: the client closed without sending anything (a liveness probe), the connection failed,
        /// or the server is stopping.
        case gone
    }

    /// How a wait on the connection ended.
    private enum Wait {
        /// The connection is ready.
        case ready
        /// The deadline passed.
        case timedOut
        /// The server was asked to stop.
        case stopping
    }

    /// The accepted connection, non-blocking; the server closes it.
    let connection: Int32
    /// The server's stop eventfd, readable once `stop()` was called.
    let wake: Int32
    /// The limits and timeouts.
    let settings: SocketHandOffSettings

    /// Reads one call, NUL-terminated, into `buffer` (`maximumMessageSize + 1` bytes), with the first descriptor that
    /// came with it; any further descriptors are closed as they arrive. Bytes after the NUL are ignored: one call per
    /// connection. The descriptor is returned whatever the outcome, for the caller to hand on or close.
    func readCall(into buffer: UnsafeMutableRawBufferPointer) -> (outcome: Outcome, fd: Int32?) {
        let limit = settings.maximumMessageSize
        let base = buffer.baseAddress!
        let end = ContinuousClock.now.advanced(by: settings.readTimeout)
        var count = 0
        var fd: Int32?
        while true {
            var got: Int32 = -1
            let received = offstage_recv_with_fd(connection, base + count, buffer.count - count, &got)
            if got >= 0 {
                if fd == nil { fd = got } else { close(got) }
            }
            if received > 0 {
                let start = count
                count += received
                if let terminator = memchr(base + start, 0, received) {
                    let length = UnsafeRawPointer(terminator) - UnsafeRawPointer(base)
                    return (.message(Data(bytes: base, count: length)), fd)
                }
                if count > limit { return (.failed(.messageTooLarge(limit: limit)), fd) }
                continue
            }
            if received == 0 {
                if count == 0 { return (.gone, fd) }
                let reason = "the connection ended before the NUL byte that ends a call"
                return (.failed(.malformedMessage(reason: reason)), fd)
            }
            switch errno {
            case EAGAIN, EWOULDBLOCK:
                switch wait(for: Int16(POLLIN), until: end) {
                case .ready: continue
                case .stopping: return (.gone, fd)
                case .timedOut:
                    let reason = "no complete call arrived within \(settings.readTimeout) of connecting; send the "
                        + "call and its NUL terminator at once"
                    return (.failed(.malformedMessage(reason: reason)), fd)
                }
            case EMSGSIZE:
                let reason = "more descriptors came with the call than the daemon accepts; hand off exactly one socket"
                return (.failed(.malformedMessage(reason: reason)), fd)
            default:
                return (.gone, fd)
            }
        }
    }

    /// Who connected, as the kernel recorded it at `connect` time; nil when `SO_PEERCRED` fails.
    func peerCredentials() -> PeerCredentials? {
        precondition(MemoryLayout<UcredLayout>.size == 12, "struct ucred is three 32-bit fields")
        var credentials = UcredLayout()
        var length = socklen_t(MemoryLayout<UcredLayout>.size)
        guard getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { return nil }
        return PeerCredentials(credentials)
    }

    /// Writes `message` and its NUL, giving up after `writeTimeout` or when the client has gone: it is closed next.
    /// An empty `message` sends nothing (nothing to answer, or a oneway call).
    func reply(_ message: Data) {
        guard !message.isEmpty else { return }
        var bytes = [UInt8](message)
        bytes.append(0)
        let end = ContinuousClock.now.advanced(by: settings.writeTimeout)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                send(connection, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            }
            if sent >= 0 {
                offset += sent
            } else if errno == EINTR {
                continue
            } else if errno != EAGAIN && errno != EWOULDBLOCK || wait(for: Int16(POLLOUT), until: end) != .ready {
                return
            }
        }
    }

    /// Waits until the connection is ready for `events`, the deadline passes, or the server is asked to stop.
    private func wait(for events: Int16, until end: ContinuousClock.Instant) -> Wait {
        while true {
            let left = ContinuousClock.now.duration(to: end)
            guard left > .zero else { return .timedOut }
            var entries = (
                pollfd(fd: connection, events: events, revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)
            )
            let ready = withUnsafeMutablePointer(to: &entries) {
                $0.withMemoryRebound(to: pollfd.self, capacity: 2) { poll($0, 2, left.roundedUpMilliseconds) }
            }
            if ready < 0 && errno != EINTR { return .timedOut }
            if entries.1.revents != 0 { return .stopping }
            if entries.0.revents != 0 { return .ready }
        }
    }
}
