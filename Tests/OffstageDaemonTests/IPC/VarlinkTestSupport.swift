import Foundation
import NIOCore
import NIOPosix
import OffstageDaemon
import OffstageProtocol
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The interface the server tests serve.
let ipcTestInterfaceText = """
    # An interface for testing the Varlink transport.
    interface io.offstage.Test

    type Mood (calm, busy)

    # Adds two numbers.
    method Add(a: int, b: int) -> (sum: int)

    # Returns the text it is given.
    method Echo(text: string) -> (text: string)

    # Streams the numbers 1 to `to`; call with more.
    method Count(to: int) -> (value: int)

    # Streams `count` ticks, one every `intervalMilliseconds`, from timers on the event loop; call with more.
    method Ticks(count: int, intervalMilliseconds: int) -> (tick: int)

    # Answers after `milliseconds`, from a timer on the event loop.
    method Later(milliseconds: int) -> (done: bool)

    # The caller, as the kernel reports it.
    method Whoami() -> (pid: int, uid: int, gid: int)

    # Records a note; meant to be called oneway.
    method Note(note: string) -> ()

    # The notes recorded so far.
    method Notes() -> (notes: []string, mood: Mood)

    # Never answers; reports when its caller goes away.
    method Hold() -> ()

    # Fails with Failed, or with an error that is not a Varlink error.
    method Fail(varlink: bool) -> ()

    # Declared and not implemented.
    method Unimplemented() -> ()

    error Failed (reason: string)
    """

struct IPCAdd: Codable, Sendable { var a: Int; var b: Int }
struct IPCSum: Codable, Sendable, Equatable { var sum: Int }
struct IPCText: Codable, Sendable, Equatable { var text: String }
struct IPCCount: Codable, Sendable { var to: Int }
struct IPCValue: Codable, Sendable, Equatable { var value: Int }
struct IPCLater: Codable, Sendable { var milliseconds: Int }
struct IPCTicks: Codable, Sendable { var count: Int; var intervalMilliseconds: Int }
struct IPCTick: Codable, Sendable, Equatable { var tick: Int }
struct IPCDone: Codable, Sendable, Equatable { var done: Bool }
struct IPCIdentity: Codable, Sendable, Equatable { var pid: Int32; var uid: UInt32; var gid: UInt32 }
struct IPCNote: Codable, Sendable { var note: String }
struct IPCNotes: Codable, Sendable, Equatable { var notes: [String]; var mood: String }
struct IPCFail: Codable, Sendable { var varlink: Bool }

/// What the test interface's handlers observed, for the tests to check.
final class IPCTestObservations: Sendable {
    let notes = Mutex<[String]>([])
    private let events = Mutex<[String]>([])

    func record(_ event: String) { events.withLock { $0.append(event) } }

    /// Waits until an event starting with `prefix` has been recorded and returns it.
    func waitForEvent(startingWith prefix: String, timeout: Duration = .seconds(10)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        func found() -> String? { events.withLock { $0.first { $0.hasPrefix(prefix) } } }
        while ContinuousClock.now < deadline {
            if let event = found() { return event }
            try await Task.sleep(for: .milliseconds(5))
        }
        // A busy machine may not resume this task until after the deadline: what happened by then still counts.
        if let event = found() { return event }
        throw IPCTestFailure("no event starting with '\(prefix)' within \(timeout); seen: \(events.withLock { $0 })")
    }
}

struct IPCTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The test interface's handlers.
struct IPCTestInterface: VarlinkInterface {
    let observations: IPCTestObservations

    var interfaceDescription: VarlinkInterfaceDescription {
        // The text is a constant checked by a test of its own.
        VarlinkInterfaceDescription(ipcTestInterfaceText)
    }

