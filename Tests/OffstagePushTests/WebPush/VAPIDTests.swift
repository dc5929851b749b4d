import Crypto
import Foundation
import Testing

@testable import OffstagePush

/// RFC 8292 VAPID: both header forms, py_vapid's tokens, and every reason a token is refused (SPEC NT-3).
@Suite("VAPID (NT-3)")
struct VAPIDTests {
    private let verifier = VAPIDVerifier()
    private let now = WebPushFixture.now
    private let origin = "https://push.example.com"

    private func credentials(_ authorization: String, cryptoKey: String? = nil) throws -> VAPIDCredentials {
        try #require(try VAPIDCredentials.parse(authorization: authorization, cryptoKey: cryptoKey))
    }

    private func verify(_ authorization: String, cryptoKey: String? = nil, origins: [String]? = nil) async throws
        -> Result<VerifiedVAPID, VAPIDError>
    {
        await verifier.verify(try credentials(authorization, cryptoKey: cryptoKey), origins: origins ?? [origin], now: now)
    }

    private func signed(
        key: P256.Signing.PrivateKey = WebPushFixture.vapidKey, audience: String? = nil, expiration: Date? = nil,
        subject: String? = "mailto:ops@example.com"
    ) async throws -> String {
        try await VAPIDSigner(privateKey: key, subject: subject).authorization(
            audience: audience ?? origin, expiration: expiration ?? now + 3600)
    }

    @Test("py_vapid's Vapid02 header (as pywebpush 2.5 sends it) verifies for its audience (NT-3)")
    func pyVapid02() async throws {
        let fixtureNow = Date(timeIntervalSince1970: TimeInterval(ForeignFixtures.vapidExpiry - 12 * 3600))
        let parsed = try credentials(ForeignFixtures.vapid02Authorization)
        #expect(Base64URL.encode(parsed.publicKey) == ForeignFixtures.vapidPublicKey)
        let verified = try await verifier.verify(parsed, origins: ["http://127.0.0.1:8080"], now: fixtureNow).get()
        #expect(verified.audience == "http://127.0.0.1:8080")
        #expect(verified.subject == "mailto:ops@example.com")
        #expect(verified.expiration == Date(timeIntervalSince1970: TimeInterval(ForeignFixtures.vapidExpiry)))
        let elsewhere = await verifier.verify(parsed, origins: [origin], now: fixtureNow)
        #expect(elsewhere.failure == .wrongAudience("http://127.0.0.1:8080", expected: [origin]))
    }

    @Test("py_vapid's Vapid01 form, Authorization: WebPush with Crypto-Key: p256ecdsa, verifies (NT-3)")
    func pyVapid01() async throws {
        let fixtureNow = Date(timeIntervalSince1970: TimeInterval(ForeignFixtures.vapidExpiry - 3600))
        for cryptoKey in [ForeignFixtures.vapid01CryptoKey, "dh=BAAA;" + ForeignFixtures.vapid01CryptoKey] {
            let parsed = try credentials(ForeignFixtures.vapid01Authorization, cryptoKey: cryptoKey)
            #expect(Base64URL.encode(parsed.publicKey) == ForeignFixtures.vapidPublicKey)
            #expect(await verifier.verify(parsed, origins: [origin], now: fixtureNow).success != nil)
        }
    }

    @Test("The signer's header verifies, in RFC 8292's spelling vapid t=…, k=… (NT-3)")
    func signerRoundTrip() async throws {
        let header = try await signed()
        #expect(header.hasPrefix("vapid t="))
        #expect(header.contains(", k=\(Base64URL.encode(WebPushFixture.vapidKey.publicKey.x963Representation))"))
        let verified = try await verify(header).get()
        #expect(verified.publicKey == WebPushFixture.vapidKey.publicKey.x963Representation)
        // Without a subject, and with the origin's default port or a trailing slash.
        #expect(try await verify(try await signed(audience: "https://PUSH.example.com:443/", subject: nil)).success != nil)
    }

