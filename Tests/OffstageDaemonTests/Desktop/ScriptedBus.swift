import Foundation
import Glibc
import Synchronization

@testable import OffstageDaemon

/// A stand-in bus on a Unix socket that misbehaves on purpose (SPEC NT-2): what no real dbus-daemon does on demand.
/// It serves one connection on a thread of its own.
final class ScriptedBus: Sendable {
    /// How it answers.
    enum Script: Sendable {
        /// Answers the authentication with REJECTED.
        case reject
        /// Accepts the connection and never says anything.
        case silent
        /// Authenticates and answers every method call (Hello, AddMatch) until `calls` have been answered, then
        /// sends `bytes` once `sendBytes()` is called, and hangs up.
        case afterSetup(calls: Int, bytes: [UInt8])
    }

    let folder: String
    var address: String { "unix:path=\(folder)/bus" }
    private let listener: Int32
    /// The accepted connection, once there is one.
    private let connection: Connection
    private let thread = Mutex<WatcherThread?>(nil)

    private final class Connection: Sendable {
        let fd = Mutex<Int32>(-1)
        let release = DispatchSemaphore(value: 0)
    }

    /// Lets `.afterSetup` send its bytes.
    func sendBytes() {
        connection.release.signal()
    }

    init(_ script: Script) throws {
        var template = Array("/tmp/offstage-fakebus-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(.EIO) }
        let folder = String(cString: made)
        self.folder = folder
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array("\(folder)/bus".utf8) + [0]) }
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard listener >= 0, bound == 0, listen(listener, 1) == 0 else {
            if listener >= 0 { close(listener) }
            try? FileManager.default.removeItem(atPath: folder)
            throw POSIXError(.EIO)
        }
        self.listener = listener
        let connection = Connection()
        self.connection = connection
        let started = try WatcherThread(name: "scripted-bus") {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { return }
            connection.fd.withLock { $0 = fd }
            Self.serve(fd, script, release: connection.release)
        }
        thread.withLock { $0 = started }
    }

    /// Stops accepting and hangs up, waits for the thread, closes the sockets and removes the folder.
    func stop() {
        connection.release.signal()
        shutdown(listener, Int32(SHUT_RDWR))
        connection.fd.withLock { fd in
            if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)) }
        }
        thread.withLock { thread in
            thread?.join()
            thread = nil
        }
        connection.fd.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
        close(listener)
        try? FileManager.default.removeItem(atPath: folder)
    }

    private static func serve(_ fd: Int32, _ script: Script, release: DispatchSemaphore) {
        var buffer: [UInt8] = []
        guard readLine(fd, &buffer) != nil else { return }
        switch script {
        case .reject:
            send(fd, Array("REJECTED EXTERNAL\r\n".utf8))
            _ = readLine(fd, &buffer)
        case .silent:
            _ = readLine(fd, &buffer)
        case .afterSetup(let calls, let bytes):
            send(fd, Array("OK 0123456789abcdef0123456789abcdef\r\n".utf8))
            guard readLine(fd, &buffer) == "BEGIN" else { return }
            for serial in 1...UInt32(calls) {
                guard let call = readMessage(fd, &buffer) else { return }
                let body: [DBusValue] = call.member == "Hello" ? [.string(":1.1")] : []
                let reply = DBusMessage(kind: .methodReturn, replySerial: call.serial, body: body)
                guard let bytes = try? reply.marshal(serial: serial) else { return }
                send(fd, bytes)
            }
            release.wait()
            send(fd, bytes)
            shutdown(fd, Int32(SHUT_RDWR))
        }
    }

    /// The next CRLF-terminated line, without a leading NUL; nil at end of stream.
    private static func readLine(_ fd: Int32, _ buffer: inout [UInt8]) -> String? {
        while true {
            if let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[..<end].filter { $0 != 0 && $0 != UInt8(ascii: "\r") }
                buffer.removeFirst(end + 1)
                return String(decoding: line, as: UTF8.self)
            }
            guard fill(fd, &buffer) else { return nil }
        }
    }

    private static func readMessage(_ fd: Int32, _ buffer: inout [UInt8]) -> DBusMessage? {
        while true {
            if buffer.count >= 16, let length = try? DBusMessage.frameLength(buffer[...]), buffer.count >= length {
                defer { buffer.removeFirst(length) }
                return try? DBusMessage.unmarshal(Array(buffer[..<length]))
            }
            guard fill(fd, &buffer) else { return nil }
        }
    }

    private static func fill(_ fd: Int32, _ buffer: inout [UInt8]) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        buffer += chunk[..<count]
        return true
    }

    private static func send(_ fd: Int32, _ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}
