import Crypto
import Foundation
import Testing

@testable import OffstagePush

/// The Web Push front door without the transport: the RFC 8030 rules, subscriptions, VAPID, the rate limit,
/// decryption and the durable accept (SPEC NT-3, NT-5).
@Suite("Web Push gateway (NT-3, NT-5)")
struct WebPushGatewayTests {
    @Test("An accepted message is decrypted, stored with every field and answered 201 with Location and TTL (NT-3, NT-5)")
    func accepted() async throws {
        let (gateway, backend) = await WebPushFixture.gateway()
        let request = try await WebPushFixture.validRequest(
            "new mail", headers: [PushHeaderField("urgency", "high"), PushHeaderField("topic", "inbox-7")])
        let response = await gateway.handle(request)
        #expect(response.status == 201)
        let stored = try #require(await backend.accepted.first)
        #expect(await backend.accepted.count == 1)
        #expect(response.header("location") == "https://push.test:8443/m/\(stored.apnsID)")
        #expect(response.header("ttl") == "60")
        #expect(APNsRequestRules.isCanonicalUUID(stored.apnsID) && stored.apnsID == stored.apnsID.lowercased())
        #expect(stored.token == WebPushFixture.deviceID)
        #expect(stored.app == Fixture.app && stored.device == Fixture.device)
        #expect(stored.pushType == .background)
        #expect(stored.priority == .immediate)
        #expect(stored.expiration == WebPushFixture.now + 60)
        #expect(stored.collapseID == "inbox-7")
        #expect(stored.aps == APS(contentAvailable: true))
        #expect(stored.acceptedAt == WebPushFixture.now)
        let message = try WebPushMessage(payload: stored.payload)
        #expect(message == WebPushMessage(data: Data("new mail".utf8), encrypted: false, topic: "inbox-7", urgency: .high))
        #expect(message.text == "new mail")
    }

