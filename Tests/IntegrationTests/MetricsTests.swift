import Foundation
import OffstageProtocol
import Testing
import TestProcesses

#if canImport(Glibc)
import Glibc
#endif

/// What the real daemon counts, read through `offstage metrics` and over HTTP (SPEC §11 observability).
@Suite("Metrics of the real daemon (SPEC §11 observability)", .serialized)
struct MetricsTests {
    static let app = "com.example.metered"

    /// One sample of `offstage --json metrics`.
    struct Sample: Decodable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    static func samples(_ daemon: DaemonHarness) throws -> [Sample] {
        try JSONDecoder().decode([Sample].self, from: Data(try daemon.ok("--json", "metrics").utf8))
    }

    /// The value of the series `name` whose labels include `labels`, or nil if there is none.
    static func value(_ samples: [Sample], _ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { sample in
            sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value }
        }?.value
    }

    @Test("§11 observability: after open, home (a freeze) and the app's callbacks, `offstage metrics` shows them all")
    func metricsAfterALifecycle() throws {
        try withDaemon { daemon in
            try daemon.install("FiniteTask", id: Self.app)
            try daemon.ok("open", Self.app)
            try daemon.waitFor(Self.app, "active")
            try daemon.ok("home")
            try daemon.waitFor(Self.app, "suspended", timeout: 15)
            // The freeze is counted once it is done; the state changes with it, but wait rather than assume.
            var samples: [Sample] = []
            try daemon.waitUntil("a freeze is counted") {
                samples = try Self.samples(daemon)
                return (Self.value(samples, "offstage_freezes_total") ?? 0) >= 1
            }
            #expect((Self.value(samples, "offstage_freeze_seconds_count") ?? 0) >= 1)
            #expect((Self.value(samples, "offstage_launches_total") ?? 0) == 1)
            // The suspension delay is the one timer: it fired at least once.
            #expect((Self.value(samples, "offstage_wakeups_total") ?? 0) >= 1)
            let wakeups = Self.value(samples, "offstage_wakeups_total")
            #expect(Self.value(samples, "offstage_timer_lateness_seconds_count") == wakeups)
            #expect(Self.value(samples, "offstage_deadlines_missed_total") != nil)
            for callback in ["didFinishLaunching", "didBecomeActive", "willResignActive", "didEnterBackground"] {
                let delivered = Self.value(samples, "offstage_callbacks_total", ["callback": callback]) ?? 0
                #expect(delivered >= 1, "\(callback)")
                let answered = Self.value(samples, "offstage_callback_seconds_count", ["callback": callback]) ?? 0
                #expect(answered >= 1, "\(callback) has a latency sample")
                let sum = Self.value(samples, "offstage_callback_seconds_sum", ["callback": callback]) ?? -1
                #expect(sum > 0 && sum < 10, "\(callback): \(sum) s in all")
            }
            let control = ["interface": "io.offstage.Control"]
            #expect(Self.value(samples, "offstage_ipc_calls_total", control.merging(["method": "Open"]) { $1 }) == 1)
            #expect(Self.value(samples, "offstage_ipc_calls_total", control.merging(["method": "Home"]) { $1 }) == 1)
            func appCalls(_ method: String) -> Double {
                Self.value(samples, "offstage_ipc_calls_total", ["interface": "io.offstage.App", "method": method]) ?? 0
            }
            #expect(appCalls("Attach") == 1)
            #expect(appCalls("CallbackDone") >= 4)
            #expect(appCalls("BeginBackgroundTask") >= 1)
            for write in ["state", "log", "process"] {
                let writes = Self.value(samples, "offstage_store_write_seconds_count", ["write": write]) ?? 0
                #expect(writes >= 1, "\(write)")
            }

            // Errors count by method and error name; a method nobody declares is `unknown`, not the caller's text.
            #expect(try daemon.cli(["open", "com.example.missing"]).status == 3)
            let client = try RawClient(path: daemon.socket)
            defer { client.close() }
            let teleport = try client.call("io.offstage.Control.Teleport")
            #expect(teleport["error"] as? String == "org.varlink.service.MethodNotFound")
            samples = try Self.samples(daemon)
            let missing = ["method": "Open", "error": "io.offstage.Control.AppNotInstalled"]
            #expect(Self.value(samples, "offstage_ipc_errors_total", control.merging(missing) { $1 }) == 1)
            let unknown = ["interface": "unknown", "method": "unknown", "error": "org.varlink.service.MethodNotFound"]
            #expect(Self.value(samples, "offstage_ipc_errors_total", unknown) == 1)
            #expect(!samples.contains { $0.labels.values.contains { $0.contains("Teleport") } })
            #expect(samples.allSatisfy { $0.name.hasPrefix("offstage_") })

            // Without --json: the Prometheus text format itself.
            let text = try daemon.ok("metrics")
            #expect(text.contains("# TYPE offstage_freezes_total counter"))
            #expect(text.contains("# TYPE offstage_callback_seconds histogram"))
            let bucket = #"offstage_callback_seconds_bucket{callback="didEnterBackground",le="+Inf"}"#
            #expect(text.contains(bucket), "\(text)")
        }
    }

    @Test("§11 observability: `offstage metrics --help` says what it prints and what --json gives")
    func help() throws {
        let harness = try DaemonHarness()
        defer { harness.tearDown() }
        let output = try harness.cli(["metrics", "--help"])
        #expect(output.status == 0)
        for word in ["Prometheus", "--json", "--socket", "samples", "seconds"] {
            #expect(output.stdout.contains(word), "\(word) in \(output.stdout)")
        }
        #expect(try harness.cli(["--help"]).stdout.contains("metrics"))
    }

    @Test("§11 observability: with metricsListen, GET /metrics answers the same families over HTTP; else 404, 405")
    func httpEndpoint() throws {
        var settings = DaemonHarness.fastTimings
        let port = try Self.freePort()
        settings["metricsListen"] = .string("127.0.0.1:\(port)")
        try withDaemon(settings: settings) { daemon in
            try daemon.install("FiniteTask", id: Self.app)
            try daemon.ok("open", Self.app)
            try daemon.waitFor(Self.app, "active")
            let response = try Self.http("GET", "/metrics", port: port)
            #expect(response.status == 200, "\(response)")
            #expect(response.headers.lowercased().contains("content-type: text/plain; version=0.0.4"))
            let cli = try daemon.ok("metrics")
            func families(_ text: String) -> Set<String> {
                Set(text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map(String.init))
            }
            #expect(families(response.body) == families(cli))
            #expect(families(response.body).count >= 14, "\(families(response.body))")
            let opens = #"offstage_ipc_calls_total{interface="io.offstage.Control",method="Open"} 1"#
            #expect(response.body.contains(opens))
            #expect(try Self.http("GET", "/metrics?debug=1", port: port).status == 200)
            #expect(try Self.http("GET", "/", port: port).status == 404)
            #expect(try Self.http("GET", "/metricsx", port: port).status == 404)
            let post = try Self.http("POST", "/metrics", port: port)
            #expect(post.status == 405 && post.headers.contains("Allow: GET"), "\(post)")
        }
    }

    @Test(
        "§11 observability: a bad metricsListen is refused at start with one line naming the key and the fix",
        arguments: [JSONValue.string("nonsense"), .string("127.0.0.1:70000"), .number(9464)])
    func badListenAddress(value: JSONValue) throws {
        var settings = DaemonHarness.fastTimings
        settings["metricsListen"] = value
        let harness = try DaemonHarness(settings: settings)
        defer { harness.tearDown() }
        let (status, output) = try harness.runDaemonToExit()
        #expect(status == 78, "\(output)")
        let lines = output.split(separator: "\n")
        #expect(lines.count == 1, "\(output)")
        #expect(output.contains("'metricsListen'") && output.contains("give HOST:PORT"), "\(output)")
    }

    @Test("§11 observability: a metricsListen port already taken stops the daemon with an error naming the key")
    func takenPort() throws {
        let holder = try Self.listeningSocket()
        defer { close(holder.fd) }
        var settings = DaemonHarness.fastTimings
        settings["metricsListen"] = .string("127.0.0.1:\(holder.port)")
        let harness = try DaemonHarness(settings: settings)
        defer { harness.tearDown() }
        let (status, output) = try harness.runDaemonToExit()
        #expect(status != 0)
        #expect(output.contains("metricsListen") && output.contains("choose a free port"), "\(output)")
    }

    // MARK: Sockets

    /// A TCP socket listening on a port of 127.0.0.1 the kernel chose.
    static func listeningSocket() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(fd, address, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, address, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw HarnessError("bind to 127.0.0.1:0: \(errno)")
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// A port that was free a moment ago: the kernel's choice for port 0, released again.
    static func freePort() throws -> Int { try FreePort.loopback() }

    struct HTTPResponse: CustomStringConvertible {
        var status: Int
        var headers: String
        var body: String
        var description: String { "\(status)\n\(headers)\n\n\(body.prefix(300))" }
    }

    /// One HTTP/1.1 request on a fresh connection (`Connection: close`), read to the end.
    static func http(_ method: String, _ path: String, port: Int) throws -> HTTPResponse {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError("socket: \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else { throw HarnessError("connect to 127.0.0.1:\(port): \(errno)") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        _ = request.withCString { send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        let text = String(decoding: data, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { throw HarnessError("no HTTP response: \(text)") }
        let head = text[..<split.lowerBound]
        let statusLine = head.split(separator: "\r\n").first ?? ""
        guard let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "") else {
            throw HarnessError("bad status line: \(statusLine)")
        }
        return HTTPResponse(
            status: status, headers: head.split(separator: "\r\n").dropFirst().joined(separator: "\n"),
            body: String(text[split.upperBound...]))
    }
}

extension DaemonHarness {
    /// Runs `offstaged` with this harness's settings until it exits by itself; its status and what it printed.
    func runDaemonToExit(timeout: Double = 20) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = Self.products.appendingPathComponent("offstaged")
        process.arguments = [
            "--state-dir", stateDirectory, "--socket", socket, "--config", root.path + "/config.json",
            "--log-level", "error",
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        track(process.processIdentifier)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw HarnessError("offstaged did not exit within \(timeout) s")
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus, text)
    }
}
