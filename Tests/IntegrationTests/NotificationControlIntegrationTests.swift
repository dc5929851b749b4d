import Foundation
import OffstageProtocol
import Testing

/// The user's side of local notifications on the real daemon (SPEC NT-1, NT-2, CLI-2), through the control interfaces
/// with a raw client and with the Python `varlink` client (its own IDL parser reads our interface descriptions).
@Suite("Notifications: the control interface on the real daemon", .serialized)
struct NotificationControlIntegrationTests {
    static let app = "com.example.alarm"

    /// The reply's parameters, or its error name.
    static func parameters(_ reply: [String: Any]) throws -> [String: Any] {
        if let error = reply["error"] as? String { throw HarnessError("unexpected \(error): \(reply)") }
        return reply["parameters"] as? [String: Any] ?? [:]
    }

    /// `Notifications` as JSON text with sorted keys, to compare replies before and after.
    static func snapshot(_ client: RawClient) throws -> String {
        let reply = try parameters(try client.call(NotificationsControlInterface.Method.notifications))
        return String(decoding: try JSONSerialization.data(withJSONObject: reply, options: [.sortedKeys]), as: UTF8.self)
    }

    @Test("NT-2, CLI-2: an empty daemon has no pending or delivered notifications and no badges, and names its time zone")
    func emptyDaemon() throws {
        try withDaemon { daemon in
            let client = try RawClient(path: daemon.socket)
            defer { client.close() }
            let reply = try Self.parameters(try client.call(NotificationsControlInterface.Method.notifications))
            #expect(Set(reply.keys) == ["pending", "delivered", "badges", "timeZone"])
            #expect((reply["pending"] as? [Any])?.isEmpty == true)
            #expect((reply["delivered"] as? [Any])?.isEmpty == true)
            #expect((reply["badges"] as? [Any])?.isEmpty == true)
            let zone = try #require(reply["timeZone"] as? String)
            #expect(TimeZone(identifier: zone) != nil, "\(zone)")
            // The device's zone, as GetDevice shows it.
            let device = try Self.parameters(try client.call(ControlInterface.Method.getDevice))
            #expect(device["timeZone"] as? String == zone)
        }
    }

    @Test("NT-2: tapping or clearing what does not exist is refused with the right error and changes nothing")
    func unknownAppOrIdentifier() throws {
        try withDaemon { daemon in
            try daemon.install("FiniteTask", id: Self.app)
            let client = try RawClient(path: daemon.socket)
            defer { client.close() }
            let before = try Self.snapshot(client)
            let apps = try daemon.ok("--json", "apps")
            let interface = NotificationsControlInterface.self
            let cases: [(String, [String: Any], String, String)] = [
                (interface.Method.tap, ["app": "com.example.nope", "identifier": "a"], "AppNotInstalled", "offstage install"),
                (interface.Method.tap, ["app": Self.app, "identifier": "never-delivered"], "NoSuchNotification", "offstage notifications"),
                (interface.Method.tap, ["app": "not an id!", "identifier": "a"], "InvalidArgument", "CFBundleIdentifier"),
                (interface.Method.clear, ["app": "com.example.nope"], "AppNotInstalled", "offstage install"),
                (interface.Method.clear, ["app": Self.app, "identifiers": ["never-delivered"]], "NoSuchNotification", "offstage notifications"),
                (interface.Method.clear, ["identifiers": ["a"]], "InvalidArgument", "name the app"),
                (interface.Method.notifications, ["app": "com.example.nope"], "AppNotInstalled", "offstage install"),
            ]
            for (method, parameters, error, fix) in cases {
                let reply = try client.call(method, parameters)
                #expect(reply["error"] as? String == "\(interface.name).\(error)", "\(method) \(parameters): \(reply)")
                let details = reply["parameters"] as? [String: Any]
                #expect((details?["fix"] as? String)?.contains(fix) == true, "\(method) \(parameters): \(reply)")
                let message = details?["message"] as? String
                #expect(message?.isEmpty == false, "\(reply)")
            }
            let missing = try client.call(interface.Method.tap, ["app": Self.app])
            #expect(missing["error"] as? String == "org.varlink.service.InvalidParameter")
            // Clearing nothing at all is not an error: there was nothing to clear.
            #expect(try Self.parameters(try client.call(interface.Method.clear, [:]))["removed"] as? Int == 0)
            #expect(try Self.parameters(try client.call(interface.Method.clear, ["app": Self.app]))["removed"] as? Int == 0)
            #expect(try Self.snapshot(client) == before)
            #expect(try daemon.ok("--json", "apps") == apps)
            #expect(try daemon.app(Self.app).state == "notRunning", "a refused tap launches nothing")
        }
    }

