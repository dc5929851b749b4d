import Foundation
import JWTKit
import Synchronization

/// How old and how early a provider token may be.
public struct ProviderTokenPolicy: Sendable, Hashable {
    /// A token whose `iat` is older than this is refused `ExpiredProviderToken` (APNs: one hour).
    public var maximumAge: TimeInterval
    /// A token whose `iat` is further than this in the future is refused `InvalidProviderToken`.
    public var allowedClockSkew: TimeInterval
    /// At most this many verified tokens are remembered (expired ones are dropped first).
    public var cacheLimit: Int

    /// Creates a policy; the defaults are APNs' hour, five minutes of skew and 10 000 cached tokens.
    public init(maximumAge: TimeInterval = 3600, allowedClockSkew: TimeInterval = 300, cacheLimit: Int = 10_000) {
        self.maximumAge = maximumAge
        self.allowedClockSkew = allowedClockSkew
        self.cacheLimit = cacheLimit
    }
}

/// Who signed a provider token that verified.
public struct VerifiedProvider: Sendable, Hashable {
    /// The key id (`kid`).
    public var keyID: String
    /// The team id (`iss`, equal to the key's team).
    public var teamID: String
    /// The topics the key may push to, or nil for any.
    public var allowedTopics: Set<String>?
    /// The token's `iat`.
    public var issuedAt: Date

    /// Whether the key may push to `topic` (whose app is `app`).
    public func allows(topic: String, app: String) -> Bool {
        guard let allowedTopics else { return true }
        return allowedTopics.contains(app) || allowedTopics.contains(topic)
    }
}

/// Verifies provider tokens (ES256 JWTs with `kid`, `iss`, `iat`) against the backend's keys, with jwt-kit.
///
/// A verified token is remembered by its exact text until `iat` plus the maximum age, so the ECDSA check runs once
/// per token rather than once per push. ``keysChanged(keyID:)`` forgets the tokens of a removed or changed key.
public final class ProviderTokenVerifier: Sendable {
    private struct State {
        var verified: [String: VerifiedProvider] = [:]
        /// Verifications under way, so concurrent first uses of one token check it once.
        var inFlight: [String: Task<VerifiedProvider, any Error>] = [:]
        /// Bumped by every invalidation, so a verification that read a key before it changed is not cached.
        var generation: UInt64 = 0
    }

    private let backend: any PushGatewayBackend
    private let policy: ProviderTokenPolicy
    private let state = Mutex(State())

    /// Creates a verifier reading keys from `backend`.
    public init(backend: any PushGatewayBackend, policy: ProviderTokenPolicy = ProviderTokenPolicy()) {
        self.backend = backend
        self.policy = policy
    }

    /// How many verified tokens are remembered.
    public var cachedTokenCount: Int { state.withLock { $0.verified.count } }

    /// Forgets the verified tokens of `keyID` (of every key when nil): call it when a key is removed or replaced.
    public func keysChanged(keyID: String? = nil) {
        state.withLock { state in
            state.generation &+= 1
            if let keyID {
                state.verified = state.verified.filter { $0.value.keyID != keyID }
            } else {
                state.verified.removeAll()
            }
        }
    }

    /// Verifies `token` (the JWT of `authorization: bearer …`) at `now`.
    public func verify(_ token: String, now: Date) async -> Result<VerifiedProvider, APNsRefusal> {
        let cached: VerifiedProvider? = state.withLock { state in
            guard let provider = state.verified[token] else { return nil }
            if now.timeIntervalSince(provider.issuedAt) > policy.maximumAge {
                state.verified[token] = nil
            }
            return provider
        }
        if let provider = cached {
            return checkAge(provider, now: now)
        }
        do {
            return checkAge(try await verifyOnce(token, now: now), now: now)
        } catch let refusal as APNsRefusal {
            return .failure(refusal)
        } catch {
            return .failure(APNsRefusal(.internalServerError, "The provider keys could not be read: \(error)"))
        }
    }

