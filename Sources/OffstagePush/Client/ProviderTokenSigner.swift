import Foundation
import JWTKit
import Synchronization

/// Signs provider tokens (ES256 JWTs with `kid`, `iss`, `iat`) with jwt-kit, and reuses each for a while.
///
/// APNs refuses tokens older than an hour and refreshing more often than every 20 minutes, so a token is reused
/// for ``refreshInterval`` (50 minutes by default) and then replaced.
public final class ProviderTokenSigner: Sendable {
    /// The key id (`kid`).
    public let keyID: String
    /// The team id (`iss`).
    public let teamID: String
    /// How long a signed token is reused.
    public let refreshInterval: TimeInterval

    private let keys: JWTKeyCollection
    private let current = Mutex<(token: String, issuedAt: Date)?>(nil)

    /// Creates a signer from a P-256 private key PEM (the `.p8` file: PKCS#8).
    public init(keyID: String, teamID: String, privateKeyPEM: String, refreshInterval: TimeInterval = 50 * 60) async throws {
        let key: ES256PrivateKey
        do {
            key = try ES256PrivateKey(pem: privateKeyPEM)
        } catch {
            throw ProviderClientError(
                description: "The provider key \(keyID) is not a P-256 private key PEM (\(error)); give the .p8 file's contents.")
        }
        self.keyID = keyID
        self.teamID = teamID
        self.refreshInterval = refreshInterval
        self.keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: JWKIdentifier(string: keyID))
    }

    /// The token to send at `now`: the last one while it is younger than ``refreshInterval``, else a new one.
    public func token(now: Date = Date()) async throws -> String {
        if let current = current.withLock({ $0 }), now.timeIntervalSince(current.issuedAt) < refreshInterval,
            now >= current.issuedAt
        {
            return current.token
        }
        let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let token = try await sign(issuedAt: issuedAt)
        current.withLock { $0 = (token, issuedAt) }
        return token
    }

    /// A new token issued at `issuedAt` (not remembered; for tests of stale and future tokens).
    public func sign(issuedAt: Date) async throws -> String {
        try await keys.sign(ProviderTokenClaims(iss: teamID, iat: issuedAt), kid: JWKIdentifier(string: keyID))
    }
}
