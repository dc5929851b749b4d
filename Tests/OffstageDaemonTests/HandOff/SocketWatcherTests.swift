import Foundation
import Glibc
import Testing

@testable import OffstageDaemon

/// SPEC MODE-2: while an app is suspended the daemon watches its handed-off socket, without reading it, and wakes the
/// app when data arrives.
@Suite("Socket watcher (MODE-2)")
struct SocketWatcherTests {
    /// A watcher of a duplicate of `pair.app` (as the daemon holds one), and what it reports.
    private func withWatcher(
        _ body: (SocketWatcher, VoIPFixtures.TCPPair, Collected<SocketEvent>) throws -> Void
    ) throws {
        let events = Collected<SocketEvent>()
        let watcher = try SocketWatcher { token, event in
            if token == 7 { events.append(event) }
        }
        defer { watcher.stop() }
        let pair = try VoIPFixtures.tcpPair()
        defer { pair.close() }
        try watcher.watch(fd: fcntl(pair.app, F_DUPFD_CLOEXEC, 0), token: 7)
        try body(watcher, pair, events)
    }

    @Test("MODE-2: data from the remote side is reported readable and stays in the socket for the app")
    func readableWithoutConsuming() throws {
        try withWatcher { _, pair, events in
            try VoIPFixtures.write("ring", to: pair.remote)
            #expect(events.waitFor(1) == [.readable])
            #expect(VoIPFixtures.readAvailable(pair.app) == "ring", "the watcher never reads the socket")
        }
    }

    @Test("MODE-2: one event per arming; arm watches again, and unread data is reported again at once")
    func oneShotUntilArmed() throws {
        try withWatcher { watcher, pair, events in
            try VoIPFixtures.write("one", to: pair.remote)
            #expect(events.waitFor(1) == [.readable])
            try VoIPFixtures.write("two", to: pair.remote)
            Thread.sleep(forTimeInterval: 0.2)
            #expect(events.all == [.readable], "no second event before arm")
            try watcher.arm(7)
            #expect(events.waitFor(2) == [.readable, .readable])
            #expect(VoIPFixtures.readAvailable(pair.app) == "onetwo")
        }
    }

    @Test("MODE-2: a remote hang-up is reported closed")
    func remoteCloseIsClosed() throws {
        try withWatcher { _, pair, events in
            shutdown(pair.remote, Int32(SHUT_RDWR))
            #expect(events.waitFor(1) == [.closed])
        }
    }

    @Test("MODE-2: a disarmed socket reports nothing, not even a hang-up, until armed again")
    func disarmSilences() throws {
        try withWatcher { watcher, pair, events in
            try watcher.disarm(7)
            try VoIPFixtures.write("quiet", to: pair.remote)
            shutdown(pair.remote, Int32(SHUT_RDWR))
            Thread.sleep(forTimeInterval: 0.2)
            #expect(events.all.isEmpty)
            try watcher.arm(7)
            #expect(events.waitFor(1) == [.closed])
            #expect(VoIPFixtures.readAvailable(pair.app) == "quiet")
        }
    }

    @Test("MODE-2: a socket watched unarmed reports nothing until armed")
    func watchUnarmed() throws {
        let events = Collected<SocketEvent>()
        let watcher = try SocketWatcher { _, event in events.append(event) }
        defer { watcher.stop() }
        let pair = try VoIPFixtures.tcpPair()
        defer { pair.close() }
        try watcher.watch(fd: fcntl(pair.app, F_DUPFD_CLOEXEC, 0), token: 1, armed: false)
        try VoIPFixtures.write("x", to: pair.remote)
        Thread.sleep(forTimeInterval: 0.2)
        #expect(events.all.isEmpty)
        try watcher.arm(1)
        #expect(events.waitFor(1) == [.readable])
    }

