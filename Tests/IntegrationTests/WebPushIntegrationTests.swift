import Foundation
import OffstageProtocol
import Testing

/// Web Push through the daemon's own gateway, sent by pywebpush — a Web Push client nobody here wrote — exactly as it
/// sends to any push service: RFC 8291 encryption to the subscription's keys, a VAPID token (RFC 8292), an RFC 8030
/// POST over HTTP/1.1 (SPEC NT-3, NT-4).
@Suite("Web Push from pywebpush, a real Web Push client (SPEC NT-3, NT-4)", .serialized)
struct WebPushIntegrationTests {
    static let messenger = PushIntegrationTests.messenger
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("TestProcesses/webpush_client.py").path

    /// What pywebpush got back.
    struct Sent {
        var status: Int
        var location: String?
        var ttl: String?
        var body: String
        /// The message id: the last segment of the Location.
        var id: String? { location?.split(separator: "/").last.map(String.init) }
    }

    /// A VAPID key pair made by py_vapid: the private key's file and the public key (base64url).
    static func vapidKey(_ daemon: DaemonHarness, _ name: String) throws -> (path: String, publicKey: String) {
        let path = daemon.root.path + "/" + name
        let result = try PushClientInteropTests.run("/usr/bin/env", ["python3", script, "keygen", path])
        guard result.status == 0 else { throw HarnessError("py_vapid failed: \(result.output)") }
        return (path, result.output.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Sends `data` with pywebpush to the subscription in `subscription` (a PushSubscription's JSON file).
    /// `trustRoots`: a PEM file of certificates requests trusts, for an endpoint behind a test CA.
    static func send(
        _ subscription: String, key: String, _ data: String, ttl: Int = 60, urgency: String = "", topic: String = "",
        trustRoots: String? = nil
    ) throws -> Sent {
        let result = try PushClientInteropTests.run(
            "/usr/bin/env", ["python3", script, "send", subscription, key, data, String(ttl), urgency, topic],
            environment: trustRoots.map { ["REQUESTS_CA_BUNDLE": $0] } ?? [:])
        let line = result.output.split(separator: "\n").last.map(String.init) ?? ""
        guard result.status == 0, let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let status = object["status"] as? Int
        else { throw HarnessError("pywebpush failed (\(result.status)): \(result.output)") }
        return Sent(
            status: status, location: object["location"] as? String, ttl: object["ttl"] as? String,
            body: object["body"] as? String ?? "")
    }

    /// Installs the messenger with the server's VAPID key in its data folder, opens it until it has subscribed, and
    /// returns the path of a copy of the subscription's JSON it wrote (the server's copy: it outlives the app).
    static func installAndSubscribe(
        _ daemon: DaemonHarness, vapidPublicKey: String, endpointPrefix: String = "http://127.0.0.1:"
    ) throws -> String {
        try daemon.install("Messenger", id: messenger, ["UIBackgroundModes": ["remote-notification"]])
        let folder = daemon.stateDirectory + "/data/" + messenger
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data((vapidPublicKey + "\n").utf8).write(to: URL(fileURLWithPath: folder + "/vapid-public-key"))
        try daemon.ok("open", messenger)
        try daemon.waitUntil("the messenger subscribed to Web Push") {
            daemon.output(messenger).contains("subscribed to Web Push endpoint=")
        }
        let path = daemon.root.path + "/webpush-subscription.json"
        try FileManager.default.copyItem(atPath: folder + "/webpush-subscription.json", toPath: path)
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
        let endpoint = try #require(json?["endpoint"] as? String)
        #expect(endpoint.hasPrefix(endpointPrefix) && endpoint.contains("/push/"), "\(endpoint)")
        let keys = try #require(json?["keys"] as? [String: String])
        #expect(keys["p256dh"]?.count == 87 && keys["auth"]?.count == 22, "65 and 16 bytes in base64url: \(keys)")
        #expect(try PushIntegrationTests.status(daemon, messenger).apps.first?.webPushEndpoint == endpoint)
        return path
    }

    @Test("NT-3, NT-4: pywebpush's encrypted, VAPID-signed message wakes the frozen messenger; the device decrypted it before the handler ran; 201 with Location and TTL")
    func pywebpushWakesFrozenApp() throws {
        try withDaemon { daemon in
            let vapid = try Self.vapidKey(daemon, "vapid.pem")
            let subscription = try Self.installAndSubscribe(daemon, vapidPublicKey: vapid.publicKey)
            try daemon.ok("home")
            try daemon.waitFor(Self.messenger, "suspended")
            let sent = try Self.send(subscription, key: vapid.path, #"{"message":"m-43"}"#, ttl: 120, urgency: "high", topic: "inbox")
            #expect(sent.status == 201, "\(sent)")
            #expect(sent.ttl == "120")
            let id = try #require(sent.id)
            #expect(sent.location?.hasSuffix("/m/\(id)") == true)
            let record = try PushIntegrationTests.record(daemon, id)
            #expect(record.outcome == "handled" && record.detail == "newData")
            #expect(record.type == "background" && record.priority == 10 && record.collapseId == "inbox")
            #expect(daemon.output(Self.messenger).contains("fetched m-43 after push \(id)"))
            try daemon.waitFor(Self.messenger, "suspended")
        }
    }

    @Test("NT-3: a message signed by another VAPID key, encrypted to the wrong secret, or after the app is uninstalled is refused (403, 400, 410) and nothing is stored")
    func badMessagesStoreNothing() throws {
        try withDaemon { daemon in
            let vapid = try Self.vapidKey(daemon, "vapid.pem")
            let subscription = try Self.installAndSubscribe(daemon, vapidPublicKey: vapid.publicKey)
            let other = try Self.vapidKey(daemon, "other.pem")
            let forged = try Self.send(subscription, key: other.path, #"{"message":"m-1"}"#)
            #expect(forged.status == 403, "\(forged)")
            #expect(forged.body.contains("\"reason\""), "a JSON body that names the reason: \(forged.body)")

            // The same endpoint with another auth secret: only the device can tell, and it refuses before storing.
            var json = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: subscription))) as? [String: Any])
            var keys = try #require(json["keys"] as? [String: String])
            keys["auth"] = "AAAAAAAAAAAAAAAAAAAAAA"
            json["keys"] = keys
            let wrongSecret = daemon.root.path + "/wrong-secret.json"
            try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: wrongSecret))
            let undecryptable = try Self.send(wrongSecret, key: vapid.path, #"{"message":"m-2"}"#)
            #expect(undecryptable.status == 400, "\(undecryptable)")
            #expect(try PushIntegrationTests.status(daemon).records.isEmpty, "nothing stored")

            try daemon.ok("uninstall", Self.messenger)
            let gone = try Self.send(subscription, key: vapid.path, #"{"message":"m-3"}"#)
            #expect(gone.status == 410, "\(gone)")
            #expect(try PushIntegrationTests.status(daemon).records.isEmpty)
        }
    }

    @Test("NT-3: subscribing again keeps the subscription; a key that is not a P-256 point, or another key than the subscription's, is refused with the fix and changes nothing")
    func subscribeBadInput() throws {
        try withDaemon { daemon in
            let vapid = try Self.vapidKey(daemon, "vapid.pem")
            _ = try Self.installAndSubscribe(daemon, vapidPublicKey: vapid.publicKey)
            let endpoint = try PushIntegrationTests.status(daemon, Self.messenger).apps.first?.webPushEndpoint
            let keyFile = URL(fileURLWithPath: daemon.stateDirectory + "/data/" + Self.messenger + "/vapid-public-key")

            func relaunch(_ key: String, expecting text: String) throws {
                try Data((key + "\n").utf8).write(to: keyFile)
                try daemon.ok("force-quit", Self.messenger)
                try daemon.waitFor(Self.messenger, "notRunning")
                try daemon.ok("open", Self.messenger)
                try daemon.waitUntil("the messenger said '\(text)'") {
                    daemon.output(Self.messenger).components(separatedBy: text).count > 1
                }
            }
            try relaunch("AAAA", expecting: "could not subscribe to Web Push: invalidArgument")
            #expect(daemon.output(Self.messenger).contains("is not a P-256 public key"))
            let other = try Self.vapidKey(daemon, "other.pem")
            try relaunch(other.publicKey, expecting: "restricted to another application server key")
            #expect(daemon.output(Self.messenger).contains("unsubscribe first"))
            #expect(try PushIntegrationTests.status(daemon, Self.messenger).apps.first?.webPushEndpoint == endpoint, "unchanged")
            try relaunch(vapid.publicKey, expecting: "subscribed to Web Push endpoint=\(endpoint ?? "?")")
        }
    }
}