    var methods: [String: VarlinkMethodHandler] {
        let observations = self.observations
        return [
            "Add": { _, request, responder in
                let parameters = try request.decodeParameters(IPCAdd.self)
                responder.reply(IPCSum(sum: parameters.a + parameters.b))
            },
            "Echo": { _, request, responder in
                responder.reply(try request.decodeParameters(IPCText.self))
            },
            "Count": { _, request, responder in
                try request.requireMore()
                let to = try request.decodeParameters(IPCCount.self).to
                for value in 1..<max(to, 1) { responder.replyMore(IPCValue(value: value)) }
                responder.reply(IPCValue(value: to))
            },
            "Ticks": { context, request, responder in
                try request.requireMore()
                let parameters = try request.decodeParameters(IPCTicks.self)
                // The responder is kept by the timers and written to long after the handler returned.
                @Sendable func tick(_ number: Int) {
                    context.eventLoop.scheduleTask(in: .milliseconds(Int64(parameters.intervalMilliseconds))) {
                        if number == parameters.count {
                            responder.reply(IPCTick(tick: number))
                        } else if responder.replyMore(IPCTick(tick: number)) {
                            tick(number + 1)
                        }
                    }
                }
                tick(1)
            },
            "Later": { context, request, responder in
                let milliseconds = try request.decodeParameters(IPCLater.self).milliseconds
                context.eventLoop.scheduleTask(in: .milliseconds(Int64(milliseconds))) {
                    responder.reply(IPCDone(done: true))
                }
            },
            "Whoami": { context, _, responder in
                responder.reply(IPCIdentity(pid: context.peer.pid, uid: context.peer.uid, gid: context.peer.gid))
            },
            "Note": { _, request, responder in
                let note = try request.decodeParameters(IPCNote.self).note
                observations.notes.withLock { $0.append(note) }
                // Dropped for a oneway call, as the specification requires.
                responder.reply()
            },
            "Notes": { _, _, responder in
                responder.reply(IPCNotes(notes: observations.notes.withLock { $0 }, mood: "calm"))
            },
            "Hold": { context, _, responder in
                responder.onClose {
                    observations.record("hold closed on \(context.connectionID), isClosed=\(responder.isClosed)")
                }
                observations.record("holding on \(context.connectionID)")
            },
            "Fail": { _, request, _ in
                if try request.decodeParameters(IPCFail.self).varlink {
                    throw VarlinkError("io.offstage.Test.Failed", parameters: ["reason": "asked to"])
                }
                throw IPCTestFailure("a plain Swift error")
            },
        ]
    }
}

/// A unique, short folder for sockets (Unix socket paths are limited to 107 bytes).
func makeIPCTestDirectory() -> String {
    let path = "/tmp/offstage-test-\(getpid())-\(UUID().uuidString.prefix(8))"
    mkdir(path, 0o700)
    return path
}

func removeIPCTestDirectory(_ path: String) {
    try? FileManager.default.removeItem(atPath: path)
}

/// Runs `body` with a started server serving the test interface on a fresh socket, then closes everything.
func withIPCTestServer(
    maximumMessageSize: Int = VarlinkFraming.defaultMaximumMessageSize,
    _ body: (VarlinkServer, String, IPCTestObservations) async throws -> Void
) async throws {
    let directory = makeIPCTestDirectory()
    defer { removeIPCTestDirectory(directory) }
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let observations = IPCTestObservations()
    let path = directory + "/run/offstaged.sock"
    let server = VarlinkServer(
        configuration: .init(socketPath: path, version: "1.2.3", maximumMessageSize: maximumMessageSize),
        eventLoop: group.next()
    )
    server.register(IPCTestInterface(observations: observations))
    server.onConnectionClosed { context in observations.record("closed \(context.connectionID)") }
    try await server.start()
    do {
        try await body(server, path, observations)
    } catch {
        try? await server.close()
        try? await group.shutdownGracefully()
        throw error
    }
    try await server.close()
    try await group.shutdownGracefully()
}

/// A client that writes and reads raw bytes, for what `VarlinkConnection` would never send.
final class IPCRawClient {
    let fd: Int32
    private var framing = VarlinkFraming(maximumMessageSize: 16 << 20)

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else { throw IPCTestFailure("connect to \(path) failed: errno \(errno)") }
    }

    deinit { close(fd) }

    func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw IPCTestFailure("send failed: errno \(errno)")
            }
            offset += written
        }
    }

    func shutdownOutput() { shutdown(fd, Int32(SHUT_WR)) }

    /// The next message as JSON, or nil at end of input.
    func receive(timeout: Duration = .seconds(10)) throws -> JSONValue? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let message = try framing.nextMessage() {
                return try JSONDecoder().decode(JSONValue.self, from: message)
            }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { throw IPCTestFailure("no message within \(timeout)") }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(
                remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000 + 1)
            guard poll(&descriptor, 1, milliseconds) > 0 else { continue }
            var count = 0
            _ = framing.readIntoFreeSpace { buffer in
                count = recv(fd, buffer.baseAddress, buffer.count, 0)
                return max(count, 0)
            }
            if count == 0 { return nil }
            if count < 0 && errno != EINTR && errno != EAGAIN {
                if errno == ECONNRESET { return nil }
                throw IPCTestFailure("recv failed: errno \(errno)")
            }
        }
    }
}

/// A call message with its NUL.
func ipcCallText(_ method: String, _ parameters: JSONValue = [:], more: Bool = false, oneway: Bool = false) -> String {
    var call: [String: JSONValue] = ["method": .string(method), "parameters": parameters]
    if more { call["more"] = true }
    if oneway { call["oneway"] = true }
    return JSONValue.object(call).description + "\0"
}

/// Percentiles of `samples` (nanoseconds), in microseconds.
func ipcPercentiles(_ samples: [UInt64]) -> (p50: Double, p99: Double) {
    let sorted = samples.sorted()
    func at(_ fraction: Double) -> Double {
        Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]) / 1000
    }
    return (at(0.50), at(0.99))
}

func ipcMonotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}
