import Foundation
import Glibc
import OffstageBenchKit
import Synchronization

/// A one-file HTTP/1.1 server on 127.0.0.1 for the completion → handler benchmark, so that the benchmark decides when
/// a download completes: each GET is answered at once with the headers and all of the body but its last `held` bytes;
/// the rest follows when ``release()`` is called (one release per request, in order), then the connection closes.
/// The benchmark releases a download once the app has exited or is frozen, so every round completes in the state it
/// measures. Its threads end when ``stop()`` closes the listening socket and every held request is released.
final class HeldDownloadServer: @unchecked Sendable {  // the semaphore and the counter are the shared state
    let port: Int
    let body: [UInt8]
    let held: Int
    private let listener: Int32
    private let releases = DispatchSemaphore(value: 0)
    private let requests = Mutex<Int>(0)

    /// Requests served so far (the headers and the first part of the body sent).
    var served: Int { requests.withLock { $0 } }

    init(bodyBytes: Int, held: Int = 4_096) throws {
        var generator = SystemRandomNumberGenerator()
        body = (0..<bodyBytes).map { _ in UInt8.random(in: 0...255, using: &generator) }
        self.held = min(held, bodyBytes)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SystemCallError("socket") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 && listen(fd, 16) == 0
            }
        }
        guard bound else {
            close(fd)
            throw SystemCallError("bind/listen on 127.0.0.1")
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    func url(_ path: String = "/held.bin") -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Lets the oldest held request send the rest of its body.
    func release() { releases.signal() }

    /// Closes the listening socket; requests still held are released.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for _ in 0..<8 { releases.signal() }
    }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if errno == EINTR { continue }
                return
            }
            Thread.detachNewThread { [self] in serve(connection) }
        }
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while !request.ends(with: [13, 10, 13, 10]) {
            let count = read(connection, &buffer, buffer.count)
            guard count > 0 else { return }
            request += buffer[..<count]
        }
        let line = String(decoding: request.prefix { $0 != 13 }, as: UTF8.self)
        guard line.hasPrefix("GET ") else {
            _ = writeAll(connection, Array("HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
            return
        }
        let headers = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        guard writeAll(connection, Array(headers.utf8)), writeAll(connection, Array(body[..<(body.count - held)])) else { return }
        requests.withLock { $0 += 1 }
        guard releases.wait(timeout: .now() + 120) == .success else { return }
        _ = writeAll(connection, Array(body[(body.count - held)...]))
        shutdown(connection, Int32(SHUT_WR))
        // Until the client closes, so that the last bytes are not cut by a reset.
        while read(connection, &buffer, buffer.count) > 0 {}
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }
}

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}
