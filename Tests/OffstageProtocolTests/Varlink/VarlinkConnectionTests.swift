import Foundation
import OffstageProtocol
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The other end of a socket pair, served by a plain thread: a stand-in service that answers what the test says.
private final class FakeService: Sendable {
    let clientFD: Int32
    private let serviceFD: Int32
    private let done = DispatchSemaphore(value: 0)
    let received = Mutex<[String]>([])

    init() {
        var fds: [Int32] = [0, 0]
        let result = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds)
        precondition(result == 0, "socketpair failed: \(errno)")
        clientFD = fds[0]
        serviceFD = fds[1]
    }

    /// Runs `body` on a thread with a function that reads the next message (nil at end of input) and one that writes.
    func serve(_ body: @escaping @Sendable (_ read: () -> String?, _ write: (String) -> Void) -> Void) {
        let fd = serviceFD
        let thread = Thread { [self] in
            var framing = VarlinkFraming()
            let read: () -> String? = {
                while true {
                    if let message = try? framing.nextMessage() {
                        let text = String(decoding: message, as: UTF8.self)
                        self.received.withLock { $0.append(text) }
                        return text
                    }
                    var count = 0
                    _ = framing.readIntoFreeSpace { buffer in
                        count = recv(fd, buffer.baseAddress, buffer.count, 0)
                        return max(count, 0)
                    }
                    if count <= 0 { return nil }
                }
            }
            let write: (String) -> Void = { text in
                let bytes = Array(text.utf8)
                _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
            body(read, write)
            self.done.signal()
        }
        thread.start()
    }

    /// Waits for the serving thread to return.
    func wait() { done.wait() }

    func closeServiceSide() { close(serviceFD) }
}

private struct Sum: Codable, Equatable { var sum: Int }
private struct Numbers: Codable { var a: Int; var b: Int }
private struct Value: Codable, Equatable { var value: Int }

@Suite("VarlinkConnection")
struct VarlinkConnectionTests {
    @Test("a call sends one NUL-terminated message and returns the decoded reply")
    func call() throws {
        let service = FakeService()
        service.serve { read, write in
            _ = read()
            write(#"{"parameters":{"sum":5}}"# + "\0")
            _ = read()
        }
        let connection = VarlinkConnection(fd: service.clientFD)
        #expect(try connection.call("io.offstage.Test.Add", Numbers(a: 2, b: 3), as: Sum.self) == Sum(sum: 5))
        connection.close()
        service.wait()
        let sent = try JSONDecoder().decode(JSONValue.self, from: Data(service.received.withLock { $0[0] }.utf8))
        #expect(sent == ["method": "io.offstage.Test.Add", "parameters": ["a": 2, "b": 3]])
        service.closeServiceSide()
    }

    @Test("an error reply is thrown as VarlinkError and the connection stays usable")
    func errorReply() throws {
        let service = FakeService()
        service.serve { read, write in
            _ = read()
            write(#"{"error":"io.offstage.Test.Failed","parameters":{"reason":"no"}}"# + "\0")
            _ = read()
            write(#"{"parameters":{}}"# + "\0")
        }
        let connection = VarlinkConnection(fd: service.clientFD)
        #expect(throws: VarlinkError("io.offstage.Test.Failed", parameters: ["reason": "no"])) {
            try connection.call("io.offstage.Test.Fail", as: VarlinkEmpty.self)
        }
        #expect(try connection.call("io.offstage.Test.Ping", as: VarlinkEmpty.self) == VarlinkEmpty())
        service.wait()
        service.closeServiceSide()
    }

    @Test("a reply that arrives in pieces is reassembled")
    func splitReply() throws {
        let service = FakeService()
        service.serve { read, write in
            _ = read()
            for character in #"{"parameters":{"sum":42}}"# + "\0" {
                write(String(character))
                usleep(200)
            }
        }
        let connection = VarlinkConnection(fd: service.clientFD)
        #expect(
            try connection.call("a.b.Add", Numbers(a: 40, b: 2), as: Sum.self, timeout: .seconds(5)) == Sum(sum: 42))
        service.wait()
        service.closeServiceSide()
    }

