import Foundation
import OffstageProtocol
import TestProcesses
import Testing

/// The Phone example's signalling server, started and ended by pid.
final class SignallingServer {
    let process: SpawnedProcess
    let port: UInt16
    let log: String

    init(in folder: URL) throws {
        log = folder.appendingPathComponent("phone-server.log").path
        process = try SpawnedProcess(DaemonHarness.products.appendingPathComponent("PhoneServer").path, [], output: log)
        var port: UInt16?
        let deadline = Date().addingTimeInterval(10)
        while port == nil, Date() < deadline {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            port = text.split(separator: "\n").first { $0.hasPrefix("listening on 127.0.0.1:") }
                .flatMap { UInt16($0.split(separator: ":").last ?? "") }
            if port == nil { usleep(20_000) }
        }
        guard let port else {
            process.terminate()
            throw HarnessError("the signalling server did not start: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        }
        self.port = port
    }

    /// Calls `name` from `caller`, as another phone would: the server's answer (OK or NOT-REGISTERED).
    func call(_ name: String, from caller: String) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw HarnessError("cannot reach the signalling server (errno \(errno))") }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = Array("CALL \(name) \(caller)\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var answer: [UInt8] = []
        var byte: UInt8 = 0
        while recv(fd, &byte, 1, 0) == 1, byte != UInt8(ascii: "\n") { answer.append(byte) }
        return String(decoding: answer, as: UTF8.self)
    }

    func stop() { process.terminate(grace: 1) }
}

/// SPEC MODE-2 on the real daemon with the real `Phone` example and its signalling server.
@Suite("VoIP apps on the real daemon (SPEC MODE-2)", .serialized)
struct VoIPModeIntegrationTests {
    static let phone = "com.example.phone"
    /// Short VoIP timings, keeping their order: keep-alive at least 2 s, 1 s for its handler and for socket data.
    static let settings = DaemonHarness.fastTimings.merging([
        "keepAliveMinimumTimeout": 2, "keepAliveHandlerTime": 1, "keepAliveTolerance": 1, "voipSocketEventTime": 1,
        "crashLoopInitialDelay": 0.3,
    ]) { _, new in new }

    static func installPhone(
        _ daemon: DaemonHarness, server: SignallingServer, modes: [String] = ["voip"], arguments: [String] = []
    ) throws {
        try daemon.install(
            "Phone", id: phone,
            [
                "UIBackgroundModes": modes,
                "OffstageLinux": ["Arguments": ["--server", "127.0.0.1:\(server.port)", "--name", "alice"] + arguments],
            ])
    }

    /// Runs `body` with a daemon and a signalling server, ending both.
    static func withPhone(_ body: (DaemonHarness, SignallingServer) throws -> Void) throws {
        try withDaemon(settings: settings) { daemon in
            let server = try SignallingServer(in: daemon.root)
            defer { server.stop() }
            try body(daemon, server)
        }
    }

    static func count(_ text: String, in output: String) -> Int { output.components(separatedBy: text).count - 1 }

    @Test("MODE-2: a frozen VoIP app is woken by data on its socket, handles it, and is suspended and watched again")
    func socketDataWakesTheFrozenApp() throws {
        try Self.withPhone { daemon, server in
            try Self.installPhone(daemon, server: server)
            try daemon.ok("open", Self.phone)
            try daemon.waitUntil("the phone handed its socket off") { daemon.output(Self.phone).contains("handed to the system") }
            let pid = try #require(try daemon.app(Self.phone).pid)
            try daemon.ok("home")
            try daemon.waitFor(Self.phone, "suspended", timeout: 5)
            #expect(ProcessProbe.isFrozen(pid))
            for (round, caller) in ["bob", "carol"].enumerated() {
                let called = DaemonHarness.now()
                #expect(try server.call("alice", from: caller) == "OK")
                try daemon.waitUntil("the phone rang for \(caller)") {
                    daemon.output(Self.phone).contains("incoming call from \(caller)")
                }
                #expect(try daemon.callbacks(Self.phone, since: called) == ["voip-socket"])
                // Handled, then suspended again once its 1 s to handle it is over, and watched again.
                try daemon.waitFor(Self.phone, "suspended", timeout: 5)
                #expect(ProcessProbe.isFrozen(pid), "round \(round)")
            }
            #expect(Self.count("woken: data on the signalling connection", in: daemon.output(Self.phone)) == 2)
        }
    }

