import Foundation
import NIOCore
import NIOPosix
import OffstageDaemon
import OffstageProtocol
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("VarlinkServer")
struct VarlinkServerTests {
    @Test("the test interface text is valid IDL")
    func testInterfaceIsValid() throws {
        let description = try VarlinkInterfaceDescription(validating: ipcTestInterfaceText)
        #expect(description.name == "io.offstage.Test")
        #expect(description.methods.contains("Unimplemented"))
    }

    @Test("a simple call is answered")
    func simpleCall() async throws {
        try await withIPCTestServer { _, path, _ in
            let connection = try VarlinkConnection(path: path)
            #expect(
                try connection.call("io.offstage.Test.Add", IPCAdd(a: 2, b: 40), as: IPCSum.self) == IPCSum(sum: 42))
            #expect(
                try connection.call("io.offstage.Test.Echo", IPCText(text: "héllo \u{1F600}"), as: IPCText.self).text
                    == "héllo \u{1F600}")
            connection.close()
        }
    }

    @Test("pipelined calls are answered in order, even when an earlier one answers later")
    func pipelined() async throws {
        try await withIPCTestServer { _, path, _ in
            let client = try IPCRawClient(path: path)
            var batch = ipcCallText("io.offstage.Test.Later", ["milliseconds": 50])
            // More calls than the server queues per connection, so reading pauses and resumes on the way.
            for index in 0..<500 { batch += ipcCallText("io.offstage.Test.Add", ["a": .int(index), "b": 1]) }
            batch += ipcCallText("io.offstage.Test.Nope")
            try client.send(batch)
            #expect(try client.receive() == ["parameters": ["done": true]])
            for index in 0..<500 {
                let reply = try client.receive()
                guard reply == ["parameters": ["sum": .int(index + 1)]] else {
                    Issue.record("reply \(index) was \(String(describing: reply))")
                    return
                }
            }
            #expect(try client.receive()?["error"] == "org.varlink.service.MethodNotFound")
        }
    }

    @Test("a more call streams N replies with continues, then a last one without")
    func moreStream() async throws {
        try await withIPCTestServer { _, path, _ in
            let connection = try VarlinkConnection(path: path)
            let replies = try connection.callMore("io.offstage.Test.Count", IPCCount(to: 1000), as: IPCValue.self)
            var values: [Int] = []
            while let reply = try replies.next(timeout: .seconds(10)) { values.append(reply.value) }
            #expect(values == Array(1...1000))
            // The connection serves calls again once the stream has ended.
            #expect(try connection.call("io.offstage.Test.Add", IPCAdd(a: 1, b: 1), as: IPCSum.self) == IPCSum(sum: 2))

            let raw = try IPCRawClient(path: path)
            try raw.send(ipcCallText("io.offstage.Test.Count", ["to": 3], more: true))
            #expect(try raw.receive() == ["parameters": ["value": 1], "continues": true])
            #expect(try raw.receive() == ["parameters": ["value": 2], "continues": true])
            #expect(try raw.receive() == ["parameters": ["value": 3]])
        }
    }

    @Test("a kept responder streams replies from timers, long after its handler returned")
    func laterStream() async throws {
        try await withIPCTestServer { _, path, _ in
            let connection = try VarlinkConnection(path: path)
            let ticks = try connection.callMore(
                "io.offstage.Test.Ticks",
                IPCTicks(count: 5, intervalMilliseconds: 5),
                as: IPCTick.self
            )
            var received: [Int] = []
            while let tick = try ticks.next(timeout: .seconds(10)) { received.append(tick.tick) }
            #expect(received == [1, 2, 3, 4, 5])
        }
    }

    @Test("a stream-only method called without more is ExpectedMore")
    func expectedMore() async throws {
        try await withIPCTestServer { _, path, _ in
            let connection = try VarlinkConnection(path: path)
            let error = #expect(throws: VarlinkError.self) {
                try connection.call("io.offstage.Test.Count", IPCCount(to: 3), as: IPCValue.self)
            }
            #expect(error?.name == "org.varlink.service.ExpectedMore")
        }
    }

    @Test("a oneway call is handled and gets no reply, not even an error")
    func oneway() async throws {
        try await withIPCTestServer { _, path, observations in
            let connection = try VarlinkConnection(path: path)
            try connection.oneway("io.offstage.Test.Note", IPCNote(note: "first"))
            try connection.oneway("io.offstage.Test.Nope", VarlinkEmpty())
            try connection.oneway("io.offstage.Test.Note", IPCNote(note: "second"))
            // Had anything been answered, this call would read that answer instead of its own.
            let notes = try connection.call("io.offstage.Test.Notes", as: IPCNotes.self)
            #expect(notes == IPCNotes(notes: ["first", "second"], mood: "calm"))
            #expect(observations.notes.withLock { $0 } == ["first", "second"])
        }
    }

    @Test("unknown interface, unknown method, unimplemented method and upgrade get the standard errors")
    func standardErrors() async throws {
        try await withIPCTestServer { _, path, _ in
            let connection = try VarlinkConnection(path: path)
            let cases: [(method: String, error: VarlinkError)] = [
                ("io.offstage.Nowhere.Ping", .interfaceNotFound("io.offstage.Nowhere")),
                ("io.offstage.Test.Ping", .methodNotFound("io.offstage.Test.Ping")),
                ("Ping", .methodNotFound("Ping")),
                ("io.offstage.Test.Unimplemented", .methodNotImplemented("io.offstage.Test.Unimplemented")),
            ]
            for (method, expected) in cases {
                #expect(throws: expected) { try connection.call(method, as: VarlinkEmpty.self) }
            }
            let raw = try IPCRawClient(path: path)
            try raw.send(#"{"method":"io.offstage.Test.Echo","parameters":{"text":"x"},"upgrade":true}"# + "\0")
            #expect(try raw.receive()?["error"] == "io.offstage.Protocol.UpgradeNotSupported")
            try raw.send(ipcCallText("io.offstage.Test.Echo", ["text": "still here"]))
            #expect(try raw.receive() == ["parameters": ["text": "still here"]])
        }
    }

    @Test("a parameter of the wrong type is InvalidParameter naming it")
    func invalidParameter() async throws {
        try await withIPCTestServer { _, path, _ in
            let connection = try VarlinkConnection(path: path)
            let error = #expect(throws: VarlinkError.self) {
                try connection.call("io.offstage.Test.Add", ["a": "two", "b": 2] as JSONValue, as: IPCSum.self)
            }
            #expect(error?.name == "org.varlink.service.InvalidParameter")
            #expect(error?.parameters["parameter"] == "a")
            #expect(error?.parameters["description"] == "a: expected an integer")
            let missing = #expect(throws: VarlinkError.self) {
                try connection.call("io.offstage.Test.Add", ["a": 1] as JSONValue, as: IPCSum.self)
            }
            #expect(missing?.parameters["parameter"] == "b")
        }
    }

    @Test("errors thrown by a handler are its reply: a VarlinkError as is, anything else as InternalError")
    func handlerErrors() async throws {
        try await withIPCTestServer { _, path, _ in
            let connection = try VarlinkConnection(path: path)
            #expect(throws: VarlinkError("io.offstage.Test.Failed", parameters: ["reason": "asked to"])) {
                try connection.call("io.offstage.Test.Fail", IPCFail(varlink: true), as: VarlinkEmpty.self)
            }
            let error = #expect(throws: VarlinkError.self) {
                try connection.call("io.offstage.Test.Fail", IPCFail(varlink: false), as: VarlinkEmpty.self)
            }
            #expect(error?.name == "io.offstage.Protocol.InternalError")
            #expect(error?.parameters["reason"]?.stringValue?.contains("a plain Swift error") == true)
        }
    }

    @Test("malformed JSON is MalformedMessage, closes that connection, and the server serves new ones")
    func malformed() async throws {
        try await withIPCTestServer { _, path, _ in
            let cases = [
                "{\"method\": \"io.offstage.Test.Add\"",  // Truncated JSON.
                "[1, 2, 3]",  // Not an object.
                #"{"parameters": {}}"#,  // No method.
            ]
            for garbage in cases {
                let client = try IPCRawClient(path: path)
                try client.send(
                    ipcCallText("io.offstage.Test.Add", ["a": 1, "b": 2]) + garbage + "\0"
                        + ipcCallText("io.offstage.Test.Add", ["a": 1, "b": 2]))
                #expect(try client.receive() == ["parameters": ["sum": 3]])
                let reply = try client.receive()
                #expect(reply?["error"] == "io.offstage.Protocol.MalformedMessage", "for \(garbage)")
                #expect(reply?["parameters"]?["reason"]?.stringValue?.isEmpty == false)
                #expect(try client.receive() == nil, "the connection is closed after \(garbage)")
            }
            let connection = try VarlinkConnection(path: path)
            #expect(try connection.call("io.offstage.Test.Add", IPCAdd(a: 1, b: 2), as: IPCSum.self) == IPCSum(sum: 3))
        }
    }

    @Test("an oversized message is MessageTooLarge and closes the connection, complete or not")
    func oversized() async throws {
        try await withIPCTestServer(maximumMessageSize: 4096) { _, path, _ in
            let unterminated = try IPCRawClient(path: path)
            try unterminated.send(ipcCallText("io.offstage.Test.Add", ["a": 1, "b": 2]))
            try unterminated.send([UInt8](repeating: UInt8(ascii: " "), count: 64 * 1024))
            #expect(try unterminated.receive() == ["parameters": ["sum": 3]])
            let reply = try unterminated.receive()
            #expect(reply?["error"] == "io.offstage.Protocol.MessageTooLarge")
            #expect(reply?["parameters"]?["limit"] == 4096)
            #expect(try unterminated.receive() == nil)

            let complete = try IPCRawClient(path: path)
            try complete.send(
                ipcCallText("io.offstage.Test.Echo", ["text": .string(String(repeating: "x", count: 5000))]))
            #expect(try complete.receive()?["error"] == "io.offstage.Protocol.MessageTooLarge")
            #expect(try complete.receive() == nil)

            // Just under the limit is fine.
            let connection = try VarlinkConnection(path: path)
            let text = String(repeating: "y", count: 4000)
            #expect(try connection.call("io.offstage.Test.Echo", IPCText(text: text), as: IPCText.self).text == text)
        }
    }

    @Test("a client that half-closes after sending still gets every reply")
    func halfClose() async throws {
        try await withIPCTestServer { _, path, _ in
            let client = try IPCRawClient(path: path)
            try client.send(
                ipcCallText("io.offstage.Test.Later", ["milliseconds": 20])
                    + ipcCallText("io.offstage.Test.Add", ["a": 2, "b": 2]))
            client.shutdownOutput()
            #expect(try client.receive() == ["parameters": ["done": true]])
            #expect(try client.receive() == ["parameters": ["sum": 4]])
            #expect(try client.receive() == nil)
        }
    }

    @Test("handlers see the caller's pid, uid and gid from the kernel")
    func peerCredentials() async throws {
        try await withIPCTestServer { _, path, _ in
            let connection = try VarlinkConnection(path: path)
            let identity = try connection.call("io.offstage.Test.Whoami", as: IPCIdentity.self)
            #expect(identity == IPCIdentity(pid: getpid(), uid: getuid(), gid: getgid()))
        }
    }

    @Test("GetInfo and GetInterfaceDescription describe the service")
    func serviceInterface() async throws {
        try await withIPCTestServer { _, path, _ in
            let connection = try VarlinkConnection(path: path)
            let info = try connection.serviceInfo()
            #expect(info.vendor == "Offstage")
            #expect(info.product == "offstaged")
            #expect(info.version == "1.2.3")
            #expect(info.interfaces == ["io.offstage.Protocol", "io.offstage.Test", "org.varlink.service"])
            #expect(try connection.interfaceDescription("io.offstage.Test") == ipcTestInterfaceText)
            #expect(
                try connection.interfaceDescription("org.varlink.service") == VarlinkInterfaceDescription.service.text)
            #expect(throws: VarlinkError.interfaceNotFound("io.offstage.Missing")) {
                try connection.interfaceDescription("io.offstage.Missing")
            }
            let error = #expect(throws: VarlinkError.self) {
                try connection.call(
                    "org.varlink.service.GetInterfaceDescription", ["interface": 5] as JSONValue, as: JSONValue.self)
            }
            #expect(error?.parameters["parameter"] == "interface")
        }
    }

    @Test("a kept responder learns when its caller goes away; the server reports the closed connection")
    func onClose() async throws {
        try await withIPCTestServer { _, path, observations in
            let connection = try VarlinkConnection(path: path)
            let stream = try connection.callMore("io.offstage.Test.Hold", VarlinkEmpty(), as: VarlinkEmpty.self)
            let holding = try await observations.waitForEvent(startingWith: "holding on ")
            let id = String(holding.dropFirst("holding on ".count))
            stream.cancel()
            #expect(
                try await observations.waitForEvent(startingWith: "hold closed on \(id)")
                    == "hold closed on \(id), isClosed=true")
            _ = try await observations.waitForEvent(startingWith: "closed \(id)")
        }
    }

    @Test("close() stops accepting, closes connections and removes the socket file")
    func closeServer() async throws {
        let directory = makeIPCTestDirectory()
        defer { removeIPCTestDirectory(directory) }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let path = directory + "/offstaged.sock"
        let server = VarlinkServer(configuration: .init(socketPath: path), eventLoop: group.next())
        let closed = IPCTestObservations()
        server.onConnectionClosed { context in closed.record("closed \(context.connectionID)") }
        try await server.start()
        var status = stat()
        #expect(lstat(path, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o600)
        let connection = try VarlinkConnection(path: path)
        _ = try connection.serviceInfo()
        try await server.close()
        _ = try await closed.waitForEvent(startingWith: "closed ")
        #expect(throws: VarlinkConnectionError.self) { try connection.serviceInfo(timeout: .seconds(5)) }
        #expect(access(path, F_OK) != 0)
        #expect(throws: VarlinkConnectionError.connectFailed(path: path, errno: ENOENT)) {
            try VarlinkConnection(path: path)
        }
        try await server.close()  // Twice is fine.
        try await group.shutdownGracefully()
    }

    @Test("listen() accepts clients before start(): their calls wait and are answered once the server starts")
    func listenBeforeStart() async throws {
        let directory = makeIPCTestDirectory()
        defer { removeIPCTestDirectory(directory) }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let path = directory + "/run/offstaged.sock"
        let server = VarlinkServer(configuration: .init(socketPath: path), eventLoop: group.next())
        try server.listen()
        var status = stat()
        #expect(lstat(path, &status) == 0 && status.st_mode & 0o777 == 0o600)

        // Clients connect while the daemon is still loading: the kernel accepts them, nothing answers yet.
        let clients = try (0..<3).map { _ in try IPCRawClient(path: path) }
        for (index, client) in clients.enumerated() {
            try client.send(ipcCallText("io.offstage.Test.Add", ["a": .number(Double(index)), "b": 40]))
        }
        #expect(throws: IPCTestFailure.self) { _ = try clients[0].receive(timeout: .milliseconds(200)) }
        // Interfaces may still be registered, then the server starts and answers what waited.
        server.register(IPCTestInterface(observations: IPCTestObservations()))
        try await server.start()
        for (index, client) in clients.enumerated() {
            #expect(try client.receive() == ["parameters": ["sum": .number(Double(40 + index))]])
        }
        #expect(throws: VarlinkServerError.alreadyStarted) { try server.listen() }
        try await server.close()
        #expect(access(path, F_OK) != 0)
        try await group.shutdownGracefully()
    }

    @Test("a server that listened and never started closes its socket: waiting clients see it close")
    func listenThenClose() async throws {
        let directory = makeIPCTestDirectory()
        defer { removeIPCTestDirectory(directory) }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let path = directory + "/offstaged.sock"
        let server = VarlinkServer(configuration: .init(socketPath: path), eventLoop: group.next())
        try server.listen()
        let second = VarlinkServer(configuration: .init(socketPath: path), eventLoop: group.next())
        #expect(throws: VarlinkServerError.alreadyRunning(path: path)) { try second.listen() }
        let client = try IPCRawClient(path: path)
        try client.send(ipcCallText("io.offstage.Test.Add", ["a": 1, "b": 2]))
        try await server.close()
        #expect(try client.receive() == nil, "the waiting call ends with the connection")
        #expect(access(path, F_OK) != 0)
        try await group.shutdownGracefully()
    }

    @Test("a stale socket file is replaced; a live one is refused; another file is left alone")
    func socketFile() async throws {
        let directory = makeIPCTestDirectory()
        defer { removeIPCTestDirectory(directory) }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let path = directory + "/offstaged.sock"

        // A socket file whose server is gone.
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
        close(fd)

        let first = VarlinkServer(configuration: .init(socketPath: path), eventLoop: group.next())
        try await first.start()
        #expect(try VarlinkConnection(path: path).serviceInfo().product == "offstaged")

        let second = VarlinkServer(configuration: .init(socketPath: path), eventLoop: group.next())
        let error = await #expect(throws: VarlinkServerError.alreadyRunning(path: path)) { try await second.start() }
        #expect(error?.description.contains("already listening on \(path)") == true)
        // The first is untouched.
        #expect(try VarlinkConnection(path: path).serviceInfo().product == "offstaged")
        try await first.close()

        let regular = directory + "/not-a-socket"
        _ = FileManager.default.createFile(atPath: regular, contents: Data("keep me".utf8))
        let third = VarlinkServer(configuration: .init(socketPath: regular), eventLoop: group.next())
        await #expect(throws: VarlinkServerError.pathNotASocket(path: regular)) { try await third.start() }
        #expect(FileManager.default.contents(atPath: regular) == Data("keep me".utf8))
        try await group.shutdownGracefully()
    }
}