    @Test("Without the subscriber's keys the encrypted body is stored as it came, marked encrypted (NT-3)")
    func forwardedEncrypted() async throws {
        let (gateway, backend) = await WebPushFixture.gateway()
        let body = try WebPushFixture.encrypted("for the device")
        let response = await gateway.handle(WebPushFixture.request(id: WebPushFixture.openID, body: body))
        #expect(response.status == 201)
        let message = try WebPushMessage(payload: try #require(await backend.accepted.first).payload)
        #expect(message.encrypted && message.data == body && message.text == nil)
        #expect(try WebPushDecryptor(keys: WebPushFixture.userAgent).decrypt(try #require(message.data)) == Data("for the device".utf8))
    }

    @Test("An empty body is a wake without data, accepted without Content-Encoding (NT-3)")
    func emptyBody() async throws {
        let (gateway, backend) = await WebPushFixture.gateway()
        let request = WebPushFixture.request(headers: [PushHeaderField("authorization", try await WebPushFixture.vapid())])
        #expect(await gateway.handle(request).status == 201)
        let message = try WebPushMessage(payload: try #require(await backend.accepted.first).payload)
        #expect(message == WebPushMessage(data: nil, encrypted: false, topic: nil, urgency: .normal))
        #expect(try #require(await backend.accepted.first).priority == .powerConsidered)
    }

    @Test("TTL is capped at the maximum and the cap echoed; TTL 0 stores no expiry: deliver now or drop (NT-5)")
    func ttl() async throws {
        let (gateway, backend) = await WebPushFixture.gateway(configuration: .init(maximumTTL: 3600))
        let open = WebPushFixture.openID
        let capped = await gateway.handle(WebPushFixture.request(id: open, ttl: "999999999999999999999"))
        #expect(capped.status == 201 && capped.header("ttl") == "3600")
        let zero = await gateway.handle(WebPushFixture.request(id: open, ttl: "0"))
        #expect(zero.status == 201 && zero.header("ttl") == "0")
        #expect(await backend.accepted.map(\.expiration) == [WebPushFixture.now + 3600, nil])
        #expect(await backend.accepted.map(\.attemptOnce) == [false, true])
    }

    @Test("Urgency maps to the inbox's priority: high 10, normal 5, low and very-low 1 (NT-3)")
    func urgency() async throws {
        let (gateway, backend) = await WebPushFixture.gateway()
        for urgency in ["very-low", "low", "normal", "high"] {
            let request = WebPushFixture.request(id: WebPushFixture.openID, headers: [PushHeaderField("urgency", urgency)])
            #expect(await gateway.handle(request).status == 201)
        }
        #expect(await backend.accepted.map(\.priority) == [.lowest, .lowest, .powerConsidered, .immediate])
        let urgencies = try await backend.accepted.map { try WebPushMessage(payload: $0.payload).urgency }
        #expect(urgencies == [.veryLow, .low, .normal, .high])
    }

    @Test("Each RFC 8030 rule refuses with its status and reason, and nothing is stored (NT-3)")
    func rules() async throws {
        let (gateway, backend) = await WebPushFixture.gateway()
        let open = WebPushFixture.openID
        let body = try WebPushFixture.encrypted("x")
        var badKeyID = body
        badKeyID[20] = 10
        let cases: [(PushHTTPRequest, Int, WebPushReason)] = [
            (WebPushFixture.request(id: open, method: "GET"), 405, .methodNotAllowed),
            (WebPushFixture.request(id: open, method: "PUT"), 405, .methodNotAllowed),
            (WebPushFixture.request(id: "short"), 404, .badPath),
            (WebPushFixture.request(id: String(repeating: "a", count: 129)), 404, .badPath),
            (WebPushFixture.request(id: "has+plus/and=equals1234"), 404, .badPath),
            (WebPushFixture.request(id: "\(open)/more"), 404, .badPath),
            (WebPushFixture.request(id: open, ttl: nil), 400, .missingTTL),
            (WebPushFixture.request(id: open, headers: [PushHeaderField("ttl", "5")]), 400, .missingTTL),
            (WebPushFixture.request(id: open, ttl: "-1"), 400, .badTTL),
            (WebPushFixture.request(id: open, ttl: "1.5"), 400, .badTTL),
            (WebPushFixture.request(id: open, ttl: ""), 400, .badTTL),
            (WebPushFixture.request(id: open, headers: [PushHeaderField("urgency", "urgent")]), 400, .badUrgency),
            (WebPushFixture.request(id: open, headers: [PushHeaderField("topic", String(repeating: "t", count: 33))]), 400, .badTopic),
            (WebPushFixture.request(id: open, headers: [PushHeaderField("topic", "a topic")]), 400, .badTopic),
            (WebPushFixture.request(id: open, headers: [PushHeaderField("topic", "")]), 400, .badTopic),
            (WebPushFixture.request(id: open, headers: [PushHeaderField("content-encoding", "aesgcm")], body: body), 415,
             .unsupportedContentEncoding),
            (PushHTTPRequest(method: "POST", path: "/push/\(open)", headers: [PushHeaderField("ttl", "1")], body: body), 415,
             .unsupportedContentEncoding),
            (WebPushFixture.request(id: open, body: Data("plain text, not encrypted".utf8)), 400, .badEncryption),
            (WebPushFixture.request(id: open, body: badKeyID), 400, .badEncryption),
            (WebPushFixture.request(id: "unknownSubscription01"), 404, .unknownSubscription),
            (WebPushFixture.request(id: WebPushFixture.goneID), 410, .subscriptionGone),
        ]
        for (request, status, reason) in cases {
            let response = await gateway.handle(request)
            #expect(response.status == status, "\(request.method) \(request.path) \(reason)")
            #expect(response.reason == reason.rawValue, "\(request.method) \(request.path)")
            #expect(response.header("content-type") == "application/json")
            let message = (try JSONSerialization.jsonObject(with: response.body) as? [String: Any])?["message"] as? String
            #expect((message?.count ?? 0) > 20, "\(reason) says what was wrong")
        }
        #expect(await backend.accepted.isEmpty)
        let disallowed = await gateway.handle(WebPushFixture.request(id: open, method: "GET"))
        #expect(disallowed.header("allow") == "POST")
        let unsupported = await gateway.handle(WebPushFixture.request(id: open, headers: [PushHeaderField("content-encoding", "aesgcm")], body: body))
        #expect(unsupported.header("accept-encoding") == "aes128gcm")
    }

    @Test("A restricted subscription needs VAPID by its key: missing 401, invalid 403, another key 403 (NT-3)")
    func restrictedVAPID() async throws {
        let (gateway, backend) = await WebPushFixture.gateway()
        let body = try WebPushFixture.encrypted("x")
        func send(_ authorization: String?) async -> PushHTTPResponse {
            await gateway.handle(
                WebPushFixture.request(headers: authorization.map { [PushHeaderField("authorization", $0)] } ?? [], body: body))
        }
        let missing = await send(nil)
        #expect(missing.status == 401 && missing.reason == "MissingAuthorization")
        #expect(await send("Bearer token").status == 401)
        let expired = await send(try await WebPushFixture.vapid(expiration: WebPushFixture.now - 3600))
        #expect(expired.status == 403 && expired.reason == "InvalidAuthorization")
        let wrongAudience = await send(try await WebPushFixture.vapid(audience: "https://elsewhere.test"))
        #expect(wrongAudience.status == 403 && wrongAudience.reason == "InvalidAuthorization")
        #expect(await send("vapid t=x.y.z").status == 403)
        let otherKey = await send(try await WebPushFixture.vapid(key: WebPushFixture.otherVapidKey))
        #expect(otherKey.status == 403 && otherKey.reason == "KeyMismatch")
        #expect(await backend.accepted.isEmpty)
        #expect(await send(try await WebPushFixture.vapid()).status == 201)
    }

    @Test("An unrestricted subscription takes messages without VAPID, but refuses invalid VAPID 403 (NT-3)")
    func unrestrictedVAPID() async throws {
        let (gateway, backend) = await WebPushFixture.gateway()
        func send(_ authorization: String?) async -> PushHTTPResponse {
            await gateway.handle(
                WebPushFixture.request(
                    id: WebPushFixture.openID, headers: authorization.map { [PushHeaderField("authorization", $0)] } ?? []))
        }
        #expect(await send(try await WebPushFixture.vapid(expiration: WebPushFixture.now - 3600)).status == 403)
        #expect(await send("vapid k=abc").status == 403)
        #expect(await backend.accepted.isEmpty)
        #expect(await send(nil).status == 201)
        #expect(await send(try await WebPushFixture.vapid(key: WebPushFixture.otherVapidKey)).status == 201)
    }

    @Test("VAPID's aud may be a configured public origin when a proxy rewrote the request's (NT-3)")
    func publicOrigin() async throws {
        let (gateway, _) = await WebPushFixture.gateway(configuration: .init(publicOrigins: ["https://push.example.com"]))
        let vapid = try await WebPushFixture.vapid(audience: "https://push.example.com")
        let request = WebPushFixture.request(
            headers: [PushHeaderField("authorization", vapid)], authority: "127.0.0.1:9000", scheme: "http")
        #expect(await gateway.handle(request).status == 201)
    }

    @Test("A body that does not decrypt with the subscription's keys is refused 400 naming why, nothing stored (NT-3)")
    func decryptionFailure() async throws {
        let (gateway, backend) = await WebPushFixture.gateway()
        let vapid = [PushHeaderField("authorization", try await WebPushFixture.vapid())]
        let otherKeys = await gateway.handle(WebPushFixture.request(headers: vapid, body: try WebPushFixture.encrypted("x", to: .generate())))
        #expect(otherKeys.status == 400 && otherKeys.reason == "DecryptionFailed")
        #expect(String(decoding: otherKeys.body, as: UTF8.self).contains("does not decrypt"))
        #expect(await backend.accepted.isEmpty)
    }

    @Test("Messages over the per-subscription limit are refused 429 with Retry-After (NT-3)")
    func rateLimited() async throws {
        let (gateway, backend) = await WebPushFixture.gateway(configuration: .init(rateLimit: .init(ratePerSecond: 0.1, burst: 2)))
        let request = WebPushFixture.request(id: WebPushFixture.openID)
        #expect(await gateway.handle(request).status == 201)
        #expect(await gateway.handle(request).status == 201)
        let limited = await gateway.handle(request)
        #expect(limited.status == 429 && limited.reason == "TooManyRequests")
        #expect(limited.header("retry-after") == "10")
        #expect(await backend.accepted.count == 2)
    }

    @Test("A store that fails answers 500 and nothing is acknowledged; a store's refusal keeps its meaning (NT-3)")
    func backendFailures() async throws {
        let (gateway, backend) = await WebPushFixture.gateway()
        let request = WebPushFixture.request(id: WebPushFixture.openID)
        await backend.setAcceptFails(true)
        let failed = await gateway.handle(request)
        #expect(failed.status == 500 && failed.reason == "InternalServerError")
        await backend.setAcceptFails(false)
        await backend.setAcceptAnswer(.refused(APNsRefusal(.unregistered, "gone meanwhile")))
        #expect(await gateway.handle(request).status == 410)
        await backend.setAcceptAnswer(.refused(APNsRefusal(.tooManyRequests, "shared limit")))
        #expect(await gateway.handle(request).status == 429)
        await backend.setLookUpFails(true)
        #expect(await gateway.handle(request).status == 500)
        #expect(await backend.accepted.isEmpty)
    }

    @Test("The 4096-byte body limit is the route's: 413 PayloadTooLarge (NT-3)")
    func routeLimit() async {
        let (gateway, _) = await WebPushFixture.gateway()
        let route = WebPushRoute(gateway: gateway)
        #expect(route.pathPrefix == "/push/" && route.maximumBodyBytes == 4096)
        let refused = route.bodyTooLarge(WebPushFixture.request())
        #expect(refused.status == 413 && refused.reason == "PayloadTooLarge")
    }

    @Test("Message resources cannot be deleted: 405 for a message id, 404 for anything else (NT-3)")
    func messageResources() async {
        let route = WebPushMessageRoute()
        let id = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
        for method in ["DELETE", "GET"] {
            let response = await route.handle(PushHTTPRequest(method: method, path: "/m/\(id)", headers: [], body: Data()))
            #expect(response.status == 405 && response.reason == "MethodNotAllowed")
            #expect(response.header("allow") == "")
        }
        let unknown = await route.handle(PushHTTPRequest(method: "DELETE", path: "/m/nope", headers: [], body: Data()))
        #expect(unknown.status == 404 && unknown.reason == "UnknownMessage")
    }

    @Test("The message payload round-trips through its parser, and refuses what is not one (NT-3)")
    func messagePayload() throws {
        let payload = WebPushMessage.payload(data: Data([0xfb, 0xff]), encrypted: true, topic: "t", urgency: .low)
        #expect(
            String(decoding: payload, as: UTF8.self)
                == #"{"aps":{"content-available":1},"webpush":{"data":"+/8=","encrypted":true,"topic":"t","urgency":"low"}}"#)
        #expect(try WebPushMessage(payload: payload) == WebPushMessage(data: Data([0xfb, 0xff]), encrypted: true, topic: "t", urgency: .low))
        #expect(try PayloadParser.parse(payload).get() == APS(contentAvailable: true))
        #expect(throws: WebPushMessageError.self) { try WebPushMessage(payload: Data(#"{"aps":{}}"#.utf8)) }
        #expect(throws: WebPushMessageError.self) { try WebPushMessage(payload: Data(#"{"aps":{},"webpush":{"data":"!"}}"#.utf8)) }
    }
}