    @Test("Expired, too long, and exp-less tokens are refused; a minute of clock skew is allowed (NT-3)")
    func expiry() async throws {
        #expect(try await verify(try await signed(expiration: now - 3600)).failure == .expired(now - 3600))
        #expect(try await verify(try await signed(expiration: now - 30)).success != nil)
        #expect(try await verify(try await signed(expiration: now + 24 * 3600)).success != nil)
        #expect(try await verify(try await signed(expiration: now + 25 * 3600)).failure == .expiryTooFar(now + 25 * 3600))
        let noExpiry = try await VAPIDSigner(privateKey: WebPushFixture.vapidKey).sign(VAPIDClaims(aud: origin, exp: nil, sub: nil))
        let key = Base64URL.encode(WebPushFixture.vapidKey.publicKey.x963Representation)
        #expect(try await verify("vapid t=\(noExpiry), k=\(key)").failure == .missingExpiry)
    }

    @Test("A token for another origin is refused; configured public origins are accepted (NT-3)")
    func audience() async throws {
        let header = try await signed(audience: "https://other.example.com")
        #expect(try await verify(header).failure == .wrongAudience("https://other.example.com", expected: [origin]))
        #expect(try await verify(header, origins: [origin, "https://other.example.com"]).success != nil)
        #expect(try await verify(try await signed(audience: "http://push.example.com")).failure != nil)
    }

    @Test("A token signed by another key than k is refused (NT-3)")
    func wrongKey() async throws {
        let token = try await VAPIDSigner(privateKey: WebPushFixture.otherVapidKey).token(audience: origin, expiration: now + 60)
        let key = Base64URL.encode(WebPushFixture.vapidKey.publicKey.x963Representation)
        guard case .invalidToken = try await verify("vapid t=\(token), k=\(key)").failure else {
            Issue.record("A token signed by another key verified")
            return
        }
    }

    @Test("A subject that is neither mailto: nor https: is refused (NT-3)")
    func badSubject() async throws {
        #expect(try await verify(try await signed(subject: "http://example.com")).failure == .badSubject("http://example.com"))
        #expect(try await verify(try await signed(subject: "https://example.com/contact")).success != nil)
    }

    @Test("Malformed VAPID headers are errors; other schemes and no header are no credentials (NT-3)")
    func parsing() throws {
        let key = Base64URL.encode(WebPushFixture.vapidKey.publicKey.x963Representation)
        #expect(try VAPIDCredentials.parse(authorization: nil, cryptoKey: nil) == nil)
        #expect(try VAPIDCredentials.parse(authorization: "Bearer abc", cryptoKey: nil) == nil)
        #expect(try VAPIDCredentials.parse(authorization: "vapid t=a.b.c,k=\(key)", cryptoKey: nil)?.token == "a.b.c")
        let malformed = [
            ("vapid t=a.b.c", nil), ("vapid k=\(key)", nil), ("vapid t=a.b.c, k=AAAA", nil), ("vapid t", nil),
            ("vapid t=a.b.c, k=\(key.dropLast(2))", nil), ("WebPush a.b.c", nil), ("WebPush a.b.c", "dh=\(key)"), ("WebPush", "p256ecdsa=\(key)"),
        ]
        for (authorization, cryptoKey) in malformed {
            #expect(throws: VAPIDError.self, "\(authorization)") {
                try VAPIDCredentials.parse(authorization: authorization, cryptoKey: cryptoKey)
            }
        }
    }

    @Test("A JWT that does not parse or is not ES256 is refused as invalid (NT-3)")
    func notES256() async throws {
        let key = Base64URL.encode(WebPushFixture.vapidKey.publicKey.x963Representation)
        let hs256 = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJhdWQiOiJodHRwczovL3B1c2guZXhhbXBsZS5jb20iLCJleHAiOjF9.c2ln"
        for token in ["not-a-jwt", hs256] {
            guard case .invalidToken = try await verify("vapid t=\(token), k=\(key)").failure else {
                Issue.record("\(token) verified")
                continue
            }
        }
    }

    @Test("Origins compare without case, default ports and a trailing slash (NT-3)")
    func origins() {
        #expect(VAPIDVerifier.normalizedOrigin("HTTPS://Push.Example.com:443/") == "https://push.example.com")
        #expect(VAPIDVerifier.normalizedOrigin("http://a:80") == "http://a")
        #expect(VAPIDVerifier.normalizedOrigin("http://a:8080") == "http://a:8080")
        #expect(VAPIDVerifier.normalizedOrigin("https://a:80") == "https://a:80")
    }
}
