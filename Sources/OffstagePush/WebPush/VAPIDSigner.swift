import Crypto
import Foundation
import JWTKit

/// Makes VAPID `Authorization` headers (RFC 8292) as an application server does: for clients, tests and benchmarks.
///
/// ```swift
/// let signer = VAPIDSigner(privateKey: key, subject: "mailto:ops@example.com")
/// let authorization = try await signer.authorization(audience: "https://push.example.com", expiration: Date() + 3600)
/// // Authorization: vapid t=<JWT>, k=<public key>
/// ```
public struct VAPIDSigner: Sendable {
    /// The signing key.
    public let privateKey: P256.Signing.PrivateKey
    /// `sub`: a `mailto:` or `https:` contact, or nil.
    public let subject: String?

    /// Creates a signer.
    public init(privateKey: P256.Signing.PrivateKey, subject: String? = nil) {
        self.privateKey = privateKey
        self.subject = subject
    }

    /// Creates a signer from a 32-byte raw private key.
    public init(privateKeyRaw: Data, subject: String? = nil) throws {
        do {
            self.init(privateKey: try P256.Signing.PrivateKey(rawRepresentation: privateKeyRaw), subject: subject)
        } catch {
            throw WebPushKeyError(description: "The VAPID private key (\(privateKeyRaw.count) bytes) is not a 32-byte P-256 scalar.")
        }
    }

    /// The public key (the subscription's `applicationServerKey`), 65 bytes.
    public var publicKey: Data { privateKey.publicKey.x963Representation }

    /// A signed VAPID JWT for `audience` (the push service's origin) expiring at `expiration`.
    public func token(audience: String, expiration: Date) async throws -> String {
        try await sign(VAPIDClaims(aud: audience, exp: expiration.timeIntervalSince1970.rounded(.down), sub: subject))
    }

    /// A JWT of any claims (tests make tokens without `exp` with it).
    func sign(_ claims: VAPIDClaims) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: try ES256PrivateKey(backing: privateKey))
        return try await keys.sign(claims, header: ["typ": "JWT"])
    }

    /// `vapid t=<JWT>, k=<public key>` for `audience`, expiring at `expiration` (RFC 8292 §3).
    public func authorization(audience: String, expiration: Date) async throws -> String {
        "vapid t=\(try await token(audience: audience, expiration: expiration)), k=\(Base64URL.encode(publicKey))"
    }
}
