import Foundation
import Glibc
import OffstagePush
import OffstagePushService
import Testing
import TestProcesses

/// The real `offstage-push` program: its verbs, its errors, and a node serving an app server and a device (SPEC
/// NT-3, NT-5). Every process a test starts, it ends by pid.
@Suite(.postgres)
struct CommandLineTests {
    typealias S = PostgresSuite

    /// Where the built executables are (beside the test bundle).
    static let program = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        .appendingPathComponent("offstage-push").path

    /// What a finished run printed, and how it exited.
    struct Run {
        var code: Int32
        var output: String
        var errors: String
    }

    /// Runs `offstage-push arguments` to its end (at most 60 s), in a temporary folder it removes.
    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Run {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offstage-push-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var variables = ProcessInfo.processInfo.environment
        variables["OFFSTAGE_PUSH_DATABASE"] = nil
        variables.merge(environment) { _, given in given }
        let process = try SpawnedProcess(
            program, arguments, environment: variables, output: folder + "/out", errors: folder + "/err")
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        if process.isRunning { process.terminate() }
        let read = { (name: String) in (try? String(contentsOfFile: folder + "/" + name, encoding: .utf8)) ?? "" }
        return Run(code: process.exitCode(), output: read("out"), errors: read("err"))
    }

    @Test("every verb explains itself with --help (NT-5)")
    func help() throws {
        for verb in [[], ["serve"], ["migrate"], ["keys", "add"], ["keys", "list"], ["keys", "remove"], ["devices", "add"],
            ["devices", "list"], ["devices", "remove"], ["status"]]
        {
            let run = try Self.run(verb + ["--help"])
            #expect(run.code == 0, "\(verb)")
            #expect(run.output.contains("USAGE: offstage-push"), "\(verb)")
            if !verb.isEmpty { #expect(run.output.contains("--json") && run.output.contains("--database"), "\(verb)") }
        }
    }

    @Test("devices add --json prints the new secret once, and the device authenticates with it (NT-5)")
    func enrollPrintsTheSecret() async throws {
        let database = try S.database()
        let url = "postgres://\(database.user)@\(database.host):\(database.port)/\(database.database)"
        let run = try Self.run(["devices", "add", "phone-1", "--json"], environment: ["OFFSTAGE_PUSH_DATABASE": url])
        #expect(run.code == 0, "\(run.errors)")
        let printed = try JSONDecoder().decode([String: String].self, from: Data(run.output.utf8))
        #expect(printed["device"] == "phone-1")
        let secret = try #require(printed["secret"])
        let authenticated = try await S.withStore(database) { store in
            try await store.authenticate(device: "phone-1", secret: secret)
        }
        #expect(authenticated)
        let list = try Self.run(["devices", "list", "--json", "--database", url])
        #expect(list.code == 0)
        #expect(list.output.contains("\"name\":\"phone-1\"") && !list.output.contains(secret))
    }

    @Test("an unreachable database is named, with the fix (NT-5)")
    func unreachableDatabase() throws {
        // A port nothing listens on: the suite's server's, plus one, is not promised free, so use a closed one.
        let url = "postgres://offstage@127.0.0.1:1/offstage"
        let run = try Self.run(["status", "--database", url])
        #expect(run.code == 1)
        #expect(run.errors.contains(url) && run.errors.contains("start PostgreSQL or fix --database"), "\(run.errors)")
        let json = try Self.run(["keys", "list", "--json", "--database", url])
        #expect(json.code == 1 && json.errors.hasPrefix("{\"error\":"), "\(json.errors)")
        let missing = try Self.run(["status"])
        #expect(missing.code == 1 && missing.errors.contains("OFFSTAGE_PUSH_DATABASE"), "\(missing.errors)")
        let bad = try Self.run(["status", "--database", "mysql://x@y/z"])
        #expect(bad.code == 1 && bad.errors.contains("postgres://"), "\(bad.errors)")
    }

    @Test("a served node takes a push from an app server and the device pulls it (NT-3, NT-5)")
    func servedNodeCarriesAPush() async throws {
        let database = try S.database()
        let url = "postgres://\(database.user)@\(database.host):\(database.port)/\(database.database)"
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("offstage-push-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let keys = ProviderKeyPair.generate()
        try keys.publicKeyPEM.write(toFile: folder + "/key.pem", atomically: true, encoding: .utf8)
        let added = try Self.run(
            ["keys", "add", "--id", "ABC123DEFG", "--team", "TEAM123456", "--public-key", folder + "/key.pem", "--topic", "com.example.news",
             "--database", url])
        #expect(added.code == 0, "\(added.errors)")
        let enrolled = try Self.run(["devices", "add", "phone-1", "--json", "--database", url])
        let secret = try #require(try JSONDecoder().decode([String: String].self, from: Data(enrolled.output.utf8))["secret"])

        let node = try SpawnedProcess(
            Self.program, ["serve", "--database", url, "--listen", "127.0.0.1:0", "--node", "n1"], output: folder + "/serve.out",
            errors: folder + "/serve.err")
        defer { node.terminate() }
        let line = S.waitForLine(in: folder + "/serve.out", timeout: .seconds(60)) { !node.isRunning }
        let served = try #require(
            line, "serve printed no line: \((try? String(contentsOfFile: folder + "/serve.err", encoding: .utf8)) ?? "")")
        #expect(served.hasPrefix("offstage-push node n1 listening on http://127.0.0.1:"))
        let origin = String(served.split(separator: " ").last ?? "")
        let port = try #require(Int(origin.split(separator: ":").last ?? ""))

        let device = try await DeviceLinkClient.connect(.init(url: origin, device: "phone-1", secret: secret))
        let token = S.newToken()
        try await device.register(DeviceRegistrations(tokens: [.init(token: token, app: "com.example.news")]))
        let appServer = try await APNsProviderClient.connect(
            .init(host: "127.0.0.1", port: port, credentials: .init(keyID: "ABC123DEFG", teamID: "TEAM123456", privateKeyPEM: keys.privateKeyPEM)))
        let response = try await appServer.send(
            APNsNotification(deviceToken: token, topic: "com.example.news", payload: Data(#"{"aps":{"alert":"hi"}}"#.utf8)))
        await appServer.close()
        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        let batch = try await device.pull(acknowledging: [], waitSeconds: 5)
        #expect(batch.map(\.apnsID) == [response.apnsID].compactMap { $0 })
        #expect(batch.first?.payload == Data(#"{"aps":{"alert":"hi"}}"#.utf8))
        #expect(try await device.pull(acknowledging: batch.map(\.delivery), waitSeconds: 0).isEmpty)
        await device.close()

        // SIGTERM: a graceful exit, and the node's links are gone.
        kill(node.pid, SIGTERM)
        let deadline = Date().addingTimeInterval(30)
        while node.isRunning, Date() < deadline { usleep(10_000) }
        #expect(!node.isRunning)
        #expect(node.exitCode() == 0)
        let status = try Self.run(["status", "--json", "--database", url])
        #expect(status.output.contains("\"storedPushes\":0") && !status.output.contains("\"connectedNode\""), "\(status.output)")
    }
}

extension PostgresSuite {
    /// The first line of the file at `path` once it is complete, or nil after `timeout` or once `gaveUp` holds.
    static func waitForLine(in path: String, timeout: Duration, gaveUp: () -> Bool) -> String? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            if let end = text.firstIndex(of: "\n") { return String(text[..<end]) }
            if gaveUp() { return nil }
            usleep(10_000)
        }
        return nil
    }
}
