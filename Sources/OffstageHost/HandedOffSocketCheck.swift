import Glibc

/// Whether a descriptor an app handed off (SPEC MODE-2) is something the daemon can watch for it: a connected stream
/// or datagram socket. Only facts from the kernel count (`fstat`, `getsockopt`, `getpeername`); nothing is read from
/// or written to the socket.
///
/// ```swift
/// let socket = try HandedOffSocketCheck.check(fd)   // "fd 7: a connected stream socket (inet6)"
/// ```
public enum HandedOffSocketCheck {
    /// What the socket behind `fd` is, when it is one the daemon can watch.
    ///
    /// - Throws: ``HandedOffSocketError`` naming what `fd` is instead. The descriptor is left open either way: the
    ///   caller owns it.
    public static func check(_ fd: Int32) throws(HandedOffSocketError) -> HandedOffSocket {
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw .systemCallFailed(fd: fd, call: "fstat", errno: errno) }
        let fileType = status.st_mode & S_IFMT
        guard fileType == S_IFSOCK else { throw .notASocket(fd: fd, actually: describe(fileType: fileType)) }
        let type = try option(SO_TYPE, of: fd)
        let domain = try option(SO_DOMAIN, of: fd)
        let kind: HandedOffSocket.Kind
        switch type {
        case Int32(SOCK_STREAM.rawValue): kind = .stream
        case Int32(SOCK_DGRAM.rawValue): kind = .datagram
        default: throw .unsupportedType(fd: fd, type: describe(socketType: type))
        }
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let connected = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard connected == 0 else {
            let code = errno
            guard code == ENOTCONN else { throw .systemCallFailed(fd: fd, call: "getpeername", errno: code) }
            // A listening socket is the likeliest mistake for a stream socket; say so when it is one.
            let listening = kind == .stream && (try? option(SO_ACCEPTCONN, of: fd)) == 1
            throw .notConnected(fd: fd, listening: listening, domain: HandedOffSocket.name(ofDomain: domain))
        }
        return HandedOffSocket(fd: fd, kind: kind, domain: domain, inode: UInt64(status.st_ino))
    }

    /// The integer socket option `name` (`SOL_SOCKET` level) of `fd`.
    private static func option(_ name: Int32, of fd: Int32) throws(HandedOffSocketError) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, name, &value, &length) == 0 else {
            throw .systemCallFailed(fd: fd, call: "getsockopt", errno: errno)
        }
        return value
    }

    /// What a file of type `fileType` (the `S_IFMT` bits) is, for a person.
    public static func describe(fileType: mode_t) -> String {
        switch fileType {
        case S_IFREG: "a regular file"
        case S_IFIFO: "a pipe"
        case S_IFDIR: "a directory"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFLNK: "a symbolic link"
        // eventfd, epoll, timerfd, signalfd and pidfd descriptors have no file type of their own.
        default: "an anonymous kernel object (eventfd, timerfd, epoll or the like)"
        }
    }

    /// What a socket of type `socketType` (`SO_TYPE`) is, for a person.
    private static func describe(socketType: Int32) -> String {
        switch socketType {
        case Int32(SOCK_SEQPACKET.rawValue): "a sequenced-packet socket"
        case Int32(SOCK_RAW.rawValue): "a raw socket"
        default: "a socket of type \(socketType)"
        }
    }
}

/// A handed-off descriptor that passed ``HandedOffSocketCheck``.
public struct HandedOffSocket: Sendable, Hashable, CustomStringConvertible {
    /// Stream or datagram.
    public enum Kind: String, Sendable, Hashable {
        /// `SOCK_STREAM`: TCP, or a Unix stream socket.
        case stream
        /// `SOCK_DGRAM`: UDP, or a Unix datagram socket.
        case datagram
    }

    /// The descriptor, in the daemon.
    public var fd: Int32
    /// Stream or datagram.
    public var kind: Kind
    /// The address family (`SO_DOMAIN`): `AF_INET`, `AF_INET6`, `AF_UNIX`...
    public var domain: Int32
    /// The socket's inode number, which names it in `/proc/PID/fd` of every process that holds it (`socket:[N]`).
    public var inode: UInt64

    /// `inet`, `inet6`, `unix`, or `family N`, for the log.
    public var domainName: String { Self.name(ofDomain: domain) }

    /// `fd 7: a connected stream socket (inet6, socket:[123456])`.
    public var description: String {
        "fd \(fd): a connected \(kind.rawValue) socket (\(domainName), socket:[\(inode)])"
    }

    /// The short name of an address family, for logs and errors.
    static func name(ofDomain domain: Int32) -> String {
        switch domain {
        case AF_INET: "inet"
        case AF_INET6: "inet6"
        case AF_UNIX: "unix"
        default: "family \(domain)"
        }
    }
}

/// Why a handed-off descriptor cannot be watched. ``code`` is stable; the description names what the descriptor is
/// instead and what the app should hand off.
public enum HandedOffSocketError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The descriptor is not a socket; `actually` says what it is ("a regular file").
    case notASocket(fd: Int32, actually: String)
    /// A socket, but neither stream nor datagram; `type` says which ("a raw socket").
    case unsupportedType(fd: Int32, type: String)
    /// A socket that is not connected (`listening` when it is a listening socket).
    case notConnected(fd: Int32, listening: Bool, domain: String)
    /// A system call on the descriptor failed.
    case systemCallFailed(fd: Int32, call: String, errno: Int32)

    /// A stable name for the kind of problem, e.g. `not-a-socket`.
    public var code: String {
        switch self {
        case .notASocket: "not-a-socket"
        case .unsupportedType: "unsupported-socket-type"
        case .notConnected: "socket-not-connected"
        case .systemCallFailed: "system-call-failed"
        }
    }

    /// What the descriptor is and what to hand off instead.
    public var description: String {
        let fix = "hand off the connected socket to your signalling server"
        switch self {
        case .notASocket(let fd, let actually):
            return "fd \(fd) is \(actually), not a socket: \(fix)"
        case .unsupportedType(let fd, let type):
            return "fd \(fd) is \(type), not a stream or datagram socket: \(fix)"
        case .notConnected(let fd, let listening, let domain):
            let what = listening ? "a listening \(domain) socket" : "an unconnected \(domain) socket"
            return "fd \(fd) is \(what), which no server can send to: \(fix) once it is connected"
        case .systemCallFailed(let fd, let call, let code):
            return "fd \(fd) cannot be inspected: \(call) failed: \(String(cString: strerror(code))) (errno \(code))"
        }
    }
}
