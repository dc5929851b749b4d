import Foundation
import OffstageBenchKit
import OffstagePush

/// The multi-device gateway as the push cluster benchmarks run it (SPEC NT-5, decision 0036): a private PostgreSQL
/// (``PostgresFixture``), `offstage-push` nodes n1, n2, … over it, h2c on 127.0.0.1 at free ports, a provider key for
/// any app (generated here, registered with `offstage-push keys add`), and one device enrolled with `offstage-push
/// devices add`. ``linkedDaemon(settings:)`` starts a real `offstaged` linked to the nodes as that device (trying n1
/// first), as `push.remote` in its configuration file links a phone. Everything started is ended by pid in
/// ``tearDown()``, and the folders are removed.
final class PushClusterFixture: @unchecked Sendable {  // driven from one thread
    static let device = "bench-phone"
    static let keyID = "BENCHKEY02"
    static let teamID = "TEAM123456"

    let folder: String
    let postgres: PostgresFixture
    let database: String
    let credentials: APNsProviderClient.Configuration.Credentials
    /// The nodes' processes (nil while killed) and ports, by index: node `index` is `n\(index + 1)`.
    private(set) var nodes: [ChildProcess?] = []
    private(set) var ports: [Int] = []
    private(set) var daemon: DaemonFixture?

    /// Starts PostgreSQL with `postgresSettings`, registers the key, enrolls the device and starts `count` nodes.
    init(nodes count: Int, postgresSettings: [String: String] = [:]) throws {
        var template = Array("/tmp/offstage-bench-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!).map { String(cString: $0) } }) else {
            throw SystemCallError("mkdtemp")
        }
        folder = made
        do {
            postgres = try PostgresFixture(settings: postgresSettings)
        } catch {
            try? FileManager.default.removeItem(atPath: folder)
            throw error
        }
        database = "postgres://\(PostgresFixture.user)@127.0.0.1:\(postgres.port)/offstage_push"
        let pair = ProviderKeyPair.generate()
        credentials = .init(keyID: Self.keyID, teamID: Self.teamID, privateKeyPEM: pair.privateKeyPEM)
        do {
            _ = try postgres.createDatabase("offstage_push")
            try pair.publicKeyPEM.write(toFile: folder + "/provider.pub", atomically: true, encoding: .utf8)
            try admin(["keys", "add", "--id", Self.keyID, "--team", Self.teamID, "--public-key", folder + "/provider.pub"])
            let enrolled = try admin(["devices", "add", Self.device, "--json"])
            guard let line = enrolled.split(separator: "\n").last(where: { $0.hasPrefix("{") }),
                let secret = try JSONDecoder().decode([String: String].self, from: Data(line.utf8))["secret"]
            else { throw BenchError("offstage-push devices add printed no secret: \(enrolled)") }
            try secret.write(toFile: folder + "/device-secret", atomically: true, encoding: .utf8)
            for index in 0..<count { try startNode(index) }
        } catch {
            tearDown()
            throw error
        }
    }

    /// Node `index`'s origin.
    func origin(_ index: Int) -> String { "http://127.0.0.1:\(ports[index])" }

    /// Starts a daemon linked to the nodes as the enrolled device, with `settings` besides, and waits until its link
    /// is up on node n1.
    func linkedDaemon(settings: [String: Any] = [:]) throws -> DaemonFixture {
        var all = settings
        all["push"] = [
            "remote": [
                "url": origin(0), "device": Self.device, "secretFile": folder + "/device-secret",
                "nodes": ports.indices.map(origin),
            ]
        ]
        let daemon = try DaemonFixture(settings: all)
        self.daemon = daemon
        try daemon.start()
        try waitUntil("the device's link is up on n1", seconds: 30) { try self.device().node == "n1" }
        return daemon
    }

    /// Starts node `index` (n1, n2, …), on its old port when it had one, and waits for its listening line.
    func startNode(_ index: Int) throws {
        let name = "n\(index + 1)"
        let output = folder + "/\(name).log"
        let offset = (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
        let process = try ChildProcess(
            try Products.path("offstage-push"),
            ["serve", "--database", database, "--listen", "127.0.0.1:\(index < ports.count ? ports[index] : 0)", "--node", name],
            outputPath: output)
        let deadline = MonotonicClock.now() + 60_000_000_000
        var port: Int?
        while port == nil, process.isRunning, MonotonicClock.now() < deadline {
            let text = String(decoding: (FileManager.default.contents(atPath: output) ?? Data()).dropFirst(offset), as: UTF8.self)
            port = text.split(separator: "\n").first { $0.contains("listening on") }.flatMap { Int($0.split(separator: ":").last ?? "") }
            if port == nil { MonotonicClock.sleep(milliseconds: 20) }
        }
        guard let port else {
            process.stop(grace: 2)
            throw BenchError("node \(name) did not start; see \(output)")
        }
        if index < nodes.count {
            nodes[index] = process
        } else {
            nodes.append(process)
            ports.append(port)
        }
    }

    /// kill -9 of node `index`, then reaps it.
    func kill(_ index: Int) {
        nodes[index]?.signal(SIGKILL)
        nodes[index]?.wait(seconds: 10)
        nodes[index] = nil
    }

    /// CPU time of the running nodes so far, ns.
    func nodesCPU() -> UInt64 {
        nodes.compactMap { $0 }.reduce(0) { $0 + (MonotonicClock.processCPU($1.pid) ?? 0) }
    }

    /// The device as `offstage-push status --json` shows it: the node holding its link, and its stored pushes.
    func device() throws -> (node: String?, stored: Int) {
        let text = try admin(["status", "--json", "--records", "0"])
        guard let line = text.split(separator: "\n").last(where: { $0.hasPrefix("{") }),
            let status = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let devices = status["devices"] as? [[String: Any]],
            let device = devices.first(where: { $0["name"] as? String == Self.device })
        else { throw BenchError("offstage-push status --json did not list \(Self.device): \(text.suffix(500))") }
        return (device["connectedNode"] as? String, device["storedPushes"] as? Int ?? -1)
    }

    /// Runs an admin verb of `offstage-push` on the database to its end and returns what it printed.
    @discardableResult
    func admin(_ arguments: [String]) throws -> String {
        let output = folder + "/admin.out"
        try? FileManager.default.removeItem(atPath: output)
        let process = try ChildProcess(try Products.path("offstage-push"), arguments + ["--database", database], outputPath: output)
        if !process.wait(seconds: 60) { process.stop(grace: 2) }
        let said = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard process.exitCode == 0 else {
            throw BenchError("offstage-push \(arguments.joined(separator: " ")) failed (\(process.exitCode ?? -1)): \(said.suffix(1500))")
        }
        return said
    }

    /// Polls `condition` every 50 ms until it holds; throws naming `what` after `seconds`.
    func waitUntil(_ what: String, seconds: Double, _ condition: () throws -> Bool) throws {
        let deadline = MonotonicClock.now() + UInt64(seconds * 1e9)
        while MonotonicClock.now() < deadline {
            if (try? condition()) == true { return }
            MonotonicClock.sleep(milliseconds: 50)
        }
        throw BenchError("\(what) did not happen within \(Int(seconds)) s; see \(folder)")
    }

    /// Stops the daemon, the nodes (SIGTERM, then SIGKILL after 5 s) and PostgreSQL, and removes the folders.
    func tearDown() {
        if let daemon {
            daemon.daemon?.signal(SIGCONT)
            daemon.tearDown()
        }
        for node in nodes { node?.stop(grace: 5) }
        postgres.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }
}
