import COffstageSystem
import Glibc

/// The POSIX plumbing of `GpsdClient`: a non-blocking TCP socket to gpsd and an eventfd that `stop()` writes,
/// both waited on in one poll(2) so a stop interrupts a connect, a read or a back-off at once.
struct GpsdSocket {
    /// Why a wait ended other than with data.
    enum Interruption: Error {
        /// `stop()` was called.
        case stopped
        /// The connection failed or ended; the text is for the status and the description.
        case failed(String)
    }

    /// The connected socket.
    let fd: Int32

    /// Connects to `host`:`port`, trying each address the name resolves to, within `timeout` seconds each;
    /// returns early with `.stopped` when `wake` becomes readable.
    static func connect(host: String, port: Int, timeout: Double, wake: Int32) throws(Interruption) -> GpsdSocket {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let list else {
            throw .failed("cannot resolve \(host): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(list) }
        var problem = "no address for \(host)"
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let address = entry {
            entry = address.pointee.ai_next
            let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
            let fd = socket(address.pointee.ai_family, type, address.pointee.ai_protocol)
            guard fd >= 0 else {
                problem = "cannot open a socket: \(describe(errno))"
                continue
            }
            if Glibc.connect(fd, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 {
                return GpsdSocket(fd: fd)
            }
            guard errno == EINPROGRESS else {
                problem = describe(errno)
                _ = Glibc.close(fd)
                continue
            }
            do {
                guard try wait(fd, for: Int16(POLLOUT), wake: wake, timeout: timeout) else {
                    problem = "no answer within \(timeout) s"
                    _ = Glibc.close(fd)
                    continue
                }
            } catch {
                _ = Glibc.close(fd)
                throw error
            }
            var code: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length)
            if code == 0 { return GpsdSocket(fd: fd) }
            problem = describe(code)
            _ = Glibc.close(fd)
        }
        throw .failed(problem)
    }

    /// Waits until `fd` is ready for `events` (true), `timeout` seconds pass (false; negative waits forever),
    /// or `wake` is readable (throws `.stopped`).
    static func wait(_ fd: Int32, for events: Int16, wake: Int32, timeout: Double) throws(Interruption) -> Bool {
        var fds = [pollfd(fd: fd, events: events, revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        let milliseconds = timeout < 0 ? -1 : Int32(min(timeout * 1000, Double(Int32.max)).rounded(.up))
        while true {
            let ready = poll(&fds, 2, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            if fds[1].revents != 0 { throw .stopped }
            if ready < 0 { throw .failed("poll failed: \(describe(errno))") }
            return ready > 0
        }
    }

    /// Reads what is available into `buffer`; throws `.failed` at end of stream or on an error.
    func read(into buffer: inout [UInt8]) throws(Interruption) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                buffer.append(contentsOf: chunk[..<count])
                return
            }
            if count == 0 { throw .failed("gpsd closed the connection") }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { return }
            throw .failed("reading failed: \(Self.describe(errno))")
        }
    }

    /// Sends all of `text`; without SIGPIPE, since a gpsd gone away must not kill the daemon.
    func send(_ text: String, wake: Int32, timeout: Double) throws(Interruption) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent > 0 {
                bytes = bytes.dropFirst(sent)
            } else if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                guard try Self.wait(fd, for: Int16(POLLOUT), wake: wake, timeout: timeout) else {
                    throw .failed("gpsd accepted no data within \(timeout) s")
                }
            } else if !(sent < 0 && errno == EINTR) {
                throw .failed("sending to gpsd failed: \(Self.describe(errno))")
            }
        }
    }

    /// Closes the socket.
    func close() { _ = Glibc.close(fd) }

    /// "connection refused" rather than "Connection refused (errno 111)": it goes into sentences.
    static func describe(_ code: Int32) -> String {
        String(cString: strerror(code)).lowercased()
    }
}
