import Foundation
import OffstageProtocol
import Testing

/// Pushes through the daemon's own gateway to the real `Messenger` example, sent with `offstage push` exactly as an
/// app server sends them: over HTTP/2 (h2c on loopback) with an ES256 provider token (SPEC NT-3, NT-4, NT-5).
@Suite("Push on the real daemon (SPEC NT-3, NT-4, NT-5)", .serialized)
struct PushIntegrationTests {
    static let messenger = "com.example.messenger"

    /// A provider key made by the CLI and registered for the messenger.
    struct Key {
        let path: String
        let id: String
        var arguments: [String] { ["--key", path, "--key-id", id, "--team-id", "TEAM123456"] }
    }

    /// Registers a new provider key for the messenger; the private half is written in the harness's folder.
    static func addKey(_ daemon: DaemonHarness, name: String = "push.p8") throws -> Key {
        let path = daemon.root.path + "/" + name
        let id = try daemon.ok("push-keys", "add", "--team-id", "TEAM123456", "--generate", path, "--topic", messenger)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(id.count == 10, "a key id like Apple's: \(id)")
        return Key(path: path, id: id)
    }

    /// Installs the messenger, opens it until it has registered, and returns its token.
    @discardableResult
    static func installAndRegister(_ daemon: DaemonHarness) throws -> String {
        try daemon.install("Messenger", id: messenger, ["UIBackgroundModes": ["remote-notification"]])
        try daemon.ok("open", messenger)
        try daemon.waitUntil("the messenger registered") { daemon.output(messenger).contains("registered token=") }
        let line = try #require(daemon.output(messenger).split(separator: "\n").first { $0.contains("registered token=") })
        let token = String(try #require(line.split(separator: " ").first { $0.hasPrefix("token=") }).dropFirst(6))
        #expect(token.count == 64 && token.allSatisfy(\.isHexDigit))
        return token
    }

    static func status(_ daemon: DaemonHarness, _ app: String? = nil, limit: Int? = nil) throws -> PushControlInterface.StatusReply {
        try JSONDecoder().decode(
            PushControlInterface.StatusReply.self,
            from: Data(
                try daemon.ok(["--json", "push-status"] + (app.map { [$0] } ?? []) + (limit.map { ["--limit", String($0)] } ?? [])).utf8))
    }

    /// Sends a push with the CLI; returns its apns-id.
    @discardableResult
    static func push(_ daemon: DaemonHarness, _ key: Key, _ payload: String, _ extra: [String] = []) throws -> String {
        let output = try daemon.ok(["--json", "push", messenger, "--payload", payload] + key.arguments + extra)
        let reply = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]
        #expect(reply?["status"] as? Int == 200, "\(output)")
        return try #require(reply?["apnsId"] as? String, "\(output)")
    }

    /// Waits until the push has a record that is done, and returns it.
    static func record(_ daemon: DaemonHarness, _ id: String, timeout: Double = 15) throws -> PushControlInterface.RecordMessage {
        var found: PushControlInterface.RecordMessage?
        try daemon.waitUntil("push \(id) is done", timeout: timeout) {
            found = try status(daemon).records.first { $0.id == id && $0.state == "done" }
            return found != nil
        }
        return try #require(found)
    }

    static let background = #"{"aps":{"content-available":1},"message":"m-42"}"#

    @Test("NT-4: a background push thaws the suspended messenger, which fetches, posts an alert and completes with new data; it is suspended again")
    func wakesSuspendedApp() throws {
        try withDaemon { daemon in
            let key = try Self.addKey(daemon)
            try Self.installAndRegister(daemon)
            try daemon.ok("home")
            try daemon.waitFor(Self.messenger, "suspended")
            let id = try Self.push(daemon, key, Self.background)
            let record = try Self.record(daemon, id)
            #expect(record.outcome == "handled" && record.detail == "newData")
            #expect(record.type == "background" && record.priority == 5)
            #expect(daemon.output(Self.messenger).contains("fetched m-42 after push \(id)"))
            let delivered = try NotificationIntegrationTests.notifications(daemon, Self.messenger).delivered
            #expect(delivered.map(\.request.identifier) == ["m-42"], "the alert the app posted")
            try daemon.waitFor(Self.messenger, "suspended")
            #expect(try daemon.callbacks(Self.messenger).contains("remote-notification"))
            #expect(try Self.status(daemon, Self.messenger).apps.first?.budget == 2, "one wake spent of three")
        }
    }

    @Test("NT-4, LC-2: after the daemon restarted (its apps terminated), a background push launches the messenger into the background with reason push; the token survived")
    func launchesTerminatedApp() throws {
        try withDaemon { daemon in
            let key = try Self.addKey(daemon)
            let token = try Self.installAndRegister(daemon)
            daemon.stop()
            try daemon.start()
            #expect(try daemon.app(Self.messenger).state == "notRunning")
            let id = try Self.push(daemon, key, Self.background)
            let record = try Self.record(daemon, id)
            #expect(record.outcome == "handled")
            #expect(daemon.output(Self.messenger).contains("did-finish-launching (push)"))
            #expect(try Self.status(daemon).apps.first?.token == token, "the same token across the restart")
            #expect(!(try daemon.callbacks(Self.messenger).suffix(3).contains("did-become-active")))
        }
    }

