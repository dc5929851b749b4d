import Foundation
import Glibc
import OffstageProtocol
import TestProcesses

/// A multi-device push gateway for the integration tests (SPEC NT-5): a private PostgreSQL, three `offstage-push`
/// nodes over it with TLS (a throw-away CA made with openssl), a provider key for the messenger, and one enrolled
/// device. It ends exactly the processes it started, by pid.
final class PushClusterHarness: @unchecked Sendable {  // set up in init, then only nodes restart (by one test)
    static let program = DaemonHarness.products.appendingPathComponent("offstage-push").path
    static let keyID = "KEYC1USTER"
    static let teamID = "TEAM123456"
    static let device = "phone-1"

    let folder: String
    let postgres: PostgresServer
    private(set) var database = ""
    /// The device's secret, as `devices add` printed it.
    private(set) var secret = ""
    /// The nodes, by index: their processes and the ports they listen on.
    private(set) var nodes: [SpawnedProcess] = []
    private(set) var ports: [Int] = []

    /// Starts PostgreSQL, registers the key and enrolls the device, then starts `count` nodes.
    init(nodes count: Int = 3) throws {
        folder = NSTemporaryDirectory() + "offstage-cluster-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        postgres = try PostgresServer.start()
        do {
            database = try postgres.createDatabase("offstage_push")
            try PushClientInteropTests.makeCertificates(in: folder)
            let openssl = try PushClientInteropTests.run(
                "/bin/sh",
                [
                    "-c",
                    "cd '\(folder)' && openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out push.p8 2> /dev/null && openssl pkey -in push.p8 -pubout -out push.pub",
                ])
            guard openssl.status == 0 else { throw HarnessError("openssl could not make the provider key: \(openssl.output)") }
            _ = try run(
                ["keys", "add", "--id", Self.keyID, "--team", Self.teamID, "--public-key", folder + "/push.pub", "--topic",
                 PushIntegrationTests.messenger])
            let enrolled = try run(["devices", "add", Self.device, "--json"])
            guard let secret = try JSONDecoder().decode([String: String].self, from: Data(enrolled.utf8))["secret"] else {
                throw HarnessError("devices add printed no secret: \(enrolled)")
            }
            self.secret = secret
            try secret.write(toFile: folder + "/device-secret", atomically: true, encoding: .utf8)
            for index in 0..<count { try startNode(index) }
        } catch {
            tearDown()
            throw error
        }
    }

    /// The provider key, as the push tests use it.
    var key: PushIntegrationTests.Key { PushIntegrationTests.Key(path: folder + "/push.p8", id: Self.keyID) }

    /// The origin of node `index`, by the certificate's name.
    func origin(_ index: Int) -> String { "https://localhost:\(ports[index])" }

    /// The daemon's `push` settings for a device linked to the cluster: `url` (where app servers send, and Web Push
    /// endpoints point) is node `public`, and the device tries the nodes in order.
    func remoteSettings(public index: Int = 1) -> JSONValue {
        let nodes: [JSONValue] = ports.indices.map { JSONValue.string(origin($0)) }
        let remote: [String: JSONValue] = [
            "url": .string(origin(index)), "device": .string(Self.device), "secretFile": .string(folder + "/device-secret"),
            "trustRoots": .string(folder + "/ca.pem"), "nodes": .array(nodes),
        ]
        return .object(["remote": .object(remote)])
    }

    /// Runs an admin verb of `offstage-push` to its end and returns what it printed; throws with its errors when it
    /// fails.
    @discardableResult
    func run(_ arguments: [String]) throws -> String {
        let result = try PushClientInteropTests.run(Self.program, arguments + ["--database", database])
        guard result.status == 0 else {
            throw HarnessError("offstage-push \(arguments.joined(separator: " ")) failed (\(result.status)): \(result.output)")
        }
        return result.output
    }

    /// Starts node `index` (n1, n2, …) on a free port with TLS and waits for its listening line.
    func startNode(_ index: Int) throws {
        let out = folder + "/n\(index + 1).out"
        let process = try SpawnedProcess(
            Self.program,
            [
                "serve", "--database", database, "--listen", "127.0.0.1:\(index < ports.count ? ports[index] : 0)",
                "--node", "n\(index + 1)", "--tls-certificate", folder + "/server.pem", "--tls-key", folder + "/server.key",
            ], output: out, errors: folder + "/n\(index + 1).err", truncate: true)
        let deadline = Date().addingTimeInterval(60)
        var line: String?
        while line == nil, process.isRunning, Date() < deadline {
            line = ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n")
                .first { $0.contains("listening on") }.map(String.init)
            if line == nil { usleep(20_000) }
        }
        guard let line, let port = Int(line.split(separator: ":").last ?? "") else {
            process.terminate()
            throw HarnessError("node n\(index + 1) did not start: \((try? String(contentsOfFile: folder + "/n\(index + 1).err", encoding: .utf8)) ?? "")")
        }
        if index < nodes.count {
            nodes[index] = process
        } else {
            nodes.append(process)
            ports.append(port)
        }
    }

    /// Kills node `index` with SIGKILL and waits for it to be gone.
    func kill(_ index: Int) {
        Glibc.kill(nodes[index].pid, SIGKILL)
        nodes[index].wait()
    }

    /// What `offstage-push status --json` says.
    func status() throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(run(["status", "--json"]).utf8)) as? [String: Any] ?? [:]
    }

    /// Ends the nodes (SIGTERM, then SIGKILL after a grace), PostgreSQL, and removes the folder.
    func tearDown() {
        for node in nodes where node.isRunning { node.terminate() }
        postgres.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }
}
