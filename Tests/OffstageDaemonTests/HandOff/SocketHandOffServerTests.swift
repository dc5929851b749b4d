import Foundation
import Glibc
import OffstageHost
import OffstageProtocol
import Testing

@testable import OffstageDaemon

/// SPEC MODE-2: "An app may hand the daemon one socket (file-descriptor passing); while the app is suspended the
/// daemon watches it and wakes the app when data arrives." These tests hand real sockets over a real Unix socket.
@Suite("Socket hand-off server (MODE-2)")
struct SocketHandOffServerTests {
    /// What the handler saw of one call.
    struct Seen: Sendable {
        let peer: PeerCredentials
        let inode: UInt64?
        let method: String
        let parameters: JSONValue
    }

    /// A server in a fresh folder whose handler checks the descriptor as the daemon will and watches it under token
    /// 1, and a watcher reporting into `events`.
    final class Harness: Sendable {
        let directory: URL
        let path: String
        let server: SocketHandOffServer
        let watcher: SocketWatcher
        let seen: Collected<Seen>
        let events: Collected<SocketEvent>

        init(settings: SocketHandOffSettings = .default) throws {
            let directory = try VoIPFixtures.temporaryDirectory()
            let path = directory.appendingPathComponent("handoff.sock").path
            let seen = Collected<Seen>()
            let events = Collected<SocketEvent>()
            let watcher = try SocketWatcher { _, event in events.append(event) }
            (self.directory, self.path, self.seen, self.events, self.watcher) = (directory, path, seen, events, watcher)
            server = SocketHandOffServer(socketPath: path, settings: settings) { peer, fd, method, parameters in
                let inode = fd.flatMap { VoIPFixtures.inode(of: $0) }
                seen.append(Seen(peer: peer, inode: inode, method: method, parameters: parameters))
                guard let fd else {
                    let reason: JSONValue = "no socket came with the call"
                    return .failure(VarlinkError("io.offstage.App.NoSocket", parameters: ["description": reason]))
                }
                do {
                    let socket = try HandedOffSocketCheck.check(fd)
                    try watcher.watch(fd: fd, token: 1)
                    return .success(["kind": .string(socket.kind.rawValue), "domain": .string(socket.domainName)])
                } catch let error as HandedOffSocketError {
                    let reason = JSONValue.string(error.description)
                    return .failure(VarlinkError("io.offstage.App.NotASocket", parameters: ["description": reason]))
                } catch {
                    return .failure(.internalError(reason: "\(error)"))
                }
            }
            try server.start()
        }

        func close() {
            server.stop()
            watcher.stop()
            try? FileManager.default.removeItem(at: directory)
        }

        /// Hands `fd` off as an app would.
        func handOff(_ fd: Int32) throws(SocketHandOffError) -> JSONValue {
            try SocketHandOff.send(
                fd: fd, to: path, parameters: ["app": "io.example.Phone"] as JSONValue, as: JSONValue.self,
                timeout: .seconds(5))
        }
    }

    private func withHarness(settings: SocketHandOffSettings = .default, _ body: (Harness) throws -> Void) throws {
        let harness = try Harness(settings: settings)
        defer { harness.close() }
        try body(harness)
    }

    @Test("MODE-2: a TCP socket handed off end to end is the same socket, from our pid, and watched without being read")
    func handOffEndToEnd() throws {
        try withHarness { harness in
            let pair = try VoIPFixtures.tcpPair()
            defer { pair.close() }
            let reply = try harness.handOff(pair.app)
            #expect(reply == ["kind": "stream", "domain": "inet"])
            let seen = try #require(harness.seen.all.first)
            #expect(seen.peer.pid == getpid())
            #expect(seen.peer.uid == getuid())
            #expect(seen.method == SocketHandOff.defaultMethod)
            #expect(seen.parameters == ["app": "io.example.Phone"])
            #expect(seen.inode != nil && seen.inode == VoIPFixtures.inode(of: pair.app), "the same socket")

            try VoIPFixtures.write("INVITE", to: pair.remote)
            #expect(harness.events.waitFor(1) == [.readable])
            #expect(VoIPFixtures.readAvailable(pair.app) == "INVITE", "the data is still there for the app")
            try VoIPFixtures.write("BYE", to: pair.remote)
            Thread.sleep(forTimeInterval: 0.2)
            #expect(harness.events.all == [.readable], "one-shot: nothing more until armed")
            try harness.watcher.arm(1)
            #expect(harness.events.waitFor(2) == [.readable, .readable])
            #expect(VoIPFixtures.readAvailable(pair.app) == "BYE")  // the app drains it before being frozen again
            try harness.watcher.arm(1)
            shutdown(pair.remote, Int32(SHUT_RDWR))
            #expect(harness.events.waitFor(3) == [.readable, .readable, .closed])
        }
    }

    @Test("MODE-2: a call without a descriptor reaches the handler with nil, and its refusal reaches the app")
    func callWithoutDescriptor() throws {
        try withHarness { harness in
            let pair = try VoIPFixtures.tcpPair()
            defer { pair.close() }
            let call = #"{"method":"io.offstage.App.HandOffSocket","parameters":{}}"#
            let reply = try rawCall(harness.path, Array(call.utf8) + [0])
            #expect(reply.contains("io.offstage.App.NoSocket") && reply.contains("no socket came with the call"))
            #expect(harness.seen.all.first?.inode == nil)
            #expect(harness.watcher.watchedCount == 0)
        }
    }

