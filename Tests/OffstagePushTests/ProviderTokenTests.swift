import Crypto
import Foundation
import Testing

@testable import OffstagePush

/// Provider tokens (SPEC NT-3, token authentication): ES256 JWTs with kid, iss and iat, verified against registered
/// keys, cached, and forgotten when a key changes.
@Suite("Provider tokens (NT-3)")
struct ProviderTokenTests {
    private func verifier() async -> (ProviderTokenVerifier, RecordingBackend) {
        let backend = RecordingBackend()
        await backend.add(Fixture.key)
        return (ProviderTokenVerifier(backend: backend), backend)
    }

    private func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// A JWT assembled by hand (for algorithms and shapes the signer never makes).
    private func handMade(header: String, claims: String, sign: (Data) throws -> Data) rethrows -> String {
        let input = base64URL(Data(header.utf8)) + "." + base64URL(Data(claims.utf8))
        return input + "." + base64URL(try sign(Data(input.utf8)))
    }

    @Test("A token signed with the registered key, its team and a fresh iat verifies (NT-3)")
    func good() async throws {
        let (verifier, _) = await verifier()
        let provider = try await verifier.verify(Fixture.providerToken(), now: Fixture.now).get()
        #expect(provider.keyID == Fixture.keyID)
        #expect(provider.teamID == Fixture.team)
        #expect(provider.issuedAt == Fixture.now)
    }

    @Test("A token whose iat is over an hour old is refused 403 ExpiredProviderToken; one hour exactly is accepted (NT-3)")
    func expired() async throws {
        let (verifier, _) = await verifier()
        let stale = try await Fixture.providerToken(issuedAt: Fixture.now - 3601)
        let refusal = await verifier.verify(stale, now: Fixture.now).failure
        #expect(refusal?.reason == .expiredProviderToken)
        #expect(refusal?.status == 403)
        let hourOld = try await Fixture.providerToken(issuedAt: Fixture.now - 3600)
        #expect(await verifier.verify(hourOld, now: Fixture.now).success != nil)
    }

    @Test("A token whose iat is more than five minutes ahead is refused InvalidProviderToken; a minute ahead is accepted (NT-3)")
    func future() async throws {
        let (verifier, _) = await verifier()
        let ahead = try await Fixture.providerToken(issuedAt: Fixture.now + 301)
        #expect(await verifier.verify(ahead, now: Fixture.now).failure?.reason == .invalidProviderToken)
        let skewed = try await Fixture.providerToken(issuedAt: Fixture.now + 60)
        #expect(await verifier.verify(skewed, now: Fixture.now).success != nil)
    }

    @Test("A token naming an unregistered kid is refused InvalidProviderToken (NT-3)")
    func unknownKid() async throws {
        let (verifier, _) = await verifier()
        let token = try await Fixture.signer(keyID: "OTHERKEY00").sign(issuedAt: Fixture.now)
        #expect(await verifier.verify(token, now: Fixture.now).failure?.reason == .invalidProviderToken)
    }

    @Test("A token whose iss is not the key's team is refused InvalidProviderToken (NT-3)")
    func wrongTeam() async throws {
        let (verifier, _) = await verifier()
        let token = try await Fixture.signer(team: "OTHERTEAM0").sign(issuedAt: Fixture.now)
        #expect(await verifier.verify(token, now: Fixture.now).failure?.reason == .invalidProviderToken)
    }

    @Test("A token signed by another key under the registered kid is refused InvalidProviderToken (NT-3)")
    func wrongKey() async throws {
        let (verifier, _) = await verifier()
        let token = try await Fixture.signer(privateKeyPEM: ProviderKeyPair.generate().privateKeyPEM).sign(issuedAt: Fixture.now)
        #expect(await verifier.verify(token, now: Fixture.now).failure?.reason == .invalidProviderToken)
    }

