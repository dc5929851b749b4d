import Foundation
import OffstageProtocol
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// SPEC MODE-2, the app's side: how `SocketHandOff` reports each way a hand-off can fail. The daemon's side, and the
/// descriptor arriving, are tested with the real server in the daemon's tests.
@Suite("Socket hand-off client (MODE-2)")
struct SocketHandOffTests {
    /// What a stand-in daemon does with the one connection it accepts.
    enum Behaviour: Sendable {
        /// Replies these bytes (a NUL is added).
        case reply(String)
        /// Closes without replying.
        case close
        /// Reads the call and then says nothing until the test ends.
        case hang
    }

    /// A stand-in for the daemon's hand-off socket that serves one connection on a thread of its own and records the
    /// call it read.
    final class FakeDaemon: Sendable {
        let path: String
        let directory: URL
        private let listener: Int32
        private let received = Mutex<String?>(nil)
        private let done = Mutex<Int32?>(nil)
        private let finished = DispatchSemaphore(value: 0)

        init(_ behaviour: Behaviour) throws {
            directory = URL(fileURLWithPath: "/tmp/handoff-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            path = directory.appendingPathComponent("d.sock").path
            listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let pathBytes = Array(path.utf8) + [0]
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: pathBytes) }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            try #require(bound == 0 && listen(listener, 1) == 0)
            Thread.detachNewThread { [self] in
                defer { finished.signal() }
                let connection = accept(listener, nil, nil)
                done.withLock { $0 = connection }
                var message: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                while !message.contains(0) {
                    let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                    if count <= 0 { break }
                    message += buffer[0..<count]
                }
                received.withLock { $0 = String(decoding: message.prefix { $0 != 0 }, as: UTF8.self) }
                switch behaviour {
                case .reply(let text):
                    let bytes = Array(text.utf8) + [0]
                    _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    shutdown(connection, Int32(SHUT_RDWR))
                case .close:
                    shutdown(connection, Int32(SHUT_RDWR))
                case .hang:
                    break
                }
            }
        }

        /// The call the stand-in read, once it has.
        var call: String? { received.withLock { $0 } }

        func close() {
            // shutdown wakes a thread still blocked in accept (close alone would not); the thread must be done
            // before the number is freed, or it could accept on another test's socket that reuses it.
            _ = shutdown(listener, Int32(SHUT_RDWR))
            finished.wait()
            if let connection = done.withLock({ $0 }) { _ = Glibc.close(connection) }
            _ = Glibc.close(listener)
            try? FileManager.default.removeItem(at: directory)
        }
    }

    private struct Request: Codable, Sendable, Equatable {
        var app: String
    }

    private struct Accepted: Codable, Sendable, Equatable {
        var watching: Bool
    }

    /// A descriptor to hand off (the stand-in does not look at it).
    private func withSocket(_ body: (Int32) throws -> Void) throws {
        var ends: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        defer { ends.forEach { _ = Glibc.close($0) } }
        try body(ends[0])
    }

    @Test("MODE-2: the call names the method and parameters, and the reply decodes as the type asked for")
    func replyDecodes() throws {
        let daemon = try FakeDaemon(.reply(#"{"parameters":{"watching":true}}"#))
        defer { daemon.close() }
        try withSocket { fd in
            let reply = try SocketHandOff.send(
                fd: fd, to: daemon.path, parameters: Request(app: "io.example.Phone"), as: Accepted.self)
            #expect(reply == Accepted(watching: true))
        }
        #expect(daemon.call == #"{"method":"io.offstage.App.HandOffSocket","parameters":{"app":"io.example.Phone"}}"#)
    }

    @Test("MODE-2: a refusal carries the daemon's error and its reason")
    func refusalCarriesReason() throws {
        let refusal = #"{"error":"io.offstage.App.NotAllowed","parameters":{"description":"app is not a VoIP app"}}"#
        let daemon = try FakeDaemon(.reply(refusal))
        defer { daemon.close() }
        try withSocket { fd in
            let error = #expect(throws: SocketHandOffError.self) {
                try SocketHandOff.send(
                    fd: fd, to: daemon.path, method: "io.example.Custom", parameters: VarlinkEmpty(), as: VarlinkEmpty.self)
            }
            guard case .refused(let varlink) = error else {
                Issue.record("expected a refusal, got \(String(describing: error))")
                return
            }
            #expect(error?.code == "refused")
            #expect(varlink.name == "io.offstage.App.NotAllowed")
            #expect(error?.description.contains("app is not a VoIP app") == true)
        }
        #expect(daemon.call?.hasPrefix(#"{"method":"io.example.Custom""#) == true)
    }

    @Test("MODE-2: no daemon listening is daemon-not-running, naming the path")
    func noDaemon() throws {
        try withSocket { fd in
            let path = "/tmp/handoff-absent-\(UUID().uuidString.prefix(8)).sock"
            #expect(throws: SocketHandOffError.daemonNotRunning(path: path, errno: ENOENT)) {
                try SocketHandOff.send(fd: fd, to: path, parameters: VarlinkEmpty(), as: VarlinkEmpty.self)
            }
            #expect(SocketHandOffError.daemonNotRunning(path: path, errno: ENOENT).description.contains(path))
        }
    }

    @Test("MODE-2: a descriptor that is not open is descriptor-not-open, before anything is sent")
    func descriptorNotOpen() throws {
        let daemon = try FakeDaemon(.close)
        defer { daemon.close() }
        #expect(throws: SocketHandOffError.descriptorNotOpen(fd: 1_000_000)) {
            try SocketHandOff.send(fd: 1_000_000, to: daemon.path, parameters: VarlinkEmpty(), as: VarlinkEmpty.self)
        }
        #expect(SocketHandOffError.descriptorNotOpen(fd: 5).code == "descriptor-not-open")
    }

    @Test("MODE-2: a daemon that closes without a reply is disconnected; one that never answers times out")
    func disconnectedAndTimedOut() throws {
        let closing = try FakeDaemon(.close)
        defer { closing.close() }
        let hanging = try FakeDaemon(.hang)
        defer { hanging.close() }
        try withSocket { fd in
            #expect(throws: SocketHandOffError.disconnected) {
                try SocketHandOff.send(fd: fd, to: closing.path, parameters: VarlinkEmpty(), as: VarlinkEmpty.self)
            }
            let started = ContinuousClock.now
            #expect(throws: SocketHandOffError.timedOut(timeout: .milliseconds(200))) {
                try SocketHandOff.send(
                    fd: fd, to: hanging.path, parameters: VarlinkEmpty(), as: VarlinkEmpty.self,
                    timeout: .milliseconds(200))
            }
            #expect(ContinuousClock.now - started < .seconds(3))
        }
    }
}
