import Foundation
import OffstageBenchKit
import OffstageProtocol

/// One probe app on one daemon, driven home and back by raw Varlink calls on a connection of the benchmark's own, its
/// freeze seen in its cgroup and its did-become-active stamped by the app itself (see ``LifecycleBenchmark``).
final class LifecycleRig {
    /// What one trip home measured.
    struct Home {
        var start: UInt64
        var frozen: Observation
        var acknowledged: UInt64
    }

    let daemon: DaemonFixture
    let id: String
    let appPid: pid_t
    let observer: any FreezeObserver
    private let stamps: Int32
    private let control: Int32
    private let homeCall: [UInt8]
    private let openCall: [UInt8]
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 8)

    /// Installs the probe app as `id` on `daemon` (started), opens it and waits for its first did-become-active.
    init(_ daemon: DaemonFixture, id: String, freezer: String) throws {
        self.daemon = daemon
        self.id = id
        let reportPath = daemon.root + "/stamps-\(id).sock"
        stamps = try UnixSocket.bindDatagram(path: reportPath)
        try daemon.install(try daemon.probeBundle(id: id, arguments: ["--lifecycle", "--report", reportPath]))
        try daemon.open(id)
        _ = try LifecycleBenchmark.receiveStamp(stamps, timeoutMilliseconds: 30_000)
        guard let pid = try daemon.waitFor(id, "active").pid else { throw BenchError("\(id) has no pid") }
        appPid = pid
        observer = try FreezeObservers.forApp(pid: pid, freezer: freezer)
        // The Home and Open calls go out on a connection of the benchmark's own, and their replies are read after the
        // step: the daemon acknowledges a call once what it changed is on disk, which may be after the app is frozen,
        // and waiting for the reply first would time the disk, not the freeze.
        control = try UnixSocket.connect(path: daemon.socket)
        homeCall = try [UInt8](VarlinkCodec.encodeCall(ControlInterface.Method.home, NoParameters())) + [0]
        openCall = try [UInt8](VarlinkCodec.encodeCall(ControlInterface.Method.open, ControlInterface.AppParameters(id: id))) + [0]
    }

    deinit {
        close(stamps)
        close(control)
        buffer.deallocate()
    }

    /// Home, until the app's cgroup says it is frozen and the call is answered.
    func home() throws -> Home {
        observer.sync()
        let start = MonotonicClock.now()
        try send(homeCall)
        let frozen = try observer.wait(frozen: true, timeoutSeconds: 5)
        try awaitReply("Home")
        return Home(start: start, frozen: frozen, acknowledged: MonotonicClock.now())
    }

    /// Open, until the app stamps did-become-active and the call is answered; returns when the call went out and
    /// the stamp.
    func open() throws -> (start: UInt64, stamp: LifecycleStamp) {
        let start = MonotonicClock.now()
        try send(openCall)
        let stamp = try LifecycleBenchmark.receiveStamp(stamps, timeoutMilliseconds: 10_000)
        try awaitReply("Open")
        return (start, stamp)
    }

    private func send(_ call: [UInt8]) throws { try call.withUnsafeBytes { try UnixSocket.writeAll(control, $0) } }

    private func awaitReply(_ what: String) throws {
        let length = try UnixSocket.readMessage(control, into: buffer)
        guard length > 0 else { throw BenchError("the daemon closed the connection instead of answering \(what)") }
        let reply = String(decoding: UnsafeRawBufferPointer(rebasing: buffer[0..<(length - 1)]), as: UTF8.self)
        if reply.contains("\"error\"") { throw BenchError("\(what) failed: \(reply)") }
    }
}