    @Test("MODE-2, CLI-1: `offstage voip` shows the watched socket; `voip data` wakes the app without a server")
    func voipVerbs() throws {
        try Self.withPhone { daemon, server in
            try Self.installPhone(daemon, server: server)
            try daemon.ok("open", Self.phone)
            try daemon.waitUntil("the phone handed its socket off") { daemon.output(Self.phone).contains("handed to the system") }
            // Running, it reads its socket itself: a simulated event is refused, naming the fix.
            let running = try daemon.cli(["voip", "data", Self.phone])
            #expect(running.status != 0 && running.stderr.contains("reads its socket itself"), "\(running.stderr)")
            #expect(running.stderr.contains("offstage home"))
            try daemon.ok("home")
            try daemon.waitFor(Self.phone, "suspended", timeout: 5)
            let listed = try JSONDecoder().decode(
                ModesControlInterface.VoIPAppsReply.self, from: Data(try daemon.ok("--json", "voip").utf8))
            #expect(listed.apps.map(\.app) == [Self.phone])
            #expect(listed.apps.first?.socket == true && listed.apps.first?.watched == true)
            #expect(listed.apps.first?.keepAliveTimeout == 600)
            try daemon.ok("voip", "data", Self.phone)
            try daemon.waitUntil("the phone was woken") {
                daemon.output(Self.phone).contains("woken: data on the signalling connection")
            }
            #expect(try daemon.log(Self.phone).contains { $0.message == "socket data simulated (forced)" })
            let unknown = try daemon.cli(["voip", "data", "com.example.nothing"])
            #expect(unknown.status == 3, "\(unknown.stderr)")
        }
    }

    @Test("MODE-2: the keep-alive handler runs in the background before each timeout; the app sleeps in between")
    func keepAliveRunsWhileSuspended() throws {
        try Self.withPhone { daemon, server in
            try Self.installPhone(daemon, server: server, arguments: ["--keep-alive", "2"])
            try daemon.ok("open", Self.phone)
            try daemon.waitFor(Self.phone, "active")
            try daemon.ok("home")
            try daemon.waitFor(Self.phone, "suspended", timeout: 5)
            try daemon.waitUntil("the server answered two keep-alives", timeout: 10) {
                Self.count("keep-alive answered", in: daemon.output(Self.phone)) >= 2
            }
            let log = try daemon.log(Self.phone)
            #expect(log.filter { $0.kind == "callback" && $0.message == "keep-alive" }.count >= 2)
            try daemon.waitFor(Self.phone, "suspended", timeout: 5)
            let serverLog = (try? String(contentsOfFile: server.log, encoding: .utf8)) ?? ""
            #expect(serverLog.contains("alice keep-alive"))
        }
    }

    @Test("MODE-2, LC-9: a keep-alive handler that hangs is terminated after its time; the app is relaunched (voip)")
    func hangingKeepAliveIsTerminatedAndRelaunched() throws {
        try Self.withPhone { daemon, server in
            try Self.installPhone(daemon, server: server, arguments: ["--keep-alive", "2", "--hang-in-keep-alive"])
            try daemon.ok("open", Self.phone)
            try daemon.waitFor(Self.phone, "active")
            let first = try #require(try daemon.app(Self.phone).pid)
            try daemon.ok("home")
            try daemon.waitUntil("the hung handler was terminated", timeout: 10) {
                try daemon.app(Self.phone).lastTermination?.contains("keep-alive") == true
            }
            #expect(try daemon.app(Self.phone).lastTermination?.contains("1 s") == true)
            try daemon.waitUntil("the phone was launched again", timeout: 10) {
                try daemon.log(Self.phone).contains { $0.message == "launching into the background (voip)" }
            }
            try daemon.waitUntil("the new process runs") { try daemon.app(Self.phone).pid.map { $0 != first } ?? false }
            // Its pid is known as soon as it is started; what it prints comes once its handler has run.
            try daemon.waitUntil("the new process ran did-finish-launching for voip", timeout: 5) {
                daemon.output(Self.phone).contains("did-finish-launching (voip)")
            }
        }
    }

