import Crypto
import Foundation

/// An `aes128gcm` body (RFC 8188 §2.1) taken apart and checked as far as it can be without the subscriber's keys:
/// the header, a sender key that is a P-256 point (RFC 8291 §4), and a single record.
///
/// A gateway that does not hold the subscriber's keys (a node of a multi-device gateway) checks this much and
/// forwards the body; the device decrypts it with a ``WebPushDecryptor``.
public struct WebPushEncryptedBody: Sendable, Hashable {
    /// The length of the header before the key id: salt (16), record size (4), key id length (1).
    public static let fixedHeaderLength = 21
    /// The length of the whole RFC 8291 header: the fixed part and a 65-byte key id.
    public static let headerLength = fixedHeaderLength + 65
    /// The smallest record size RFC 8188 allows: one byte of content plus the 16-byte tag and a delimiter.
    public static let minimumRecordSize: UInt32 = 18
    /// The GCM tag length.
    public static let tagLength = 16

    /// The 16-byte salt.
    public var salt: Data
    /// The record size (`rs`).
    public var recordSize: UInt32
    /// The application server's ephemeral public key (the key id), 65 bytes.
    public var senderPublicKey: Data
    /// The encrypted record (ciphertext and tag); empty when the body holds only a header (see ``init(_:)``).
    public var record: Data

    /// Parses and checks `body`.
    ///
    /// A body of a header and no record is accepted: it carries no content (http_ece encrypts an empty message so),
    /// and decrypts to no bytes.
    public init(_ body: Data) throws(WebPushDecryptionError) {
        let bytes = [UInt8](body)
        guard bytes.count >= Self.fixedHeaderLength else {
            throw .headerTooShort(length: bytes.count)
        }
        let recordSize = bytes[16..<20].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard recordSize >= Self.minimumRecordSize else {
            throw .recordSizeTooSmall(recordSize)
        }
        let keyIDLength = Int(bytes[20])
        guard bytes.count >= Self.fixedHeaderLength + keyIDLength else {
            throw .headerTooShort(length: bytes.count)
        }
        let keyID = Data(bytes[Self.fixedHeaderLength..<(Self.fixedHeaderLength + keyIDLength)])
        guard keyIDLength == 65, (try? P256.KeyAgreement.PublicKey(x963Representation: keyID)) != nil else {
            throw .invalidSenderKey(length: keyIDLength)
        }
        let record = Data(bytes[(Self.fixedHeaderLength + keyIDLength)...])
        guard record.count <= Int(recordSize) else {
            throw .multipleRecords(recordSize: recordSize, length: record.count)
        }
        guard record.isEmpty || record.count > Self.tagLength else {
            throw .recordTooShort(length: record.count)
        }
        self.salt = Data(bytes[0..<16])
        self.recordSize = recordSize
        self.senderPublicKey = keyID
        self.record = record
    }
}

/// Why an `aes128gcm` Web Push body cannot be decrypted, or is not shaped like one.
public enum WebPushDecryptionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The body is shorter than its header (21 bytes and the key id).
    case headerTooShort(length: Int)
    /// The header's record size is under 18 (RFC 8188 §2.1).
    case recordSizeTooSmall(UInt32)
    /// The key id is not a 65-byte uncompressed P-256 point (RFC 8291 §4 puts the sender's public key there).
    case invalidSenderKey(length: Int)
    /// The content is longer than one record; RFC 8291 §4 allows a single record only.
    case multipleRecords(recordSize: UInt32, length: Int)
    /// The record is too short to hold its 16-byte tag and a padding delimiter.
    case recordTooShort(length: Int)
    /// The decrypted record does not end in the last record's delimiter 2 followed only by zero bytes.
    case badPadding
    /// The record does not decrypt with the subscriber's keys (other keys, or altered bytes).
    case authenticationFailed

    /// What is wrong and how an application server fixes it.
    public var description: String {
        switch self {
        case .headerTooShort(let length):
            "The body is \(length) bytes, shorter than an aes128gcm header (salt, rs, idlen, keyid); encrypt with RFC 8291."
        case .recordSizeTooSmall(let size):
            "The aes128gcm record size is \(size); it must be at least 18 (RFC 8188)."
        case .invalidSenderKey(let length):
            "The aes128gcm keyid (\(length) bytes) is not the sender's 65-byte uncompressed P-256 public key (RFC 8291 §4)."
        case .multipleRecords(let size, let length):
            "The content (\(length) bytes) is longer than the record size \(size): Web Push allows one record; raise rs or send less."
        case .recordTooShort(let length):
            "The record is \(length) bytes, too short for the 16-byte tag and a padding delimiter."
        case .badPadding:
            "The decrypted record does not end with the final-record delimiter 0x02 and zero padding (RFC 8188 §2)."
        case .authenticationFailed:
            "The message does not decrypt: it was encrypted to other keys than the subscription's p256dh and auth, or altered."
        }
    }
}

/// The key schedule of RFC 8291 §3.4 and RFC 8188 §2.2-2.3: from the ECDH secret to the content key and nonce.
enum WebPushKeySchedule {
    static func derive(
        sharedSecret: SharedSecret, authSecret: Data, userAgentPublicKey: Data, senderPublicKey: Data, salt: Data
    ) -> (key: SymmetricKey, nonce: Data) {
        let keyInfo = Data("WebPush: info".utf8) + [0] + userAgentPublicKey + senderPublicKey
        let inputKey = sharedSecret.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: authSecret, sharedInfo: keyInfo, outputByteCount: 32)
        let contentKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: inputKey, salt: salt, info: Data("Content-Encoding: aes128gcm".utf8) + [0], outputByteCount: 16)
        let nonce = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: inputKey, salt: salt, info: Data("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12)
        return (contentKey, nonce.withUnsafeBytes { Data($0) })
    }
}
