import Crypto
import Foundation

/// Encrypts Web Push messages the way an application server does (RFC 8291, `aes128gcm`, one record): for tests,
/// benchmarks and clients.
///
/// ```swift
/// let body = try WebPushEncryptor().encrypt(Data("hello".utf8), p256dh: subscription.p256dh, auth: subscription.auth)
/// // POST it with Content-Encoding: aes128gcm.
/// ```
public struct WebPushEncryptor: Sendable {
    /// The record size written in the header (4096, what RFC 8291 recommends).
    public var recordSize: UInt32

    /// Creates an encryptor.
    public init(recordSize: UInt32 = 4096) {
        self.recordSize = recordSize
    }

    /// The `aes128gcm` body carrying `plaintext` for the subscriber whose public key is `p256dh` (65 bytes) and
    /// whose secret is `auth` (16 bytes).
    ///
    /// - Parameters:
    ///   - salt: 16 bytes; random when nil (give one only to reproduce test vectors).
    ///   - senderKey: the ephemeral key; a new one when nil (give one only to reproduce test vectors).
    ///   - padding: zero bytes added after the delimiter, to hide the plaintext's length.
    public func encrypt(
        _ plaintext: Data, p256dh: Data, auth: Data, salt: Data? = nil, senderKey: P256.KeyAgreement.PrivateKey? = nil,
        padding: Int = 0
    ) throws -> Data {
        let userAgent: P256.KeyAgreement.PublicKey
        do {
            userAgent = try P256.KeyAgreement.PublicKey(x963Representation: p256dh)
        } catch {
            throw WebPushKeyError(description: "The p256dh key (\(p256dh.count) bytes) is not an uncompressed P-256 point.")
        }
        guard auth.count == WebPushUserAgentKeys.authSecretLength else {
            throw WebPushKeyError(description: "The auth secret is \(auth.count) bytes; it must be 16.")
        }
        let salt = salt ?? SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) }
        guard salt.count == 16 else {
            throw WebPushKeyError(description: "The salt is \(salt.count) bytes; it must be 16.")
        }
        let recordLength = plaintext.count + 1 + padding + WebPushEncryptedBody.tagLength
        guard padding >= 0, recordLength <= Int(recordSize), recordSize >= WebPushEncryptedBody.minimumRecordSize else {
            throw WebPushKeyError(
                description: "\(plaintext.count) bytes with \(padding) of padding do not fit one record of \(recordSize) bytes; send less.")
        }
        let sender = senderKey ?? P256.KeyAgreement.PrivateKey()
        let senderPublicKey = sender.publicKey.x963Representation
        let shared = try sender.sharedSecretFromKeyAgreement(with: userAgent)
        let (key, nonce) = WebPushKeySchedule.derive(
            sharedSecret: shared, authSecret: auth, userAgentPublicKey: p256dh, senderPublicKey: senderPublicKey, salt: salt)
        let padded = plaintext + [2] + Data(count: padding)
        let sealed = try AES.GCM.seal(padded, using: key, nonce: AES.GCM.Nonce(data: nonce))
        var body = salt
        body.append(contentsOf: withUnsafeBytes(of: recordSize.bigEndian) { Array($0) })
        body.append(UInt8(senderPublicKey.count))
        body.append(senderPublicKey)
        body.append(sealed.ciphertext)
        body.append(sealed.tag)
        return body
    }
}