    @Test("a reply that does not decode as the expected type is invalidReply naming the field")
    func invalidReply() throws {
        let service = FakeService()
        service.serve { read, write in
            _ = read()
            write(#"{"parameters":{"sum":"many"}}"# + "\0")
        }
        let connection = VarlinkConnection(fd: service.clientFD)
        let error = #expect(throws: VarlinkConnectionError.self) { try connection.call("a.b.Add", as: Sum.self) }
        #expect(error == .invalidReply(method: "a.b.Add", reason: "parameters.sum: expected an integer"))
        service.wait()
        service.closeServiceSide()
    }

    @Test("a more call yields every reply until the one without continues; other calls wait for it")
    func stream() throws {
        let service = FakeService()
        service.serve { read, write in
            _ = read()
            // Two replies in one write, then the rest one by one.
            write(
                #"{"parameters":{"value":1},"continues":true}"# + "\0" + #"{"parameters":{"value":2},"continues":true}"#
                    + "\0")
            write(#"{"parameters":{"value":3}}"# + "\0")
            _ = read()
            write(#"{"parameters":{"sum":1}}"# + "\0")
        }
        let connection = VarlinkConnection(fd: service.clientFD)
        let replies = try connection.callMore("a.b.Count", Value(value: 3), as: Value.self)
        #expect(throws: VarlinkConnectionError.busy(method: "a.b.Add", streaming: "a.b.Count")) {
            try connection.call("a.b.Add", Numbers(a: 0, b: 1), as: Sum.self)
        }
        var values: [Int] = []
        while let reply = try replies.next(timeout: .seconds(5)) { values.append(reply.value) }
        #expect(values == [1, 2, 3])
        #expect(try replies.next() == nil)
        #expect(try connection.call("a.b.Add", Numbers(a: 0, b: 1), as: Sum.self) == Sum(sum: 1))
        let sent = service.received.withLock { $0[0] }
        #expect(sent.contains(#""more":true"#))
        service.wait()
        service.closeServiceSide()
    }

    @Test("oneway sends the call with oneway set and reads nothing")
    func oneway() throws {
        let service = FakeService()
        service.serve { read, write in
            _ = read()
            _ = read()
            write(#"{"parameters":{}}"# + "\0")
        }
        let connection = VarlinkConnection(fd: service.clientFD)
        try connection.oneway("a.b.Notify", ["note": "hi"] as JSONValue)
        _ = try connection.call("a.b.Ping", as: VarlinkEmpty.self)
        let first = service.received.withLock { $0[0] }
        #expect(first.contains(#""oneway":true"#))
        service.wait()
        service.closeServiceSide()
    }

    @Test("no reply within the timeout is timedOut, and the connection is then closed")
    func timeout() throws {
        let service = FakeService()
        service.serve { read, _ in
            _ = read()
            _ = read()  // returns at end of input, when the client shuts the connection down
        }
        let connection = VarlinkConnection(fd: service.clientFD)
        let start = ContinuousClock.now
        #expect(throws: VarlinkConnectionError.timedOut(method: "a.b.Slow", timeout: .milliseconds(50))) {
            try connection.call("a.b.Slow", as: VarlinkEmpty.self, timeout: .milliseconds(50))
        }
        #expect(ContinuousClock.now - start >= .milliseconds(50))
        #expect(connection.isClosed)
        let error = #expect(throws: VarlinkConnectionError.self) {
            try connection.call("a.b.Ping", as: VarlinkEmpty.self)
        }
        guard case .closed = error else {
            Issue.record("expected .closed, got \(String(describing: error))")
            return
        }
        service.wait()
        service.closeServiceSide()
    }

    @Test("the service closing the connection is disconnected")
    func disconnected() throws {
        let service = FakeService()
        service.serve { _, _ in }
        let connection = VarlinkConnection(fd: service.clientFD)
        service.wait()
        service.closeServiceSide()
        #expect(throws: VarlinkConnectionError.disconnected(method: "a.b.Ping")) {
            try connection.call("a.b.Ping", as: VarlinkEmpty.self)
        }
    }

    @Test("close() from another thread wakes a call blocked without timeout")
    func closeWakesCall() async throws {
        let service = FakeService()
        service.serve { read, _ in
            _ = read()
            _ = read()
        }
        let connection = VarlinkConnection(fd: service.clientFD)
        Thread {
            usleep(50_000)
            connection.close()
        }.start()
        #expect(throws: VarlinkConnectionError.self) { try connection.call("a.b.Hang", as: VarlinkEmpty.self) }
        #expect(connection.isClosed)
        service.wait()
        service.closeServiceSide()
    }

    @Test("cancel() from another thread wakes a stream blocked in next(), and closes the connection")
    func cancelWakesStream() throws {
        let service = FakeService()
        service.serve { read, write in
            _ = read()
            write(#"{"parameters":{"value":1},"continues":true}"# + "\0")
            _ = read()
        }
        let connection = VarlinkConnection(fd: service.clientFD)
        let stream = try connection.callMore("a.b.Events", VarlinkEmpty(), as: Value.self)
        #expect(try stream.next() == Value(value: 1))
        #expect(!connection.isClosed)
        Thread {
            usleep(50_000)
            stream.cancel()
        }.start()
        #expect(throws: VarlinkConnectionError.self) { try stream.next() }
        #expect(connection.isClosed)
        #expect(try stream.next() == nil)
        service.wait()
        service.closeServiceSide()
    }

    @Test("connecting where no socket exists says so, names the path and how to start the daemon")
    func noSocket() throws {
        let path = "/tmp/offstage-test-\(getpid())-missing/offstaged.sock"
        let error = #expect(throws: VarlinkConnectionError.self) { try VarlinkConnection(path: path) }
        #expect(error == .connectFailed(path: path, errno: ENOENT))
        let text = error?.description ?? ""
        #expect(text.contains(path))
        #expect(text.contains("is the daemon running?") || text.contains("Is the daemon running?"))
        #expect(text.contains("offstaged"))
        #expect(text.contains("--socket/$OFFSTAGE_SOCKET"))
    }

    @Test("a socket file nobody listens on is reported as such")
    func staleSocket() throws {
        let path = "/tmp/offstage-test-\(getpid())-stale.sock"
        unlink(path)
        defer { unlink(path) }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(bound == 0)
        close(fd)  // The file stays, with nothing behind it.
        let error = #expect(throws: VarlinkConnectionError.self) { try VarlinkConnection(path: path) }
        #expect(error == .connectFailed(path: path, errno: ECONNREFUSED))
        #expect(error?.description.contains("nothing listens on \(path)") == true)
    }

    @Test("a socket path longer than a Unix socket address allows is refused before connecting")
    func pathTooLong() {
        let path = "/tmp/" + String(repeating: "p", count: 200)
        #expect(throws: VarlinkConnectionError.socketPathTooLong(path: path, limit: 107)) {
            try VarlinkConnection(path: path)
        }
    }
}