    @Test("MODE-2: VoIP apps are launched at boot, and hand their socket again to a daemon restarted after a crash")
    func bootAndRestart() throws {
        try Self.withPhone { daemon, server in
            try Self.installPhone(daemon, server: server)
            daemon.stop()
            try daemon.start()
            try daemon.waitUntil("the phone was launched at boot") {
                daemon.output(Self.phone).contains("did-finish-launching (boot)")
            }
            try daemon.waitFor(Self.phone, "suspended", timeout: 5)
            #expect(try daemon.app(Self.phone).launchReason == "boot")
            let pid = try #require(try daemon.app(Self.phone).pid)
            // kill -9 of the daemon: the phone lives on, reattaches to the next daemon and hands its socket again.
            daemon.crash()
            try daemon.start()
            try daemon.waitFor(Self.phone, "suspended", timeout: 15)
            #expect(try daemon.app(Self.phone).pid == pid)
            #expect(try server.call("alice", from: "dave") == "OK")
            try daemon.waitUntil("the phone rang after the restart") {
                daemon.output(Self.phone).contains("incoming call from dave")
            }
        }
    }

    @Test("MODE-2, MODE-6: bad input — no voip mode, a timeout under 600 s, a foreign descriptor — is refused, clearly")
    func badInput() throws {
        try withDaemon { daemon in
            let server = try SignallingServer(in: daemon.root)
            defer { server.stop() }
            // Without the mode: both calls refused, naming the fix; the app runs on in the foreground.
            try Self.installPhone(daemon, server: server, modes: [])
            try daemon.ok("open", Self.phone)
            try daemon.waitUntil("the phone reported both refusals") {
                daemon.output(Self.phone).contains("keep-alive handler refused")
                    && daemon.output(Self.phone).contains("cannot hand the socket to the system")
            }
            #expect(daemon.output(Self.phone).contains("add 'voip' to UIBackgroundModes"))
            try daemon.ok("force-quit", Self.phone)
            // A timeout under the default minimum of 600 s.
            try Self.installPhone(daemon, server: server, arguments: ["--keep-alive", "30"])
            try daemon.ok("open", Self.phone)
            try daemon.waitUntil("the short timeout was refused") {
                daemon.output(Self.phone).contains("setKeepAliveTimeout(30.0) failed")
            }
            #expect(daemon.output(Self.phone).contains("use at least 600 s"))
            // A process that is no app hands off a pipe, then a real socket: refused, nothing watched.
            let path = ModesInterface.handOffSocketPath(forMain: daemon.socket)
            var pipeEnds: [Int32] = [0, 0]
            #expect(pipe(&pipeEnds) == 0)
            defer { pipeEnds.forEach { close($0) } }
            do {
                _ = try SocketHandOff.send(
                    fd: pipeEnds[0], to: path, method: ModesInterface.Method.handOffSocket, parameters: NoParameters(),
                    as: ModesInterface.HandOffReply.self)
                Issue.record("a pipe was accepted")
            } catch {
                #expect("\(error)".contains("is a pipe, not a socket"), "\(error)")
            }
            var pair: [Int32] = [0, 0]
            #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
            defer { pair.forEach { close($0) } }
            do {
                _ = try SocketHandOff.send(
                    fd: pair[0], to: path, method: ModesInterface.Method.handOffSocket, parameters: NoParameters(),
                    as: ModesInterface.HandOffReply.self)
                Issue.record("a process that is no app handed off a socket")
            } catch {
                #expect("\(error)".contains("NotAnApp") || "\(error)".contains("belongs to no installed app"), "\(error)")
            }
        }
    }
}
