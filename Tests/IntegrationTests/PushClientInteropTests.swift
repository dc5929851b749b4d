import Foundation
import OffstageProtocol
import Testing

/// The daemon's gateway with a client nobody here wrote (SPEC NT-3): aioapns, a Python APNs library, talks TLS with
/// ALPN h2 and ES256 provider tokens to it exactly as it does to Apple, and its push wakes the frozen Messenger.
@Suite("Push from aioapns, a real APNs client (SPEC NT-3, NT-4)", .serialized)
struct PushClientInteropTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("TestProcesses/apns_client.py").path

    /// A throw-away certificate authority and a server certificate for localhost and 127.0.0.1, made with openssl.
    static func makeCertificates(in folder: String) throws {
        let script = """
            set -e
            cd '\(folder)'
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 2 \
              -subj '/CN=Offstage test CA' 2> /dev/null
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key -out server.csr \
              -subj '/CN=localhost' 2> /dev/null
            printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\nbasicConstraints=CA:FALSE\\nextendedKeyUsage=serverAuth\\n' > ext.cnf
            openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 \
              -extfile ext.cnf 2> /dev/null
            """
        let result = try run("/bin/sh", ["-c", script])
        guard result.status == 0 else { throw HarnessError("openssl failed: \(result.output)") }
    }

    /// Runs `executable` to its end with `environment` added to the test's; returns its status and its output and
    /// errors together.
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:]
    ) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, given in given }
        }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Sends with aioapns; returns its result object.
    static func aioapns(
        port: Int, folder: String, key: PushIntegrationTests.Key, token: String, payload: String, type: String, priority: Int
    ) throws -> [String: Any] {
        let result = try run(
            "/usr/bin/env",
            [
                "python3", script, "localhost", String(port), folder + "/ca.pem", key.path, key.id, "TEAM123456",
                PushIntegrationTests.messenger, token, payload, type, String(priority),
            ])
        let line = result.output.split(separator: "\n").last.map(String.init) ?? ""
        guard result.status == 0, let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw HarnessError("aioapns failed (\(result.status)): \(result.output)")
        }
        return object
    }

    @Test("NT-3, NT-4: aioapns sends a background push over TLS with its own ES256 token; the frozen messenger is woken and handles it")
    func aioapnsWakesFrozenApp() throws {
        let folder = NSTemporaryDirectory() + "offstage-tls-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.makeCertificates(in: folder)
        var settings = DaemonHarness.fastTimings
        settings["push"] = .object([
            "listen": .string("127.0.0.1:0"), "tlsCertificate": .string(folder + "/server.pem"),
            "tlsKey": .string(folder + "/server.key"),
        ])
        try withDaemon(settings: settings) { daemon in
            let key = try PushIntegrationTests.addKey(daemon)
            let token = try PushIntegrationTests.installAndRegister(daemon)
            let gateway = try PushIntegrationTests.status(daemon).gateway
            #expect(gateway.tls && gateway.address.hasPrefix("https://127.0.0.1:"))
            let port = try #require(Int(gateway.address.split(separator: ":").last ?? ""))
            try daemon.ok("home")
            try daemon.waitFor(PushIntegrationTests.messenger, "suspended")
            let sent = try Self.aioapns(
                port: port, folder: folder, key: key, token: token,
                payload: #"{"aps":{"content-available":1},"message":"m-7"}"#, type: "background", priority: 5)
            #expect(sent["successful"] as? Bool == true, "\(sent)")
            let id = try #require(sent["id"] as? String)
            let record = try PushIntegrationTests.record(daemon, id)
            #expect(record.outcome == "handled" && record.detail == "newData")
            #expect(daemon.output(PushIntegrationTests.messenger).contains("fetched m-7 after push \(id)"))

            // Its refusals are APNs's: a token that names nothing.
            let refused = try Self.aioapns(
                port: port, folder: folder, key: key, token: String(repeating: "0", count: 64),
                payload: #"{"aps":{"alert":"hi"}}"#, type: "alert", priority: 10)
            #expect(refused["successful"] as? Bool == false)
            #expect(refused["status"] as? String == "400" && refused["description"] as? String == "BadDeviceToken", "\(refused)")
        }
    }
}
