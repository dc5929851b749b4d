import Glibc

/// The socket side of a D-Bus connection: bus addresses, connecting, the SASL handshake and whole-buffer sends.
enum DBusTransport {
    /// Where one entry of a bus address says the bus listens.
    enum SocketAddress: Hashable {
        /// A socket file.
        case path(String)
        /// A name in Linux's abstract socket namespace.
        case abstract(String)
    }

    /// One `;`-separated entry of an address: usable, or why not.
    enum Entry: Hashable {
        case usable(SocketAddress)
        case unusable(entry: String, reason: String)
    }

    /// The entries of `address` in order (`unix:path=…`, `unix:abstract=…` and `unix:runtime=yes`, with or without
    /// `,guid=…`); values are unescaped from the address syntax's `%XX`.
    static func entries(of address: String, runtimeDirectory: String?) -> [Entry] {
        address.split(separator: ";", omittingEmptySubsequences: true).map { piece in
            let entry = String(piece)
            guard let colon = entry.firstIndex(of: ":") else {
                return .unusable(entry: entry, reason: "no transport name before ':'")
            }
            let transport = entry[..<colon]
            guard transport == "unix" else {
                return .unusable(entry: entry, reason: "transport \"\(transport)\" is not supported, only unix")
            }
            var keys: [String: String] = [:]
            for pair in entry[entry.index(after: colon)...].split(separator: ",") {
                guard let equals = pair.firstIndex(of: "="), let value = unescape(pair[pair.index(after: equals)...])
                else { return .unusable(entry: entry, reason: "\"\(pair)\" is not key=value") }
                keys[String(pair[..<equals])] = value
            }
            if let path = keys["path"] { return .usable(.path(path)) }
            if let name = keys["abstract"] { return .usable(.abstract(name)) }
            if keys["runtime"] == "yes", let runtimeDirectory { return .usable(.path(runtimeDirectory + "/bus")) }
            return .unusable(entry: entry, reason: "no path= or abstract= to connect to")
        }
    }

    /// A connected, close-on-exec socket to the first entry of `address` that accepts; writes give up after
    /// `sendTimeout` so that a bus that stops reading cannot block a caller for ever.
    static func connect(address: String, sendTimeout: Duration) throws(DesktopNotificationsError) -> Int32 {
        let runtime = getenv("XDG_RUNTIME_DIR").map { String(cString: $0) }
        var reasons: [String] = []
        for entry in entries(of: address, runtimeDirectory: runtime) {
            switch entry {
            case .unusable(let entry, let reason):
                reasons.append("\(entry): \(reason)")
            case .usable(let socketAddress):
                switch connect(socketAddress) {
                case .success(let fd):
                    var limit = timeval(sendTimeout)
                    _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
                    return fd
                case .failure(let failure):
                    reasons.append(failure.reason)
                }
            }
        }
        throw .noSessionBus(
            address: address, reason: reasons.isEmpty ? "the address is empty" : reasons.joined(separator: "; "))
    }

    /// Why one socket could not be connected.
    struct ConnectFailure: Error {
        let reason: String
    }

    private static func connect(_ target: SocketAddress) -> Result<Int32, ConnectFailure> {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let (bytes, shown): ([UInt8], String) =
            switch target {
            case .path(let path): (Array(path.utf8) + [0], path)
            case .abstract(let name): ([0] + Array(name.utf8), "@" + name)
            }
        guard bytes.count <= capacity else {
            return .failure(ConnectFailure(reason: "\(shown): longer than a socket address can be"))
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failure(ConnectFailure(reason: "socket: \(describe(errno))")) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        var result: Int32
        repeat {
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
            }
        } while result != 0 && errno == EINTR
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            return .failure(ConnectFailure(reason: "\(shown): \(describe(code))"))
        }
        return .success(fd)
    }

    /// `AUTH EXTERNAL` with this process's uid, then `BEGIN`. Returns whatever the bus sent after its `OK` line
    /// (normally nothing), which belongs to the message stream.
    static func authenticate(_ fd: Int32, timeout: Duration) throws(DesktopNotificationsError) -> [UInt8] {
        let deadline = ContinuousClock.now + timeout
        // The uid in decimal, each digit as two hex digits: the SASL EXTERNAL identity of the specification.
        let identity = String(getuid()).utf8.map { String($0, radix: 16) }.joined()
        try sendOrFail(fd, [0] + Array("AUTH EXTERNAL \(identity)\r\n".utf8), during: "authentication")
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 512)
        while true {
            if let end = received.firstIndex(of: UInt8(ascii: "\n")), end > 0, received[end - 1] == UInt8(ascii: "\r") {
                let line = String(decoding: received[..<(end - 1)], as: UTF8.self)
                guard line.hasPrefix("OK ") else {
                    throw .authenticationRefused(reason: "the bus answered \"\(line.prefix(200))\"")
                }
                try sendOrFail(fd, Array("BEGIN\r\n".utf8), during: "authentication")
                return Array(received[(end + 1)...])
            }
            guard received.count < 4096 else {
                throw .authenticationRefused(reason: "the bus sent 4096 bytes without ending its answer")
            }
            let left = deadline - ContinuousClock.now
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, pollMilliseconds(left))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else {
                if ready < 0 { throw .systemCallFailed(call: "poll", errno: errno) }
                throw .timedOut(method: "AUTH EXTERNAL", timeout: timeout)
            }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received.append(contentsOf: chunk[..<count])
            } else if count == 0 {
                throw .authenticationRefused(reason: "the bus closed the connection during authentication")
            } else if errno != EINTR {
                throw .disconnected("reading during authentication failed: \(describe(errno))")
            }
        }
    }

    /// Sends all of `bytes`; returns 0, or the errno that stopped it (EAGAIN when the send timeout passed).
    static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Int32 {
        var offset = 0
        while offset < bytes.count {
            // MSG_NOSIGNAL: a bus that went away must be an error here, not a SIGPIPE that ends the daemon.
            let sent = bytes.withUnsafeBytes {
                send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 {
                offset += sent
            } else if sent < 0 && errno == EINTR {
                continue
            } else {
                return sent < 0 ? errno : EPIPE
            }
        }
        return 0
    }

    private static func sendOrFail(_ fd: Int32, _ bytes: [UInt8], during what: String) throws(DesktopNotificationsError)
    {
        let code = sendAll(fd, bytes)
        guard code == 0 else { throw .disconnected("writing during \(what) failed: \(describe(code))") }
    }

    /// "connection refused" rather than "Connection refused": it goes into sentences.
    static func describe(_ code: Int32) -> String {
        code == EAGAIN ? "the bus took no data in time" : String(cString: strerror(code)).lowercased()
    }

    /// `%XX` escapes decoded; nil for a `%` not followed by two hex digits or text that is not UTF-8.
    private static func unescape(_ value: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(value.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next(), let low = iterator.next(),
                let decoded = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
            else { return nil }
            bytes.append(decoded)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

extension DBusTransport {
    /// A timeval of `duration`, at least one microsecond: zero would mean "no limit" to SO_SNDTIMEO.
    fileprivate static func timeval(_ duration: Duration) -> Glibc.timeval {
        let (seconds, attoseconds) = duration.components
        let microseconds = Int(attoseconds / 1_000_000_000_000)
        return Glibc.timeval(tv_sec: Int(seconds), tv_usec: seconds == 0 && microseconds == 0 ? 1 : microseconds)
    }

    /// `duration` in whole milliseconds, rounded up, between 0 and Int32.max, for poll(2).
    static func pollMilliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        guard seconds < Int64(Int32.max / 1000) else { return Int32.max }
        return Int32(seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}
