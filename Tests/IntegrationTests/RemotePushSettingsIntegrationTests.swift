import Foundation
import OffstageDaemon
import OffstageProtocol
import Testing
import TestProcesses

/// A device told to take its pushes from an `offstage-push` gateway that is wrong or away (SPEC NT-5, decision
/// 0035): the daemon says what is wrong and the fix, and changes nothing it should not.
@Suite("Remote push gateway settings, bad and away (SPEC NT-5)", .serialized)
struct RemotePushSettingsIntegrationTests {
    static func settings(_ remote: [String: JSONValue]) -> [String: JSONValue] {
        var settings = DaemonHarness.fastTimings
        settings["push"] = .object(["remote": .object(remote)])
        return settings
    }

    @Test("NT-5: a remote gateway whose secret file cannot be read, or whose url is not an origin, stops the daemon at start with the setting named")
    func badSettingsStopTheDaemon() throws {
        let cases: [([String: JSONValue], String)] = [
            (["url": "https://push.example.net", "device": "phone-1", "secretFile": "/nonexistent/secret"], "push.remote.secretFile /nonexistent/secret"),
            (["url": "push.example.net", "device": "phone-1", "secretFile": "/nonexistent/secret"], "remote.url push.example.net"),
        ]
        for (remote, named) in cases {
            let harness = try DaemonHarness(settings: Self.settings(remote))
            defer { harness.tearDown() }
            let (status, output) = try harness.runDaemonToExit()
            #expect(status != 0)
            #expect(output.contains(named), "\(output)")
            // The daemon that could not start leaves no cgroup folder behind.
            let folder = "offstage." + OffstageDaemonService.instanceName(for: harness.stateDirectory)
            let mounts = CgroupMounts.current()
            for mount in [mounts.unified, mounts.freezer].compactMap({ $0 }) {
                #expect(!FileManager.default.fileExists(atPath: mount.mountPoint + "/" + folder), "\(mount.mountPoint)/\(folder)")
            }
        }
    }

    @Test("NT-5: with the gateway away, an app's registration fails naming it (the app tries again later), push-status says why the link is down, and the keys live at the gateway")
    func gatewayAway() throws {
        // A port nothing listens on.
        let socket = try FreePort.loopback()
        let settings = Self.settings([
            "url": .string("http://127.0.0.1:\(socket)"), "device": "phone-1", "secretFile": .string(NSTemporaryDirectory() + "offstage-secret-\(socket)"),
        ])
        try Data("s3cret\n".utf8).write(to: URL(fileURLWithPath: NSTemporaryDirectory() + "offstage-secret-\(socket)"))
        defer { try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "offstage-secret-\(socket)") }
        try withDaemon(settings: settings) { daemon in
            let status = try PushIntegrationTests.status(daemon)
            #expect(!status.gateway.embedded && status.gateway.address == "http://127.0.0.1:\(socket)")
            #expect(status.connectedDevices == 0)
            let linkError = try #require(status.gateway.linkError)
            #expect(!linkError.isEmpty)
            let text = try daemon.ok("push-status")
            #expect(text.contains("offstage-push") && text.contains("link down:"), "\(text)")

            try daemon.install("Messenger", id: PushIntegrationTests.messenger, ["UIBackgroundModes": ["remote-notification"]])
            try daemon.ok("open", PushIntegrationTests.messenger)
            try daemon.waitUntil("the messenger was told registration failed") {
                daemon.output(PushIntegrationTests.messenger).contains("could not register for remote notifications")
            }
            let said = daemon.output(PushIntegrationTests.messenger)
            #expect(said.contains("did not take the registration") && said.contains("127.0.0.1:\(socket)"), "\(said)")

            let keys = try daemon.cli(["push-keys", "add", "--team-id", "TEAM123456", "--generate", daemon.root.path + "/k.p8"])
            #expect(keys.status != 0)
            #expect(keys.stderr.contains("offstage-push keys"), "\(keys.stderr)")
            #expect(!FileManager.default.fileExists(atPath: daemon.root.path + "/k.p8"), "the unregistered private key is not left behind")
            let list = try daemon.cli(["push-keys", "list"])
            #expect(list.status != 0 && list.stderr.contains("offstage-push keys"), "\(list.stderr)")
        }
    }
}
