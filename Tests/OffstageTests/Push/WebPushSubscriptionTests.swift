import Foundation
import OffstageProtocol
import Testing

@testable import Offstage

/// SPEC NT-3, the app's side of Web Push: subscribing against a stand-in daemon, the subscription's JSON as Web Push
/// libraries take it, and a message read back from the handler's user info.
@Suite("Subscribing to Web Push (NT-3)", .serialized)
struct WebPushSubscriptionTests {
    /// A P-256 public key (RFC 8291's example user agent key) and a 16-byte secret, in base64url.
    static let p256dh = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let auth = "BTBZMqHH6r4Tts7J_aSIgg"
    static let endpoint = "http://127.0.0.1:2197/push/q2dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"

    static func daemon(answer: String) throws -> FakeModesDaemon {
        try FakeModesDaemon { method, _ in
            method == PushInterface.Method.subscribeWebPush ? answer : #"{"parameters":{}}"#
        }
    }

    static func link(_ daemon: FakeModesDaemon) -> DaemonLink {
        DaemonLink(environment: ["OFFSTAGE_SOCKET": daemon.path])
    }

    @Test("NT-3: subscribe sends the application server key in base64url and returns the endpoint and keys; its JSON is PushSubscription.toJSON()'s")
    func subscribe() throws {
        let daemon = try Self.daemon(
            answer: #"{"parameters":{"subscription":{"endpoint":"\#(Self.endpoint)","p256dh":"\#(Self.p256dh)","#
                + #""auth":"\#(Self.auth)","applicationServerKey":"\#(Self.p256dh)"}}}"#)
        defer { daemon.close() }
        let key = try #require(Base64URL.decode(Self.p256dh))
        let subscription = try WebPushSubscription.subscribe(link: Self.link(daemon), applicationServerKey: key)
        #expect(subscription.endpoint.absoluteString == Self.endpoint)
        #expect(subscription.p256dh.count == 65 && subscription.p256dh.first == 0x04 && subscription.auth.count == 16)
        #expect(subscription.applicationServerKey == key)
        #expect(daemon.calls("SubscribeWebPush").map(\.parameters) == [#"{"applicationServerKey":"\#(Self.p256dh)"}"#])
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(subscription.json.utf8)) as? [String: Any])
        #expect(json["endpoint"] as? String == Self.endpoint)
        #expect(json["expirationTime"] is NSNull)
        #expect(json["keys"] as? [String: String] == ["p256dh": Self.p256dh, "auth": Self.auth])
    }

    @Test("NT-3: an answer with a key of the wrong length is refused as unreadable, not handed to the app")
    func unreadableAnswer() throws {
        let daemon = try Self.daemon(
            answer: #"{"parameters":{"subscription":{"endpoint":"\#(Self.endpoint)","p256dh":"AAAA","auth":"\#(Self.auth)"}}}"#)
        defer { daemon.close() }
        do {
            _ = try WebPushSubscription.subscribe(link: Self.link(daemon), applicationServerKey: nil)
            Issue.record("an unreadable answer was accepted")
        } catch {
            #expect(error.code == .unavailable && error.message.contains(Self.endpoint))
        }
    }

    @Test("NT-3: the daemon's refusal of a key keeps its message and fix, as invalidArgument")
    func refusedKey() throws {
        let daemon = try Self.daemon(
            answer: #"{"error":"io.offstage.Push.InvalidArgument","parameters":{"message":"applicationServerKey \"x\" is not a P-256 public key","fix":"give the app server's VAPID public key"}}"#)
        defer { daemon.close() }
        do {
            _ = try WebPushSubscription.subscribe(link: Self.link(daemon), applicationServerKey: Data([1, 2, 3]))
            Issue.record("refused")
        } catch {
            #expect(error.code == .invalidArgument && error.message.contains("P-256") && error.fix.contains("VAPID"))
        }
    }

    @Test("NT-4: a Web Push message is read from the handler's user info; an APNs payload is not one")
    func messageFromUserInfo() {
        let userInfo: [String: any Sendable] = [
            "aps": ["content-available": 1] as [String: any Sendable],
            "webpush": ["data": Data("héllo".utf8).base64EncodedString(), "topic": "inbox", "urgency": "high"] as [String: any Sendable],
        ]
        let message = WebPushMessage(userInfo: userInfo)
        #expect(message?.text == "héllo" && message?.topic == "inbox" && message?.urgency == "high")
        #expect(WebPushMessage(userInfo: ["aps": ["content-available": 1] as [String: any Sendable], "message": "m-1"]) == nil)
        let binary = WebPushMessage(userInfo: ["webpush": ["data": Data([0xFF, 0xFE]).base64EncodedString()] as [String: any Sendable]])
        #expect(binary?.data == Data([0xFF, 0xFE]) && binary?.text == nil && binary?.urgency == "normal")
    }

    @Test("base64url: decodes without padding and refuses characters outside its alphabet")
    func base64URL() {
        #expect(Base64URL.decode(Self.auth)?.count == 16)
        #expect(Base64URL.encode(Base64URL.decode(Self.p256dh) ?? Data()) == Self.p256dh)
        #expect(Base64URL.decode("ab+/") == nil && Base64URL.decode("a b") == nil)
    }
}
