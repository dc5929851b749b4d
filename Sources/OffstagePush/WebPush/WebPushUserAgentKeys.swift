import Crypto
import Foundation

/// A subscriber's Web Push keys (RFC 8291 §2): a P-256 key-agreement key pair and a 16-byte authentication secret.
///
/// The public key (`p256dh`) and the secret (`auth`) go to the application server with the subscription; the
/// private key stays where messages are decrypted (on the device). Store ``privateKeyRaw`` and ``authSecret`` and
/// rebuild the value with ``init(privateKeyRaw:authSecret:)``.
public struct WebPushUserAgentKeys: Sendable, Hashable {
    /// The length of an authentication secret (RFC 8291 §3.2: 16 octets).
    public static let authSecretLength = 16

    /// The key-agreement private key.
    public let privateKey: P256.KeyAgreement.PrivateKey
    /// The authentication secret (`auth`), 16 bytes.
    public let authSecret: Data

    /// New random keys.
    public static func generate() -> WebPushUserAgentKeys {
        let auth = SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) }
        return WebPushUserAgentKeys(privateKey: P256.KeyAgreement.PrivateKey(), authSecret: auth)
    }

    /// Keys from a stored private key (32-byte raw scalar) and authentication secret; throws when either has the
    /// wrong length or the scalar is not a P-256 private key.
    public init(privateKeyRaw: Data, authSecret: Data) throws {
        guard authSecret.count == Self.authSecretLength else {
            throw WebPushKeyError(
                description: "The auth secret is \(authSecret.count) bytes; a Web Push auth secret is \(Self.authSecretLength) random bytes.")
        }
        do {
            self.privateKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: privateKeyRaw)
        } catch {
            throw WebPushKeyError(
                description: "The private key (\(privateKeyRaw.count) bytes) is not a P-256 scalar; store the 32-byte raw representation.")
        }
        self.authSecret = authSecret
    }

    /// Keys from a private key and a 16-byte secret (a wrong length is a programming error).
    public init(privateKey: P256.KeyAgreement.PrivateKey, authSecret: Data) {
        precondition(authSecret.count == Self.authSecretLength, "A Web Push auth secret is 16 bytes")
        self.privateKey = privateKey
        self.authSecret = authSecret
    }

    /// The private key's 32-byte raw scalar, for storage.
    public var privateKeyRaw: Data { privateKey.rawRepresentation }

    /// The public key (`p256dh`), 65 bytes: the uncompressed point (`0x04 || X || Y`).
    public var publicKey: Data { privateKey.publicKey.x963Representation }

    /// Whether both hold the same private key and secret.
    public static func == (lhs: WebPushUserAgentKeys, rhs: WebPushUserAgentKeys) -> Bool {
        lhs.privateKeyRaw == rhs.privateKeyRaw && lhs.authSecret == rhs.authSecret
    }

    /// Hashes the private key and the secret.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(privateKeyRaw)
        hasher.combine(authSecret)
    }
}

/// A Web Push key or secret that cannot be used.
public struct WebPushKeyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong and what to do.
    public var description: String
}