    @Test("MODE-2: a pipe, a regular file or an unconnected socket is refused by name, closed, and not watched")
    func badDescriptorsAreRefusedAndClosed() throws {
        try withHarness { harness in
            let pipe = try VoIPFixtures.pipe()
            let file = try VoIPFixtures.regularFile(in: harness.directory)
            let unconnected = try VoIPFixtures.unconnectedTCPSocket()
            let listening = try VoIPFixtures.listeningTCPSocket()
            defer { [pipe.read, pipe.write, file, unconnected, listening].forEach { _ = Glibc.close($0) } }
            let cases: [(fd: Int32, says: String)] = [
                (pipe.read, "is a pipe, not a socket"),
                (file, "is a regular file, not a socket"),
                (unconnected, "is an unconnected inet socket"),
                (listening, "is a listening inet socket"),
            ]
            for (fd, says) in cases {
                let target = try #require(VoIPFixtures.target(of: fd))
                let before = VoIPFixtures.references(to: target)
                do throws(SocketHandOffError) {
                    _ = try harness.handOff(fd)
                    Issue.record("fd \(fd) (\(target)) was accepted")
                } catch {
                    #expect(error.code == "refused")
                    #expect(error.description.contains(says), "\(error.description)")
                    #expect(error.description.contains("hand off the connected socket to your signalling server"))
                }
                #expect(VoIPFixtures.references(to: target) == before, "the daemon's copy of \(target) is closed")
            }
            #expect(harness.watcher.watchedCount == 0)
        }
    }

    @Test("MODE-2: an oversized or non-JSON call is answered with a Varlink error and the server keeps serving")
    func badMessagesKeepServing() throws {
        try withHarness(settings: SocketHandOffSettings(maximumMessageSize: 1024)) { harness in
            let oversized = try rawCall(harness.path, [UInt8](repeating: UInt8(ascii: "x"), count: 4096))
            #expect(oversized.contains(VarlinkError.Name.messageTooLarge))
            let garbage = try rawCall(harness.path, Array("not json".utf8) + [0])
            #expect(garbage.contains(VarlinkError.Name.malformedMessage))
            let unterminated = try rawCall(harness.path, Array("{}".utf8), shutDownAfterSending: true)
            #expect(unterminated.contains(VarlinkError.Name.malformedMessage))
            #expect(harness.seen.all.isEmpty, "the handler sees only well-formed calls")

            let pair = try VoIPFixtures.tcpPair()
            defer { pair.close() }
            #expect(try harness.handOff(pair.app) == ["kind": "stream", "domain": "inet"])
        }
    }

    @Test("MODE-2: a silent client is answered after the read timeout and does not block the server")
    func silentClientTimesOut() throws {
        try withHarness(settings: SocketHandOffSettings(readTimeout: .milliseconds(200))) { harness in
            let silent = try VoIPFixtures.connectUnix(harness.path)
            defer { close(silent) }
            let pair = try VoIPFixtures.tcpPair()
            defer { pair.close() }
            let started = ContinuousClock.now
            #expect(try harness.handOff(pair.app) == ["kind": "stream", "domain": "inet"])
            #expect(ContinuousClock.now - started < .seconds(3))
            let reply = try VoIPFixtures.readReply(silent)
            #expect(reply.contains(VarlinkError.Name.malformedMessage) && reply.contains("no complete call"))
        }
    }

    @Test("MODE-2: stop ends the thread and removes the socket file; a second server on a live path is refused")
    func stopAndExclusivity() throws {
        let harness = try Harness()
        defer { harness.close() }
        let second = SocketHandOffServer(socketPath: harness.path) { _, _, _, _ in .success([:]) }
        #expect(throws: SocketHandOffServerError.alreadyRunning(path: harness.path)) { try second.start() }
        #expect(VoIPFixtures.eventually { harness.server.threadID != nil })
        let thread = try #require(harness.server.threadID)
        harness.server.stop()
        #expect(VoIPFixtures.eventually { !VoIPFixtures.threadExists(thread) })
        #expect(!FileManager.default.fileExists(atPath: harness.path))
        #expect(throws: SocketHandOffError.self) { _ = try harness.handOff(0) }
    }

    @Test("MODE-2: a stale socket file left by a dead server is replaced")
    func staleSocketReplaced() throws {
        let directory = try VoIPFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("stale.sock").path
        let stale = try VarlinkSocketFile.makeListeningSocket(path, backlog: 1)
        close(stale)  // the file stays, nothing listens
        let server = SocketHandOffServer(socketPath: path) { _, fd, _, _ in
            if let fd { close(fd) }
            return .success(["ok": true])
        }
        try server.start()
        defer { server.stop() }
        let pair = try VoIPFixtures.tcpPair()
        defer { pair.close() }
        let reply = try SocketHandOff.send(fd: pair.app, to: path, parameters: VarlinkEmpty(), as: JSONValue.self)
        #expect(reply == ["ok": true])
    }

    // MARK: - A raw client

    /// Sends `bytes` with no descriptor and returns the reply's text.
    private func rawCall(_ path: String, _ bytes: [UInt8], shutDownAfterSending: Bool = false) throws -> String {
        let fd = try VoIPFixtures.connectUnix(path)
        defer { close(fd) }
        let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        try #require(sent == bytes.count)
        if shutDownAfterSending { shutdown(fd, Int32(SHUT_WR)) }
        return try VoIPFixtures.readReply(fd)
    }
}
