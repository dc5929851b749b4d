import COffstageSystem
import Foundation
import Glibc
import OffstageProtocol
import Testing

@testable import OffstageDaemon

/// SPEC MODE-2, the descriptors themselves: what arrives, what is closed, and that nothing leaks when a client sends
/// more than it should.
@Suite("Descriptor passing (MODE-2)")
struct DescriptorPassingTests {
    @Test("MODE-2: the shims pass one descriptor close-on-exec, and report none when none was sent")
    func shimRoundTrip() throws {
        var ends: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0)
        defer { ends.forEach { _ = close($0) } }
        let pair = try VoIPFixtures.tcpPair()
        defer { pair.close() }

        let sent = offstage_send_with_fd(ends[0], "a", 1, pair.app)
        #expect(sent == 1)
        var buffer = [UInt8](repeating: 0, count: 16)
        var received: Int32 = -1
        let count = offstage_recv_with_fd(ends[1], &buffer, buffer.count, &received)
        #expect(count == 1 && buffer[0] == UInt8(ascii: "a"))
        #expect(received >= 0 && received != pair.app)
        #expect(VoIPFixtures.inode(of: received) == VoIPFixtures.inode(of: pair.app))
        #expect(fcntl(received, F_GETFD) & FD_CLOEXEC != 0, "a received descriptor does not leak into spawned apps")
        close(received)

        #expect(offstage_send_with_fd(ends[0], "b", 1, -1) == 1)
        #expect(offstage_recv_with_fd(ends[1], &buffer, buffer.count, &received) == 1)
        #expect(received == -1)
    }

    @Test("MODE-2: a second descriptor sent with the same call is closed; the handler gets the first")
    func extraDescriptorClosed() throws {
        let harness = try SocketHandOffServerTests.Harness()
        defer { harness.close() }
        let pair = try VoIPFixtures.tcpPair()
        defer { pair.close() }
        let extra = try VoIPFixtures.pipe()
        defer { [extra.read, extra.write].forEach { _ = close($0) } }
        let extraTarget = try #require(VoIPFixtures.target(of: extra.read))
        let before = VoIPFixtures.references(to: extraTarget)

        let connection = try VoIPFixtures.connectUnix(harness.path)
        defer { close(connection) }
        let call = Array(#"{"method":"io.offstage.App.HandOffSocket","parameters":{}}"#.utf8) + [0]
        // Two writes, each with a descriptor: the kernel keeps them apart, so the server meets both.
        #expect(offstage_send_with_fd(connection, call, 10, pair.app) == 10)
        #expect(offstage_send_with_fd(connection, Array(call[10...]), call.count - 10, extra.read) == call.count - 10)
        let reply = try VoIPFixtures.readReply(connection)
        #expect(reply.contains(#""kind":"stream""#), "\(reply)")
        #expect(harness.seen.all.first?.inode == VoIPFixtures.inode(of: pair.app))
        #expect(VoIPFixtures.references(to: extraTarget) == before, "the extra descriptor was closed")
        #expect(harness.watcher.watchedCount == 1)
    }

    @Test("MODE-2: an oversized call with a socket attached is refused and the daemon's copy closed")
    func oversizedWithDescriptor() throws {
        let harness = try SocketHandOffServerTests.Harness(settings: SocketHandOffSettings(maximumMessageSize: 256))
        defer { harness.close() }
        let pair = try VoIPFixtures.tcpPair()
        defer { pair.close() }
        let target = try #require(VoIPFixtures.target(of: pair.app))

        let connection = try VoIPFixtures.connectUnix(harness.path)
        defer { close(connection) }
        let call = [UInt8](repeating: UInt8(ascii: " "), count: 1024)
        #expect(offstage_send_with_fd(connection, call, call.count, pair.app) == call.count)
        let reply = try VoIPFixtures.readReply(connection)
        #expect(reply.contains(VarlinkError.Name.messageTooLarge))
        #expect(VoIPFixtures.references(to: target) == 1, "only the app's own descriptor is left")
        #expect(harness.seen.all.isEmpty && harness.watcher.watchedCount == 0)
    }

    @Test("MODE-2: a descriptor the app hands off stays usable by the app, which keeps its own")
    func appKeepsItsDescriptor() throws {
        let harness = try SocketHandOffServerTests.Harness()
        defer { harness.close() }
        let pair = try VoIPFixtures.tcpPair()
        defer { pair.close() }
        _ = try harness.handOff(pair.app)
        try VoIPFixtures.write("REGISTER", to: pair.app)
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = recv(pair.remote, &buffer, buffer.count, 0)
        #expect(count == 8 && String(decoding: buffer[0..<8], as: UTF8.self) == "REGISTER")
        #expect(fcntl(pair.app, F_GETFL) & O_NONBLOCK == 0, "the daemon changed no flag of the shared socket")
    }
}
