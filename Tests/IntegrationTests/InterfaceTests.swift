import Foundation
import OffstageProtocol
import Testing

/// Bad input on every interface gets a clear error and changes nothing; identity comes from the connection.
@Suite("Interfaces: identity and bad input on the real daemon", .serialized)
struct InterfaceTests {
    static let a = "com.example.a"
    static let b = "com.example.b"

    @Test("Security: an app cannot end another app's task, nor act as the user; a stranger is not an app")
    func identityComesFromTheConnection() throws {
        try withDaemon { daemon in
            try daemon.install("FiniteTask", id: Self.a)
            try daemon.install("FiniteTask", id: Self.b)
            try daemon.ok("open", Self.a)
            try daemon.waitFor(Self.a, "active")
            try daemon.ok("open", Self.b)  // A goes to the background and begins its task
            try daemon.waitFor(Self.b, "active")
            try daemon.waitUntil("A's task is open") { try daemon.app(Self.a).backgroundTasks == 1 }
            let began = try #require(try daemon.log(Self.a).last { $0.kind == "taskBegin" }?.message)
            let task = try #require(Int(began.split(separator: " ")[1]))
            let replies = try daemon.callAsApp(
                Self.b,
                [
                    ("io.offstage.App.EndBackgroundTask", ["id": task]),
                    ("io.offstage.Control.ForceQuit", ["id": Self.a]),
                ])
            let ended = (replies[0]["parameters"] as? [String: Any])?["ended"] as? Bool
            #expect(ended == false, "B cannot end A's task: \(replies[0])")
            #expect(replies[1]["error"] as? String == "org.varlink.service.PermissionDenied")
            #expect(try daemon.app(Self.a).backgroundTasks == 1)
            #expect(try daemon.app(Self.a).pid != nil)
            // The test process belongs to no app.
            let client = try RawClient(path: daemon.socket)
            defer { client.close() }
            let reply = try client.call("io.offstage.App.BeginBackgroundTask", ["name": "spoof"])
            #expect(reply["error"] as? String == "io.offstage.App.NotAnApp")
        }
    }