    @Test("MODE-2: remove closes the watcher's descriptor and nothing more is reported")
    func removeClosesDescriptor() throws {
        try withWatcher { watcher, pair, events in
            let target = try #require(VoIPFixtures.target(of: pair.app))
            #expect(VoIPFixtures.references(to: target) == 2)
            watcher.remove(7)
            #expect(VoIPFixtures.references(to: target) == 1, "only the app's own descriptor is left")
            #expect(watcher.watchedCount == 0)
            try VoIPFixtures.write("late", to: pair.remote)
            Thread.sleep(forTimeInterval: 0.1)
            #expect(events.all.isEmpty)
            #expect(throws: SocketWatcherError.unknownToken(7)) { try watcher.arm(7) }
        }
    }

    @Test("MODE-2: a token in use is refused and the new descriptor closed")
    func duplicateToken() throws {
        try withWatcher { watcher, pair, _ in
            let target = try #require(VoIPFixtures.target(of: pair.app))
            #expect(throws: SocketWatcherError.tokenInUse(7)) {
                try watcher.watch(fd: fcntl(pair.app, F_DUPFD_CLOEXEC, 0), token: 7)
            }
            #expect(VoIPFixtures.references(to: target) == 2)
        }
    }

    @Test("MODE-2: stop ends the thread, closes every watched descriptor and refuses more")
    func stopLeavesNothing() throws {
        let watcher = try SocketWatcher { _, _ in }
        let pair = try VoIPFixtures.tcpPair()
        defer { pair.close() }
        let target = try #require(VoIPFixtures.target(of: pair.app))
        try watcher.watch(fd: fcntl(pair.app, F_DUPFD_CLOEXEC, 0), token: 1)
        #expect(VoIPFixtures.eventually { watcher.threadID != nil })
        let thread = try #require(watcher.threadID)
        watcher.stop()
        #expect(VoIPFixtures.eventually { !VoIPFixtures.threadExists(thread) })
        #expect(VoIPFixtures.references(to: target) == 1)
        #expect(throws: SocketWatcherError.stopped) {
            try watcher.watch(fd: fcntl(pair.app, F_DUPFD_CLOEXEC, 0), token: 2)
        }
        #expect(VoIPFixtures.references(to: target) == 1, "a refused descriptor is closed")
        watcher.stop()
    }

    @Test("MODE-2: stop called from the handler returns, and the thread ends after the handler")
    func stopFromHandler() throws {
        let box = Collected<SocketWatcher>()
        let watcher = try SocketWatcher { _, _ in box.all.first?.stop() }
        box.append(watcher)
        let pair = try VoIPFixtures.tcpPair()
        defer { pair.close() }
        try watcher.watch(fd: fcntl(pair.app, F_DUPFD_CLOEXEC, 0), token: 1)
        #expect(VoIPFixtures.eventually { watcher.threadID != nil })
        let thread = try #require(watcher.threadID)
        try VoIPFixtures.write("x", to: pair.remote)
        #expect(VoIPFixtures.eventually { !VoIPFixtures.threadExists(thread) })
        #expect(watcher.watchedCount == 0)
    }

    @Test("MODE-2: an idle watcher's thread sleeps in the kernel: no wake-ups at all")
    func idleWatcherDoesNotWake() throws {
        let watcher = try SocketWatcher { _, _ in }
        defer { watcher.stop() }
        let pair = try VoIPFixtures.tcpPair()
        defer { pair.close() }
        try watcher.watch(fd: fcntl(pair.app, F_DUPFD_CLOEXEC, 0), token: 1)
        #expect(VoIPFixtures.eventually { watcher.threadID != nil })
        let thread = try #require(watcher.threadID)
        let before = Self.contextSwitches(thread)
        Thread.sleep(forTimeInterval: 0.3)
        #expect(Self.contextSwitches(thread) == before)
    }

    private static func contextSwitches(_ tid: Int32) -> String {
        let status = (try? String(contentsOfFile: "/proc/self/task/\(tid)/status", encoding: .utf8)) ?? ""
        return status.split(separator: "\n").filter { $0.contains("ctxt_switches") }.joined(separator: ",")
    }
}
