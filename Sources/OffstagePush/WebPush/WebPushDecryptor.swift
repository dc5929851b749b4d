import Crypto
import Foundation

/// Decrypts Web Push messages (RFC 8291, `aes128gcm`) with a subscriber's keys.
///
/// ```swift
/// let plaintext = try WebPushDecryptor(keys: subscription.userAgentKeys!).decrypt(request.body)
/// ```
public struct WebPushDecryptor: Sendable {
    /// The subscriber's keys.
    public let keys: WebPushUserAgentKeys

    /// Creates a decryptor for `keys`.
    public init(keys: WebPushUserAgentKeys) {
        self.keys = keys
    }

    /// The plaintext of `body`, or what is wrong with it.
    public func decrypt(_ body: Data) throws(WebPushDecryptionError) -> Data {
        try decrypt(WebPushEncryptedBody(body))
    }

    /// The plaintext of a parsed body, or what is wrong with it.
    public func decrypt(_ body: WebPushEncryptedBody) throws(WebPushDecryptionError) -> Data {
        if body.record.isEmpty { return Data() }
        let sender: P256.KeyAgreement.PublicKey
        let shared: SharedSecret
        do {
            sender = try P256.KeyAgreement.PublicKey(x963Representation: body.senderPublicKey)
            shared = try keys.privateKey.sharedSecretFromKeyAgreement(with: sender)
        } catch {
            throw .invalidSenderKey(length: body.senderPublicKey.count)
        }
        let (key, nonce) = WebPushKeySchedule.derive(
            sharedSecret: shared, authSecret: keys.authSecret, userAgentPublicKey: keys.publicKey,
            senderPublicKey: body.senderPublicKey, salt: body.salt)
        let padded: Data
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: nonce), ciphertext: body.record.dropLast(WebPushEncryptedBody.tagLength),
                tag: body.record.suffix(WebPushEncryptedBody.tagLength))
            padded = try AES.GCM.open(box, using: key)
        } catch {
            throw .authenticationFailed
        }
        // RFC 8188 §2: content, then the delimiter (2 in the last record), then zero or more zero bytes.
        guard let delimiter = padded.lastIndex(where: { $0 != 0 }), padded[delimiter] == 2 else {
            throw .badPadding
        }
        return Data(padded[padded.startIndex..<delimiter])
    }
}
