import Glibc

/// A failed system call, with its errno, for the benchmarks' plain-socket code.
public struct SystemCallError: Error, CustomStringConvertible, Sendable {
    /// The call and what it was applied to.
    public var call: String
    /// The error number.
    public var code: Int32

    /// Captures `errno` for `call`.
    public init(_ call: String, code: Int32 = errno) {
        self.call = call
        self.code = code
    }

    public var description: String { "\(call): \(String(cString: strerror(code)))" }
}

/// Blocking Unix-domain sockets with no framework in between: what the bare baselines are made of, and how the
/// probe app reports its timestamps.
public enum UnixSocket {
    static func address(_ path: String) throws -> (sockaddr_un, socklen_t) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { throw SystemCallError("socket path \(path) is too long", code: ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
        return (address, length)
    }

    /// A stream socket listening at `path` (an old file there is removed first).
    public static func listen(path: String) throws -> Int32 {
        unlink(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemCallError("socket") }
        var (address, length) = try Self.address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, Glibc.listen(fd, 16) == 0 else {
            let error = SystemCallError("bind/listen \(path)")
            close(fd)
            throw error
        }
        return fd
    }

    /// A stream socket connected to `path`.
    public static func connect(path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemCallError("socket") }
        var (address, length) = try Self.address(path)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
        }
        guard connected == 0 else {
            let error = SystemCallError("connect \(path)")
            close(fd)
            throw error
        }
        return fd
    }

    /// A datagram socket bound at `path`, to receive reports.
    public static func bindDatagram(path: String) throws -> Int32 {
        unlink(path)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemCallError("socket") }
        var (address, length) = try Self.address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else {
            let error = SystemCallError("bind \(path)")
            close(fd)
            throw error
        }
        return fd
    }

    /// An unbound datagram socket, to send reports.
    public static func datagram() throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemCallError("socket") }
        return fd
    }

    /// Sends one datagram to `path`.
    public static func send(_ fd: Int32, datagram bytes: [UInt8], to path: String) throws {
        var (address, length) = try Self.address(path)
        let sent = bytes.withUnsafeBytes { buffer in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL), $0, length)
                }
            }
        }
        guard sent == bytes.count else { throw SystemCallError("sendto \(path)") }
    }

    /// Receives one datagram, waiting at most `timeoutMilliseconds`; nil on timeout.
    public static func receiveDatagram(_ fd: Int32, timeoutMilliseconds: Int32) throws -> [UInt8]? {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while true {
            let ready = poll(&descriptor, 1, timeoutMilliseconds)
            if ready == 0 { return nil }
            if ready < 0 {
                if errno == EINTR { continue }
                throw SystemCallError("poll")
            }
            break
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else { throw SystemCallError("recv") }
        return Array(buffer[0..<count])
    }

    /// Writes all of `bytes`.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if written < 0 {
                if errno == EINTR { continue }
                throw SystemCallError("send")
            }
            offset += written
        }
    }

    /// Reads into `buffer` until a NUL byte arrives (the Varlink frame end) and returns the message length with
    /// its NUL; 0 at end of stream. Messages here are strictly request then reply, so a read never holds two.
    public static func readMessage(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var filled = 0
        while true {
            let count = recv(fd, buffer.baseAddress! + filled, buffer.count - filled, 0)
            if count < 0 {
                if errno == EINTR { continue }
                throw SystemCallError("recv")
            }
            if count == 0 { return 0 }
            let start = filled
            filled += count
            for index in start..<filled where buffer[index] == 0 { return index + 1 }
            guard filled < buffer.count else { throw SystemCallError("message longer than the buffer", code: EMSGSIZE) }
        }
    }
}