    @Test("A token with another alg is refused InvalidProviderToken, even HS256 keyed with the public key (NT-3)")
    func wrongAlgorithm() async throws {
        let (verifier, _) = await verifier()
        let claims = #"{"iss":"\#(Fixture.team)","iat":\#(Int(Fixture.now.timeIntervalSince1970))}"#
        let hmac = handMade(header: #"{"alg":"HS256","kid":"\#(Fixture.keyID)"}"#, claims: claims) { input in
            Data(HMAC<SHA256>.authenticationCode(for: input, using: SymmetricKey(data: Data(Fixture.keyPair.publicKeyPEM.utf8))))
        }
        #expect(await verifier.verify(hmac, now: Fixture.now).failure?.reason == .invalidProviderToken)
        let none = handMade(header: #"{"alg":"none","kid":"\#(Fixture.keyID)"}"#, claims: claims) { _ in Data() }
        #expect(await verifier.verify(none, now: Fixture.now).failure?.reason == .invalidProviderToken)
        // A real ES256 signature under a header claiming ES384.
        let key = try P256.Signing.PrivateKey(pemRepresentation: Fixture.keyPair.privateKeyPEM)
        let relabelled = try handMade(header: #"{"alg":"ES384","kid":"\#(Fixture.keyID)"}"#, claims: claims) { input in
            try key.signature(for: input).rawRepresentation
        }
        #expect(await verifier.verify(relabelled, now: Fixture.now).failure?.reason == .invalidProviderToken)
        // The same signature under an ES256 header verifies: only the alg was wrong.
        let proper = try handMade(header: #"{"alg":"ES256","kid":"\#(Fixture.keyID)"}"#, claims: claims) { input in
            try key.signature(for: input).rawRepresentation
        }
        #expect(await verifier.verify(proper, now: Fixture.now).success != nil)
    }

    @Test("A token with a tampered signature or claims is refused InvalidProviderToken (NT-3)")
    func tampered() async throws {
        let (verifier, _) = await verifier()
        let token = try await Fixture.providerToken()
        var parts = token.split(separator: ".").map(String.init)
        var signature = Array(parts[2])
        signature[10] = signature[10] == "A" ? "B" : "A"
        let badSignature = [parts[0], parts[1], String(signature)].joined(separator: ".")
        #expect(await verifier.verify(badSignature, now: Fixture.now).failure?.reason == .invalidProviderToken)
        parts[1] = base64URL(Data(#"{"iss":"\#(Fixture.team)","iat":\#(Int(Fixture.now.timeIntervalSince1970) + 10)}"#.utf8))
        #expect(await verifier.verify(parts.joined(separator: "."), now: Fixture.now).failure?.reason == .invalidProviderToken)
    }

    @Test("A malformed token is refused InvalidProviderToken (NT-3)", arguments: ["abc", "a.b.c", "..", "e30.e30.", "eyJhbGciOiJFUzI1NiJ9.e30.AAAA"])
    func malformed(token: String) async {
        let (verifier, _) = await verifier()
        #expect(await verifier.verify(token, now: Fixture.now).failure?.reason == .invalidProviderToken)
    }

    @Test("A verified token is cached: the key is read once for many pushes (NT-3)")
    func cached() async throws {
        let (verifier, backend) = await verifier()
        let token = try await Fixture.providerToken()
        for offset in 0..<5 {
            #expect(await verifier.verify(token, now: Fixture.now + Double(offset)).success != nil)
        }
        #expect(await backend.keyLookups == 1)
        #expect(verifier.cachedTokenCount == 1)
    }

    @Test("Concurrent first uses of one token read its key once (NT-3)")
    func coalesced() async throws {
        let (verifier, backend) = await verifier()
        let token = try await Fixture.providerToken()
        let verified = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<50 {
                group.addTask { await verifier.verify(token, now: Fixture.now).success != nil }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(verified == 50)
        #expect(await backend.keyLookups == 1)
    }

    @Test("A cached token still expires an hour after its iat (NT-3)")
    func cachedExpiry() async throws {
        let (verifier, _) = await verifier()
        let token = try await Fixture.providerToken()
        #expect(await verifier.verify(token, now: Fixture.now).success != nil)
        #expect(await verifier.verify(token, now: Fixture.now + 3601).failure?.reason == .expiredProviderToken)
        #expect(verifier.cachedTokenCount == 0)
    }

    @Test("Removing a key and saying so stops its cached tokens at once (NT-3)")
    func invalidation() async throws {
        let (verifier, backend) = await verifier()
        let token = try await Fixture.providerToken()
        #expect(await verifier.verify(token, now: Fixture.now).success != nil)
        await backend.removeKey(id: Fixture.keyID)
        // Not told yet: the cache still answers.
        #expect(await verifier.verify(token, now: Fixture.now).success != nil)
        verifier.keysChanged(keyID: "SOMEOTHER0")
        #expect(await verifier.verify(token, now: Fixture.now).success != nil)
        verifier.keysChanged(keyID: Fixture.keyID)
        #expect(await verifier.verify(token, now: Fixture.now).failure?.reason == .invalidProviderToken)
        await backend.add(Fixture.key)
        #expect(await verifier.verify(token, now: Fixture.now).success != nil)
        verifier.keysChanged()
        #expect(verifier.cachedTokenCount == 0)
    }

    @Test("A key store that fails answers 500 InternalServerError, not a token error (NT-3)")
    func storeFailure() async throws {
        let (verifier, backend) = await verifier()
        await backend.setKeyLookupFails(true)
        #expect(await verifier.verify(try await Fixture.providerToken(), now: Fixture.now).failure?.reason == .internalServerError)
    }

    @Test("The signer reuses its token for 50 minutes, then signs a new one (NT-3)")
    func signerReuse() async throws {
        let signer = try await Fixture.signer()
        let first = try await signer.token(now: Fixture.now)
        #expect(try await signer.token(now: Fixture.now + 49 * 60) == first)
        let second = try await signer.token(now: Fixture.now + 50 * 60)
        #expect(second != first)
        let (verifier, _) = await verifier()
        #expect(await verifier.verify(second, now: Fixture.now + 50 * 60).success?.issuedAt == Fixture.now + 50 * 60)
    }

    @Test("A generated key pair is PKCS#8 PEM (as Apple's .p8) with its public PEM (NT-3)")
    func keyPair() throws {
        let pair = ProviderKeyPair.generate()
        #expect(pair.privateKeyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        #expect(pair.publicKeyPEM.hasPrefix("-----BEGIN PUBLIC KEY-----"))
        #expect(try ProviderKeyPair.publicKeyPEM(ofPrivateKeyPEM: pair.privateKeyPEM) == pair.publicKeyPEM)
        #expect(ProviderKeyPair.generate() != pair)
    }
}
