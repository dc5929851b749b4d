import Foundation
import Testing

@testable import OffstagePush

/// The gateway without the transport: tokens, topics, the device token, the rate limit and the durable accept
/// (SPEC NT-3).
@Suite("APNs gateway (NT-3)")
struct GatewayTests {
    private func request(
        token: String = Fixture.token, topic: String = Fixture.app, extra: [PushHeaderField] = [], body: Data = Fixture.alertPayload
    ) async throws -> PushHTTPRequest {
        let headers = Fixture.headers(authorization: "bearer \(try await Fixture.providerToken())", topic: topic) + extra
        return Fixture.request(path: "/3/device/\(token)", headers: headers, body: body)
    }

    @Test("An accepted push is stored with every field and answered 200 with its apns-id (NT-3)")
    func accepted() async throws {
        let (gateway, backend) = await Fixture.gateway()
        let id = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
        let body = Data(#"{"aps":{"alert":{"title":"Goal","body":"1-0"},"badge":1,"thread-id":"m7"},"match":7}"#.utf8)
        let extra = [
            PushHeaderField("apns-id", id), PushHeaderField("apns-push-type", "alert"), PushHeaderField("apns-priority", "5"),
            PushHeaderField("apns-expiration", "1800086400"), PushHeaderField("apns-collapse-id", "score-7"),
        ]
        let response = await gateway.handle(try await request(extra: extra, body: body))
        #expect(response.status == 200)
        #expect(response.body.isEmpty)
        #expect(response.headers.contains(PushHeaderField("apns-id", id)))
        let stored = await backend.accepted
        #expect(stored.count == 1)
        let push = try #require(stored.first)
        #expect(push.apnsID == id)
        #expect(push.token == Fixture.token)
        #expect(push.app == Fixture.app)
        #expect(push.device == Fixture.device)
        #expect(push.pushType == .alert)
        #expect(push.priority == .powerConsidered)
        #expect(push.expiration == Date(timeIntervalSince1970: 1_800_086_400))
        #expect(push.collapseID == "score-7")
        #expect(push.payload == body)
        #expect(push.aps == APS(alert: APSAlert(title: "Goal", body: "1-0"), badge: 1, threadID: "m7"))
        #expect(push.acceptedAt == Fixture.now)
    }

    @Test("A refusal carries the APNs status, a JSON reason and a generated apns-id, and stores nothing (NT-3)")
    func refusalResponse() async throws {
        let (gateway, backend) = await Fixture.gateway()
        let response = await gateway.handle(try await request(topic: "bad topic"))
        #expect(response.status == 400)
        #expect(response.body == Data(#"{"reason":"BadTopic"}"#.utf8))
        let id = try #require(response.headers.first { $0.name == "apns-id" }?.value)
        #expect(APNsRequestRules.isCanonicalUUID(id))
        #expect(await backend.accepted.isEmpty)
    }

    @Test("A token the gateway never issued is refused 400 BadDeviceToken (NT-3)")
    func unknownToken() async throws {
        let (gateway, backend) = await Fixture.gateway()
        #expect(await gateway.process(try await request(token: Fixture.otherToken)).failure?.reason == .badDeviceToken)
        #expect(await backend.accepted.isEmpty)
    }

    @Test("A revoked token is refused 410 Unregistered with the revocation time in milliseconds (NT-3)")
    func revoked() async throws {
        let (gateway, backend) = await Fixture.gateway()
        let revokedAt = Date(timeIntervalSince1970: 1_799_999_000.5)
        await backend.revoke(token: Fixture.token, at: revokedAt)
        let response = await gateway.handle(try await request())
        #expect(response.status == 410)
        let body = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
        #expect(body?["reason"] as? String == "Unregistered")
        #expect((body?["timestamp"] as? NSNumber)?.int64Value == 1_799_999_000_500)
        #expect(await backend.accepted.isEmpty)
    }

    @Test("A token of another app is refused 400 DeviceTokenNotForTopic, so one app cannot reach another (NT-3)")
    func otherAppsToken() async throws {
        let (gateway, backend) = await Fixture.gateway()
        await backend.register(token: Fixture.otherToken, app: "com.example.bank", device: Fixture.device)
        #expect(await gateway.process(try await request(token: Fixture.otherToken)).failure?.reason == .deviceTokenNotForTopic)
        #expect(await backend.accepted.isEmpty)
    }

    @Test("A VoIP push to <app>.voip reaches the app's token (NT-3)")
    func voipTopic() async throws {
        let (gateway, backend) = await Fixture.gateway()
        let extra = [PushHeaderField("apns-push-type", "voip")]
        #expect(await gateway.process(try await request(topic: "\(Fixture.app).voip", extra: extra)).success?.pushType == .voip)
        #expect(await backend.accepted.count == 1)
    }

    @Test("A key limited to other topics is refused 400 TopicDisallowed; an allowed topic passes (NT-3)")
    func topicDisallowed() async throws {
        let (gateway, backend) = await Fixture.gateway()
        var key = Fixture.key
        key.allowedTopics = ["com.example.weather"]
        await backend.add(key)
        #expect(await gateway.process(try await request()).failure?.reason == .topicDisallowed)
        key.allowedTopics = ["com.example.weather", Fixture.app]
        await backend.add(key)
        gateway.providerKeysChanged(keyID: Fixture.keyID)
        #expect(await gateway.process(try await request()).success != nil)
        #expect(await backend.accepted.count == 1)
    }

    @Test("A bad provider token is refused 403 before the device token is looked at (NT-3)")
    func badProviderToken() async throws {
        let (gateway, backend) = await Fixture.gateway()
        let headers = Fixture.headers(authorization: "bearer not.a.jwt")
        let response = await gateway.handle(Fixture.request(path: "/3/device/\(Fixture.otherToken)", headers: headers))
        #expect(response.status == 403)
        #expect(response.body == Data(#"{"reason":"InvalidProviderToken"}"#.utf8))
        #expect(await backend.accepted.isEmpty)
    }

    @Test("A store that fails answers 500 InternalServerError and nothing is acknowledged (NT-3)")
    func storeFails() async throws {
        let (gateway, backend) = await Fixture.gateway()
        await backend.setAcceptFails(true)
        let response = await gateway.handle(try await request())
        #expect(response.status == 500)
        #expect(response.body == Data(#"{"reason":"InternalServerError"}"#.utf8))
        #expect(await backend.accepted.isEmpty)
    }

    @Test("A backend refusal is answered with its reason (NT-3)")
    func backendRefuses() async throws {
        let (gateway, backend) = await Fixture.gateway()
        await backend.setAcceptAnswer(.refused(APNsRefusal(.serviceUnavailable, "draining")))
        #expect(await gateway.handle(try await request()).status == 503)
    }

    @Test("Pushes beyond the per-token bucket are refused 429 TooManyRequests; other tokens are unaffected (NT-3)")
    func rateLimit() async throws {
        let clock = ManualClock(Fixture.now)
        let (gateway, backend) = await Fixture.gateway(
            configuration: .init(rateLimit: .init(ratePerSecond: 1, burst: 3)), now: { clock.now })
        await backend.register(token: Fixture.otherToken, app: Fixture.app, device: "device-2")
        for _ in 0..<3 {
            #expect(await gateway.process(try await request()).success != nil)
        }
        let refusal = await gateway.process(try await request()).failure
        #expect(refusal?.reason == .tooManyRequests)
        #expect(refusal?.status == 429)
        #expect(await gateway.process(try await request(token: Fixture.otherToken)).success != nil)
        clock.advance(by: 1)
        #expect(await gateway.process(try await request()).success != nil)
        #expect(await gateway.process(try await request()).failure?.reason == .tooManyRequests)
        #expect(await backend.accepted.count == 5)
    }

    @Test("The token bucket refills at its rate up to its burst (NT-3)")
    func bucket() {
        let limiter = TokenBucketLimiter(limit: .init(ratePerSecond: 2, burst: 2))
        #expect(limiter.take("a", now: Fixture.now))
        #expect(limiter.take("a", now: Fixture.now))
        #expect(!limiter.take("a", now: Fixture.now))
        #expect(limiter.take("a", now: Fixture.now + 0.5))
        #expect(!limiter.take("a", now: Fixture.now + 0.5))
        // An hour idle refills to the burst, not beyond.
        #expect(limiter.take("a", now: Fixture.now + 3600))
        #expect(limiter.take("a", now: Fixture.now + 3600))
        #expect(!limiter.take("a", now: Fixture.now + 3600))
    }
}