    private func checkAge(_ provider: VerifiedProvider, now: Date) -> Result<VerifiedProvider, APNsRefusal> {
        let age = now.timeIntervalSince(provider.issuedAt)
        if age > policy.maximumAge {
            return .failure(
                APNsRefusal(
                    .expiredProviderToken,
                    "The provider token was signed \(Int(age)) s ago, more than \(Int(policy.maximumAge)) s; sign a new one."
                ))
        }
        if -age > policy.allowedClockSkew {
            return .failure(
                APNsRefusal(
                    .invalidProviderToken,
                    "The provider token's iat is \(Int(-age)) s in the future; check the server clock and sign with the current time."
                ))
        }
        return .success(provider)
    }

    /// Verifies `token`, joining a verification of the same token already under way; a verified token is
    /// remembered in the same step that ends the verification, so no later caller checks it again.
    private func verifyOnce(_ token: String, now: Date) async throws -> VerifiedProvider {
        let task = state.withLock { state in
            if let running = state.inFlight[token] { return running }
            let generation = state.generation
            // The task cannot finish before it is registered: finishing takes the lock held here.
            let task = Task {
                do {
                    let provider = try await self.verifyUncached(token)
                    self.remember(token, provider, generation: generation, now: now)
                    return provider
                } catch {
                    _ = self.state.withLock { $0.inFlight.removeValue(forKey: token) }
                    throw error
                }
            }
            state.inFlight[token] = task
            return task
        }
        return try await task.value
    }

    private func verifyUncached(_ token: String) async throws -> VerifiedProvider {
        let header: JWTHeader
        let claims: ProviderTokenClaims
        do {
            (header, claims, _) = try DefaultJWTParser().parse(Array(token.utf8), as: ProviderTokenClaims.self)
        } catch {
            throw APNsRefusal(
                .invalidProviderToken,
                "The provider token is not a JWT with iss and iat claims (\(error)); sign {alg: ES256, kid} {iss, iat}."
            )
        }
        guard header.alg == "ES256" else {
            throw APNsRefusal(
                .invalidProviderToken,
                "The provider token's alg is \(header.alg ?? "missing"); provider tokens are signed with ES256."
            )
        }
        guard let kid = header.kid, !kid.isEmpty else {
            throw APNsRefusal(.invalidProviderToken, "The provider token has no kid header; put your key id in kid.")
        }
        guard let key = try await backend.providerKey(id: kid) else {
            throw APNsRefusal(.invalidProviderToken, "No provider key \(kid) is registered; register it with push-keys add.")
        }
        let publicKey: ES256PublicKey
        do {
            publicKey = try ES256PublicKey(pem: key.publicKeyPEM)
        } catch {
            throw APNsRefusal(
                .internalServerError, "The registered provider key \(kid) is not a P-256 public key PEM (\(error)); register it again.")
        }
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: publicKey, kid: JWKIdentifier(string: kid))
        do {
            _ = try await keys.verify(token, as: ProviderTokenClaims.self)
        } catch {
            throw APNsRefusal(
                .invalidProviderToken, "The provider token's signature does not verify with key \(kid); sign with that key's private half.")
        }
        guard claims.iss == key.teamID else {
            throw APNsRefusal(
                .invalidProviderToken, "The provider token's iss \(claims.iss) is not the team \(key.teamID) of key \(kid); put the team id in iss.")
        }
        return VerifiedProvider(keyID: kid, teamID: key.teamID, allowedTopics: key.allowedTopics, issuedAt: claims.iat)
    }

    /// Ends the verification of `token` and remembers its result, unless a key changed meanwhile.
    private func remember(_ token: String, _ provider: VerifiedProvider, generation: UInt64, now: Date) {
        state.withLock { state in
            state.inFlight[token] = nil
            guard state.generation == generation else { return }
            if state.verified.count >= policy.cacheLimit {
                state.verified = state.verified.filter { now.timeIntervalSince($0.value.issuedAt) <= policy.maximumAge }
                if state.verified.count >= policy.cacheLimit { state.verified.removeAll() }
            }
            state.verified[token] = provider
        }
    }
}
