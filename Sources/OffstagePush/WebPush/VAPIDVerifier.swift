import Crypto
import Foundation
import JWTKit

/// How strict VAPID checks are.
public struct VAPIDPolicy: Sendable, Hashable {
    /// The furthest `exp` may be ahead of now (RFC 8292 §2: no more than 24 hours).
    public var maximumLifetime: TimeInterval
    /// How far clocks may disagree: `exp` may be this much past, or this much beyond the lifetime.
    public var allowedClockSkew: TimeInterval

    /// Creates a policy; the defaults are 24 hours and one minute.
    public init(maximumLifetime: TimeInterval = 24 * 3600, allowedClockSkew: TimeInterval = 60) {
        self.maximumLifetime = maximumLifetime
        self.allowedClockSkew = allowedClockSkew
    }
}

/// VAPID credentials that verified: the key that signed and the token's claims.
public struct VerifiedVAPID: Sendable, Hashable {
    /// The application server's public key, 65 bytes.
    public var publicKey: Data
    /// `aud`, as sent.
    public var audience: String
    /// `exp`.
    public var expiration: Date
    /// `sub`, when present.
    public var subject: String?
}

/// The claims of a VAPID JWT (RFC 8292 §2).
struct VAPIDClaims: JWTPayload {
    var aud: String?
    var exp: Double?
    var sub: String?

    enum CodingKeys: String, CodingKey { case aud, exp, sub }

    init(aud: String?, exp: Double?, sub: String?) {
        self.aud = aud
        self.exp = exp
        self.sub = sub
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        aud = try container.decodeIfPresent(String.self, forKey: .aud)
        exp = try container.decodeIfPresent(Double.self, forKey: .exp)
        sub = try container.decodeIfPresent(String.self, forKey: .sub)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(aud, forKey: .aud)
        try container.encodeIfPresent(exp.map { Int64($0.rounded(.down)) }, forKey: .exp)
        try container.encodeIfPresent(sub, forKey: .sub)
    }

    /// The checks are the verifier's, which name what is wrong.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// Verifies VAPID credentials (RFC 8292): an ES256 JWT signed by the key the request names, for this push service
/// (`aud`), not expired and not valid for more than 24 hours, with a `mailto:` or `https:` subject if any.
public struct VAPIDVerifier: Sendable {
    /// The policy.
    public let policy: VAPIDPolicy

    /// Creates a verifier.
    public init(policy: VAPIDPolicy = .init()) {
        self.policy = policy
    }

    /// Verifies `credentials` at `now`; `origins` are the origins the push service answers as (the request's, and
    /// any public ones), compared without case and default ports.
    public func verify(_ credentials: VAPIDCredentials, origins: [String], now: Date) async -> Result<VerifiedVAPID, VAPIDError> {
        do {
            return .success(try await verifying(credentials, origins: origins, now: now))
        } catch let error as VAPIDError {
            return .failure(error)
        } catch {
            return .failure(.invalidToken("The VAPID JWT could not be verified: \(error)"))
        }
    }

    private func verifying(_ credentials: VAPIDCredentials, origins: [String], now: Date) async throws -> VerifiedVAPID {
        let header: JWTHeader
        let claims: VAPIDClaims
        do {
            (header, claims, _) = try DefaultJWTParser().parse(Array(credentials.token.utf8), as: VAPIDClaims.self)
        } catch {
            throw VAPIDError.invalidToken("The VAPID token is not a JWT with aud, exp and sub claims (\(error)); sign {alg: ES256} {aud, exp, sub}.")
        }
        guard header.alg == "ES256" else {
            throw VAPIDError.invalidToken("The VAPID JWT's alg is \(header.alg ?? "missing"); VAPID tokens are signed with ES256.")
        }
        let key = try P256.Signing.PublicKey(x963Representation: credentials.publicKey)
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PublicKey(backing: key))
        do {
            _ = try await keys.verify(credentials.token, as: VAPIDClaims.self)
        } catch {
            throw VAPIDError.invalidToken("The VAPID JWT's signature does not verify with the key k; sign with that key's private half.")
        }
        guard let audience = claims.aud else {
            throw VAPIDError.wrongAudience("(none)", expected: origins)
        }
        let wanted = Set(origins.map(Self.normalizedOrigin))
        guard wanted.contains(Self.normalizedOrigin(audience)) else {
            throw VAPIDError.wrongAudience(audience, expected: origins)
        }
        guard let exp = claims.exp, exp.isFinite else { throw VAPIDError.missingExpiry }
        let expiration = Date(timeIntervalSince1970: exp)
        if expiration.timeIntervalSince(now) < -policy.allowedClockSkew {
            throw VAPIDError.expired(expiration)
        }
        if expiration.timeIntervalSince(now) > policy.maximumLifetime + policy.allowedClockSkew {
            throw VAPIDError.expiryTooFar(expiration)
        }
        if let subject = claims.sub {
            let lowercased = subject.lowercased()
            guard lowercased.hasPrefix("mailto:") || lowercased.hasPrefix("https:") else {
                throw VAPIDError.badSubject(subject)
            }
        }
        return VerifiedVAPID(publicKey: credentials.publicKey, audience: audience, expiration: expiration, subject: claims.sub)
    }

    /// `origin` lowercased, without a trailing `/` or the scheme's default port (`:443` for https, `:80` for http).
    public static func normalizedOrigin(_ origin: String) -> String {
        var origin = origin.lowercased()
        if origin.hasSuffix("/") { origin.removeLast() }
        if origin.hasPrefix("https://"), origin.hasSuffix(":443") {
            origin.removeLast(4)
        } else if origin.hasPrefix("http://"), origin.hasSuffix(":80") {
            origin.removeLast(3)
        }
        return origin
    }
}