    @Test("NT-4, LC-6: a force-quit messenger is not woken by a background push (recorded), but an alert push is still shown")
    func forceQuitNotWoken() throws {
        try withDaemon { daemon in
            let key = try Self.addKey(daemon)
            try Self.installAndRegister(daemon)
            try daemon.ok("force-quit", Self.messenger)
            try daemon.waitFor(Self.messenger, "notRunning")
            let silent = try Self.push(daemon, key, Self.background)
            let record = try Self.record(daemon, silent)
            #expect(record.outcome == "not-delivered" && record.detail?.contains("force-quit") == true)
            let alert = try Self.push(
                daemon, key, #"{"aps":{"alert":{"title":"Ada","body":"Lunch?"},"badge":3,"thread-id":"t1","mutable-content":1}}"#,
                ["--collapse-id", "lunch"])
            #expect(try Self.record(daemon, alert).outcome == "shown")
            #expect(try daemon.app(Self.messenger).state == "notRunning", "nothing launched")
            let delivered = try NotificationIntegrationTests.notifications(daemon, Self.messenger).delivered
            let shown = try #require(delivered.first)
            #expect(shown.request.identifier == "lunch" && shown.request.content.title == "Ada")
            #expect(shown.request.content.threadIdentifier == "t1" && shown.request.content.badge == 3)
            #expect(shown.request.content.userInfo?["aps"] != nil, "the whole payload is kept, mutable-content with it")
        }
    }

    @Test("NT-4: over the budget a background push is held and delivered when a wake returns; the held one replaced an older one, recorded as coalesced")
    func heldOverBudget() throws {
        var settings = DaemonHarness.fastTimings
        settings["backgroundPushBurst"] = 1
        settings["backgroundPushesPerHour"] = 900  // a wake every 4 s
        try withDaemon(settings: settings) { daemon in
            let key = try Self.addKey(daemon)
            try Self.installAndRegister(daemon)
            try daemon.ok("home")
            try daemon.waitFor(Self.messenger, "suspended")
            let first = try Self.push(daemon, key, #"{"aps":{"content-available":1},"message":"m-1"}"#)
            let second = try Self.push(daemon, key, #"{"aps":{"content-available":1},"message":"m-2"}"#)
            let third = try Self.push(daemon, key, #"{"aps":{"content-available":1},"message":"m-3"}"#)
            #expect(try Self.record(daemon, second).outcome == "coalesced")
            #expect(try Self.record(daemon, second).detail == third)
            #expect(try Self.status(daemon).held <= 1)
            #expect(try Self.record(daemon, third, timeout: 20).outcome == "handled")
            #expect(try Self.record(daemon, first).outcome == "handled")
            let output = daemon.output(Self.messenger)
            #expect(output.contains("fetched m-1") && output.contains("fetched m-3") && !output.contains("fetched m-2"))
        }
    }

    @Test("NT-3: bad input is refused with the APNs reason and nothing stored: an unknown token, a token after uninstall (410 with its time), a payload over 4096 bytes")
    func badInputStoresNothing() throws {
        try withDaemon { daemon in
            let key = try Self.addKey(daemon)
            let token = try Self.installAndRegister(daemon)
            let gateway = try Self.status(daemon).gateway.address
            let unknown = try daemon.cli(
                ["push", Self.messenger, "--payload", Self.background, "--token", String(repeating: "0", count: 64), "--gateway", gateway]
                    + key.arguments)
            #expect(unknown.status == 1 && unknown.stderr.contains("BadDeviceToken"), "\(unknown.stderr)")
            let large = #"{"aps":{"alert":"x"},"pad":""# + String(repeating: "a", count: 4_100) + #""}"#
            let tooLarge = try daemon.cli(["push", Self.messenger, "--payload", large] + key.arguments)
            #expect(tooLarge.status == 1 && tooLarge.stderr.contains("PayloadTooLarge"), "\(tooLarge.stderr)")
            #expect(try Self.status(daemon).records.isEmpty, "nothing stored")
            try daemon.ok("uninstall", Self.messenger)
            let gone = try daemon.cli(
                ["push", Self.messenger, "--payload", Self.background, "--token", token, "--gateway", gateway] + key.arguments)
            #expect(gone.status == 1 && gone.stderr.contains("410 Unregistered"), "\(gone.stderr)")
            #expect(try Self.status(daemon).records.isEmpty)
        }
    }

    @Test("NT-3: the CLI refuses bad keys and payloads before anything is sent, naming what is wrong")
    func cliBadInput() throws {
        try withDaemon { daemon in
            try FileManager.default.createDirectory(atPath: daemon.root.path + "/keys", withIntermediateDirectories: true)
            let notAKey = daemon.root.path + "/keys/not-a-key.pem"
            try "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n".write(toFile: notAKey, atomically: true, encoding: .utf8)
            let badKey = try daemon.cli(["push-keys", "add", "--team-id", "TEAM123456", "--public-key", notAKey])
            #expect(badKey.status != 0 && badKey.stderr.contains("P-256"), "\(badKey.stderr)")
            let keys = try JSONDecoder().decode(
                PushControlInterface.KeysReply.self, from: Data(try daemon.ok("--json", "push-keys", "list").utf8))
            #expect(keys.keys.isEmpty, "nothing registered")
            let key = try Self.addKey(daemon)
            try Self.installAndRegister(daemon)
            let notJSON = try daemon.cli(["push", Self.messenger, "--payload", "{not json"] + key.arguments)
            #expect(notJSON.status == 64, "\(notJSON.stderr)")
            let removed = try daemon.cli(["push-keys", "remove", "NOSUCHKEY0"])
            #expect(removed.status != 0 && removed.stderr.contains("NOSUCHKEY0"), "\(removed.stderr)")
            #expect(try Self.status(daemon).records.isEmpty)
        }
    }
}
