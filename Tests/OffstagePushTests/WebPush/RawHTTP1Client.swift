import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 client on a plain blocking TCP socket, written here so the server is tested against bytes no NIO code
/// produced: requests are written as text, responses read by their `content-length`.
///
/// The blocking calls run on a thread of their own: blocking a thread of Swift's cooperative pool could starve the
/// server's own tasks (the gateway answers in a task) while tests run in parallel. One test uses a client at a time.
final class RawHTTP1Client: @unchecked Sendable {
    struct Response {
        var status: Int
        var headers: [String: String]
        var body: Data

        var reason: String? {
            (try? JSONSerialization.jsonObject(with: body) as? [String: Any])?["reason"] as? String
        }
    }

    enum Failure: Error { case connect, write, closed, malformed(String) }

    private let socketFD: Int32
    private var buffered = Data()

    /// Connects to `127.0.0.1:port`; reads time out after 10 s (a safety net, not a wait).
    init(port: Int) throws {
        socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socketFD, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(socketFD)
            throw Failure.connect
        }
    }

    deinit { close(socketFD) }

    /// Writes raw bytes.
    func write(_ bytes: Data) async throws {
        try await offThePool { try self.writeBlocking(bytes) }
    }

    /// Reads one response; an informational one (100 Continue) only when `informational`, else it is skipped.
    func readResponse(informational: Bool = false) async throws -> Response {
        try await offThePool { try self.readResponseBlocking(informational: informational) }
    }

    /// Whether the server closed the connection (reads until end of file; false when it sent more bytes).
    func serverClosed() async throws -> Bool {
        try await offThePool { try self.serverClosedBlocking() }
    }

    private func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
        }
    }

    private func writeBlocking(_ bytes: Data) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(socketFD, $0.baseAddress! + offset, $0.count - offset) }
            guard written > 0 else { throw Failure.write }
            offset += written
        }
    }

    /// Writes a request with `content-length` and the given headers (`host` first unless `host` is nil).
    func send(
        _ method: String, _ path: String, host: String? = "push.test", headers: [(String, String)] = [], body: Data = Data()
    ) async throws {
        var head = "\(method) \(path) HTTP/1.1\r\n"
        if let host { head += "Host: \(host)\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body.count)\r\n\r\n"
        try await write(Data(head.utf8) + body)
    }

    private func readResponseBlocking(informational: Bool) throws -> Response {
        let headEnd = try readUntil(Data("\r\n\r\n".utf8))
        let head = String(decoding: buffered.prefix(headEnd), as: UTF8.self)
        buffered.removeFirst(headEnd + 4)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure.malformed(head) }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        if status == 100, !informational { return try readResponseBlocking(informational: false) }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        while buffered.count < length { try fill() }
        let body = buffered.prefix(length)
        buffered.removeFirst(length)
        return Response(status: status, headers: headers, body: Data(body))
    }

    private func serverClosedBlocking() throws -> Bool {
        guard buffered.isEmpty else { return false }
        do {
            try fill()
            return false
        } catch Failure.closed {
            return true
        }
    }

    private func readUntil(_ marker: Data) throws -> Int {
        while true {
            if let range = buffered.range(of: marker) { return range.lowerBound - buffered.startIndex }
            try fill()
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 8192)
        let count = chunk.withUnsafeMutableBytes { read(socketFD, $0.baseAddress, $0.count) }
        if count == 0 || (count < 0 && errno == ECONNRESET) { throw Failure.closed }
        guard count > 0 else { throw Failure.malformed("read failed: errno \(errno)") }
        buffered.append(contentsOf: chunk[0..<count])
        buffered = Data(buffered)  // Keep indices starting at 0.
    }
}