    @Test("Bad input: malformed JSON, unknown method, wrong types and oversized messages change nothing")
    func malformedMessages() throws {
        try withDaemon { daemon in
            try daemon.install("FiniteTask", id: Self.a)
            let before = try daemon.ok("--json", "apps")

            let garbage = try RawClient(path: daemon.socket)
            garbage.send("{this is not json")
            #expect(garbage.receive()?["error"] as? String == "io.offstage.Protocol.MalformedMessage")
            #expect(garbage.isClosedByPeer())
            garbage.close()

            let client = try RawClient(path: daemon.socket)
            defer { client.close() }
            #expect(try client.call("io.offstage.Control.Teleport")["error"] as? String == "org.varlink.service.MethodNotFound")
            #expect(try client.call("com.example.Nope.Call")["error"] as? String == "org.varlink.service.InterfaceNotFound")
            let wrongType = try client.call("io.offstage.Control.Open", ["id": 42])
            #expect(wrongType["error"] as? String == "org.varlink.service.InvalidParameter")
            #expect((wrongType["parameters"] as? [String: Any])?["parameter"] as? String == "id")
            let badID = try client.call("io.offstage.Control.Open", ["id": "../../etc"])
            #expect(badID["error"] as? String == "io.offstage.Control.InvalidArgument")
            let missing = try client.call("io.offstage.Control.Open", ["id": "com.example.missing"])
            #expect(missing["error"] as? String == "io.offstage.Control.AppNotInstalled")
            #expect(((missing["parameters"] as? [String: Any])?["fix"] as? String)?.contains("offstage install") == true)
            let badResolution = try client.call("io.offstage.Control.Interrupt", ["resolution": "maybe"])
            #expect(badResolution["error"] as? String == "org.varlink.service.InvalidParameter")
            let badSetting = try client.call("io.offstage.Control.SetSettings", ["changes": ["multitasking": "sometimes"]])
            #expect(badSetting["error"] as? String == "io.offstage.Control.InvalidArgument")

            let huge = try RawClient(path: daemon.socket)
            huge.send(#"{"method":"io.offstage.Control.Open","parameters":{"id":""# + String(repeating: "x", count: 2 << 20) + #""}}"#)
            #expect(huge.receive()?["error"] as? String == "io.offstage.Protocol.MessageTooLarge")
            huge.close()

            #expect(try daemon.ok("--json", "apps") == before, "nothing changed")
            #expect(try daemon.app(Self.a).state == "notRunning")
        }
    }

    @Test("MAN-2: bad bundles are refused naming the file, the key and the fix; nothing is half-installed")
    func badBundlesAreRefused() throws {
        try withDaemon { daemon in
            let good = try daemon.bundle("FiniteTask", id: Self.a)
            var cases: [(String, [String: Any], String)] = [
                ("missing id", ["CFBundleIdentifier": ""], "CFBundleIdentifier"),
                ("unknown mode", ["UIBackgroundModes": ["teleport"]], "unknown mode 'teleport'"),
                ("wrong type", ["UIApplicationExitsOnSuspend": "yes"], "UIApplicationExitsOnSuspend"),
                ("missing executable", ["CFBundleExecutable": "Nope"], "does not exist"),
            ]
            cases.append(("not executable", ["CFBundleExecutable": "Info.plist"], "not an executable file"))
            for (name, keys, expected) in cases {
                let folder = try daemon.bundle("FiniteTask", id: "bad-\(name.replacingOccurrences(of: " ", with: "-"))", keys)
                let output = try daemon.cli(["install", folder])
                #expect(output.status == 4, "\(name): \(output.stderr)")
                #expect(output.stderr.contains(expected), "\(name): \(output.stderr)")
                #expect(output.stderr.contains("Info.plist"), "names the file: \(output.stderr)")
                #expect(output.stderr.split(separator: "\n").count == 1, "one line")
            }
            let notAFolder = try daemon.cli(["install", "/nonexistent/bundle"])
            #expect(notAFolder.status == 4 && notAFolder.stderr.contains("not a bundle folder"))
            #expect(try daemon.apps().isEmpty)
            let stored = (try? FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory + "/bundles")) ?? []
            #expect(stored.isEmpty, "nothing half-installed: \(stored)")
            try daemon.ok("install", good)
            #expect(try daemon.apps().map(\.id) == [Self.a])
        }
    }

    @Test("MAN-3: an upgrade keeps settings; uninstall removes the bundle, data folder and output")
    func upgradeAndUninstall() throws {
        try withDaemon { daemon in
            try daemon.install("ExitsOnSuspend", id: Self.a, ["UIApplicationExitsOnSuspend": true])
            try daemon.ok("settings", "--app", Self.a, "background-refresh=off")
            try daemon.ok("open", Self.a)
            try daemon.waitFor(Self.a, "active")
            let upgraded = try daemon.ok("install", try daemon.bundle("ExitsOnSuspend", id: Self.a, ["UIBackgroundModes": ["fetch"]]))
            #expect(upgraded.contains("upgraded"))
            try daemon.waitFor(Self.a, "notRunning")
            #expect(try daemon.app(Self.a).lastTermination?.contains("upgraded") == true)
            #expect(try daemon.app(Self.a).backgroundModes == ["fetch"])
            let settings = try daemon.ok("--json", "settings", "--app", Self.a)
            #expect(settings.contains(#""name" : "background-refresh""#))
            let line = try daemon.ok("settings", "--app", Self.a).split(separator: "\n").first { $0.hasPrefix("background-refresh ") }
            #expect(line?.split(separator: " ").dropFirst().first == "off", "\(line ?? "")")
            let data = daemon.stateDirectory + "/data/" + Self.a
            #expect(FileManager.default.fileExists(atPath: data + "/state.json"), "the app saved state")
            try daemon.waitUntil("one installed folder is left after the upgrade") { (try? daemon.installedBundle(Self.a)) != nil }
            try daemon.ok("uninstall", Self.a)
            #expect(try daemon.apps().isEmpty)
            #expect(!FileManager.default.fileExists(atPath: data))
            #expect(try FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory + "/bundles").isEmpty)
            #expect(!FileManager.default.fileExists(atPath: daemon.stateDirectory + "/logs/\(Self.a).log"))
        }
    }
}
