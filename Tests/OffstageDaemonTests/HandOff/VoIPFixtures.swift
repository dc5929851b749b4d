import Foundation
import Glibc
import Synchronization
import Testing

@testable import OffstageDaemon

/// Real sockets and files for the hand-off tests (SPEC MODE-2): a TCP connection on loopback, descriptors of other
/// kinds, and counts of `/proc/self/fd` entries that refer to one object, which is how a leak is seen.
enum VoIPFixtures {
    /// A connected TCP pair on 127.0.0.1: `app` is the socket an app would hand off, `remote` the signalling
    /// server's end. The listening socket is closed before returning.
    struct TCPPair {
        let app: Int32
        let remote: Int32

        /// Closes both ends (the ones still open).
        func close() {
            Glibc.close(app)
            Glibc.close(remote)
        }
    }

    static func tcpPair() throws -> TCPPair {
        let listener = try listeningTCPSocket()
        defer { close(listener) }
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try check(withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        })
        let app = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try check(app)
        try check(withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(app, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        })
        let remote = accept(listener, nil, nil)
        try check(remote)
        return TCPPair(app: app, remote: remote)
    }

    /// A TCP socket listening on 127.0.0.1 at a port the kernel chose.
    static func listeningTCPSocket() throws -> Int32 {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try check(listener)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        try check(withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        })
        try check(listen(listener, 4))
        return listener
    }

    /// An unconnected TCP socket.
    static func unconnectedTCPSocket() throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try check(fd)
        return fd
    }

    /// Both ends of a new pipe.
    static func pipe() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        try check(Glibc.pipe(&ends))
        return (ends[0], ends[1])
    }

    /// A regular file in `directory`, opened for reading.
    static func regularFile(in directory: URL) throws -> Int32 {
        let path = directory.appendingPathComponent("regular-\(UUID().uuidString)").path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        try check(fd)
        return fd
    }

    /// A temporary directory with a short path (Unix socket paths are limited to 107 bytes); removed by the caller.
    static func temporaryDirectory() throws -> URL {
        let url = URL(fileURLWithPath: "/tmp/voip-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// What `/proc/self/fd/N` points at for `fd`: `socket:[123]`, `pipe:[45]`, or a path.
    static func target(of fd: Int32) -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")
    }

    /// How many descriptors of this process refer to `target`. Counting one object, rather than every descriptor,
    /// keeps the count right while other tests open and close descriptors in parallel.
    static func references(to target: String) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.filter { name in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)")) == target
        }.count
    }

    /// The inode of the object behind `fd`.
    static func inode(of fd: Int32) -> UInt64? {
        var status = stat()
        return fstat(fd, &status) == 0 ? UInt64(status.st_ino) : nil
    }

    /// Whether the thread `tid` of this process still exists.
    static func threadExists(_ tid: Int32) -> Bool {
        access("/proc/self/task/\(tid)", F_OK) == 0
    }

    /// Writes all of `text` to `fd`.
    static func write(_ text: String, to fd: Int32) throws {
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        try #require(written == bytes.count)
    }

    /// The bytes waiting on `fd`, read without waiting.
    static func readAvailable(_ fd: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : ""
    }

    /// Polls `condition` until it holds or `timeout` passes; for waiting on another thread, never for timing.
    static func eventually(timeout: Duration = .seconds(5), _ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return condition()
    }

    /// A Unix stream connection to `path`.
    static func connectUnix(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(result == 0)
        return fd
    }

    /// Reads until the NUL that ends a reply, or until the server closes.
    static func readReply(_ fd: Int32) throws -> String {
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !reply.contains(0) {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            reply += buffer[0..<count]
        }
        return String(decoding: reply.prefix { $0 != 0 }, as: UTF8.self)
    }

    private static func check(_ result: Int32) throws {
        if result < 0 { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }
}

/// Collects what a callback reports, from any thread.
final class Collected<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])

    /// Adds one.
    func append(_ item: Element) {
        items.withLock { $0.append(item) }
    }

    /// Everything so far.
    var all: [Element] { items.withLock { $0 } }

    /// Waits until at least `count` have come; returns them.
    func waitFor(_ count: Int, timeout: Duration = .seconds(5)) -> [Element] {
        _ = VoIPFixtures.eventually(timeout: timeout) { all.count >= count }
        return all
    }
}