    @Test("NT-1: an unknown time zone is refused naming it and the fix; a good one is kept across a daemon restart")
    func deviceTimeZone() throws {
        let harness = try DaemonHarness()
        defer { harness.tearDown() }
        try harness.start()
        var client = try RawClient(path: harness.socket)
        let before = try Self.parameters(try client.call(ControlInterface.Method.getDevice))
        let refused = try client.call(ControlInterface.Method.setDevice, ["timeZone": "Mars/Olympus", "lowPowerMode": true])
        #expect(refused["error"] as? String == "io.offstage.Control.InvalidArgument", "\(refused)")
        let details = refused["parameters"] as? [String: Any]
        #expect((details?["message"] as? String)?.contains("'Mars/Olympus' is not a time zone") == true)
        #expect((details?["fix"] as? String)?.contains("IANA") == true)
        let after = try Self.parameters(try client.call(ControlInterface.Method.getDevice))
        #expect(NSDictionary(dictionary: after) == NSDictionary(dictionary: before), "nothing changed, low power mode included")

        let set = try Self.parameters(try client.call(ControlInterface.Method.setDevice, ["timeZone": "Asia/Tokyo"]))
        #expect(set["timeZone"] as? String == "Asia/Tokyo")
        #expect(try Self.parameters(try client.call(NotificationsControlInterface.Method.notifications))["timeZone"] as? String == "Asia/Tokyo")
        client.close()
        harness.stop()
        try harness.start()
        client = try RawClient(path: harness.socket)
        defer { client.close() }
        #expect(try Self.parameters(try client.call(ControlInterface.Method.getDevice))["timeZone"] as? String == "Asia/Tokyo")
        #expect(try Self.parameters(try client.call(NotificationsControlInterface.Method.notifications))["timeZone"] as? String == "Asia/Tokyo")
    }

    @Test(
        "NT-2: the Python varlink client reads both notification interfaces with its own parser and calls them",
        .enabled(if: PythonVarlink.isAvailable, "the Python varlink package is not importable: pip install varlink"))
    func pythonClient() throws {
        try withDaemon { daemon in
            let address = "unix:\(daemon.socket)"
            for interface in [NotificationsInterface.name, NotificationsControlInterface.name] {
                let help = try PythonVarlink.cli(["help", "\(address)/\(interface)"])
                #expect(help.contains("interface \(interface)"), "\(help)")
            }
            let text = try PythonVarlink.cli(["call", "\(address)/\(NotificationsControlInterface.Method.notifications)", "{}"])
            let reply = try JSONDecoder().decode(NotificationsControlInterface.NotificationsReply.self, from: Data(text.utf8))
            #expect(reply.pending.isEmpty && reply.delivered.isEmpty && reply.badges.isEmpty)
            // The test process is no app: the app's interface refuses it, naming the fix.
            let notAnApp = try PythonVarlink.run([
                "-m", "varlink.cli", "call", "\(address)/\(NotificationsInterface.Method.pending)", "{}",
            ])
            #expect((notAnApp.output + notAnApp.error).contains("io.offstage.Notifications.NotAnApp"))
        }
    }
}

/// `python3 -m varlink.cli`, a Varlink client nobody here wrote.
enum PythonVarlink {
    static let isAvailable: Bool = (try? run(["-c", "import varlink"]).status) == 0

    static func run(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let (output, error) = (Pipe(), Pipe())
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // The replies are small: reading one pipe to its end cannot leave the other full.
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    static func cli(_ arguments: [String]) throws -> String {
        let result = try run(["-m", "varlink.cli"] + arguments)
        guard result.status == 0 else { throw HarnessError("varlink.cli \(arguments): \(result.error)\(result.output)") }
        return result.output
    }
}
