import Crypto
import Foundation
import Testing

@testable import OffstagePush

/// RFC 8291 message encryption: the RFC's vector, http_ece's messages, round trips and every way a body is wrong
/// (SPEC NT-3).
@Suite("Web Push encryption (NT-3)")
struct WebPushCryptoTests {
    /// RFC 8291 Appendix A.
    enum RFC8291 {
        static let plaintext = "When I grow up, I want to be a watermelon"
        static let senderPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
        static let userAgentPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
        static let userAgentPublic = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
        static let authSecret = "BTBZMqHH6r4Tts7J_aSIgg"
        static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
        static let body =
            "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
    }

    private func b64(_ text: String) throws -> Data { try #require(Base64URL.decode(text)) }

    private func rfcKeys() throws -> WebPushUserAgentKeys {
        try WebPushUserAgentKeys(privateKeyRaw: try b64(RFC8291.userAgentPrivate), authSecret: try b64(RFC8291.authSecret))
    }

    @Test("The RFC 8291 Appendix A message decrypts to its plaintext (NT-3)")
    func rfcDecrypts() throws {
        let keys = try rfcKeys()
        #expect(keys.publicKey == (try b64(RFC8291.userAgentPublic)))
        let plaintext = try WebPushDecryptor(keys: keys).decrypt(try b64(RFC8291.body))
        #expect(String(decoding: plaintext, as: UTF8.self) == RFC8291.plaintext)
    }

    @Test("Encrypting with the RFC's salt and sender key gives the RFC's body byte for byte (NT-3)")
    func rfcEncrypts() throws {
        let sender = try P256.KeyAgreement.PrivateKey(rawRepresentation: try b64(RFC8291.senderPrivate))
        let body = try WebPushEncryptor().encrypt(
            Data(RFC8291.plaintext.utf8), p256dh: try b64(RFC8291.userAgentPublic), auth: try b64(RFC8291.authSecret),
            salt: try b64(RFC8291.salt), senderKey: sender)
        #expect(Base64URL.encode(body) == RFC8291.body)
    }

    @Test("Messages http_ece encrypted decrypt to their plaintext; its empty message is empty (NT-3)")
    func httpECE() throws {
        let keys = try WebPushUserAgentKeys(
            privateKeyRaw: try b64(ForeignFixtures.userAgentPrivateKey), authSecret: try b64(ForeignFixtures.authSecret))
        #expect(Base64URL.encode(keys.publicKey) == ForeignFixtures.userAgentPublicKey)
        let decryptor = WebPushDecryptor(keys: keys)
        let sender = try P256.KeyAgreement.PrivateKey(rawRepresentation: try b64(ForeignFixtures.senderPrivateKey))
        for message in ForeignFixtures.messages where message.name != "multipleRecords" {
            let plaintext = try b64(message.plaintext)
            #expect(try decryptor.decrypt(try b64(message.body)) == plaintext, "\(message.name)")
            if !plaintext.isEmpty {
                // The same inputs give http_ece's bytes: the two implementations agree on every step.
                let ours = try WebPushEncryptor(recordSize: UInt32(message.recordSize)).encrypt(
                    plaintext, p256dh: keys.publicKey, auth: keys.authSecret, salt: try b64(ForeignFixtures.salt), senderKey: sender)
                #expect(Base64URL.encode(ours) == message.body, "\(message.name)")
            }
        }
    }

    @Test("http_ece's message of several records is refused: Web Push allows one (NT-3)")
    func httpECEMultipleRecords() throws {
        let keys = try WebPushUserAgentKeys(
            privateKeyRaw: try b64(ForeignFixtures.userAgentPrivateKey), authSecret: try b64(ForeignFixtures.authSecret))
        let message = try #require(ForeignFixtures.messages.first { $0.name == "multipleRecords" })
        #expect(throws: WebPushDecryptionError.multipleRecords(recordSize: 40, length: try b64(message.body).count - 86)) {
            try WebPushDecryptor(keys: keys).decrypt(try b64(message.body))
        }
    }

    @Test("A round trip gives back the plaintext, with and without padding, up to 3993 bytes in 4096 (NT-3)",
          arguments: [0, 1, 100, 3993])
    func roundTrip(size: Int) throws {
        let keys = WebPushUserAgentKeys.generate()
        let plaintext = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let body = try WebPushEncryptor().encrypt(plaintext, p256dh: keys.publicKey, auth: keys.authSecret)
        #expect(body.count == 86 + size + 17)
        #expect(try WebPushDecryptor(keys: keys).decrypt(body) == plaintext)
        if size + 17 + 50 <= 4096 {
            let padded = try WebPushEncryptor().encrypt(plaintext, p256dh: keys.publicKey, auth: keys.authSecret, padding: 50)
            #expect(try WebPushDecryptor(keys: keys).decrypt(padded) == plaintext)
        }
    }

    @Test("A plaintext that does not fit one record, or a key that is not a point, is refused by the encryptor (NT-3)")
    func tooLargeToEncrypt() {
        let keys = WebPushUserAgentKeys.generate()
        #expect(throws: WebPushKeyError.self) {
            // 4080 bytes, the delimiter and the tag are 4097: over a record of 4096.
            try WebPushEncryptor().encrypt(Data(count: 4080), p256dh: keys.publicKey, auth: keys.authSecret)
        }
        #expect(throws: WebPushKeyError.self) {
            try WebPushEncryptor().encrypt(Data(), p256dh: Data(count: 65), auth: keys.authSecret)
        }
    }

    @Test("Keys survive storage as raw bytes; wrong lengths are refused with what is wrong (NT-3)")
    func keysFromStorage() throws {
        let keys = WebPushUserAgentKeys.generate()
        #expect(keys.publicKey.count == 65 && keys.publicKey.first == 4)
        #expect(keys.authSecret.count == 16)
        let restored = try WebPushUserAgentKeys(privateKeyRaw: keys.privateKeyRaw, authSecret: keys.authSecret)
        #expect(restored == keys)
        #expect(restored.publicKey == keys.publicKey)
        #expect(throws: WebPushKeyError.self) { try WebPushUserAgentKeys(privateKeyRaw: keys.privateKeyRaw, authSecret: Data(count: 15)) }
        #expect(throws: WebPushKeyError.self) { try WebPushUserAgentKeys(privateKeyRaw: Data(count: 31), authSecret: keys.authSecret) }
    }

    // MARK: - Every decryption error

    private let keys = WebPushUserAgentKeys.generate()

    private func body(_ plaintext: String = "hi", to keys: WebPushUserAgentKeys? = nil) throws -> Data {
        let keys = keys ?? self.keys
        return try WebPushEncryptor().encrypt(Data(plaintext.utf8), p256dh: keys.publicKey, auth: keys.authSecret)
    }

    private func expectError(_ error: WebPushDecryptionError, _ body: Data) {
        #expect(throws: error) { try WebPushDecryptor(keys: keys).decrypt(body) }
    }

    @Test("A body shorter than its header is refused as such (NT-3)")
    func headerTooShort() throws {
        expectError(.headerTooShort(length: 20), Data(count: 20))
        expectError(.headerTooShort(length: 40), try body().prefix(40))
    }

    @Test("A record size under 18 is refused (NT-3)")
    func recordSizeTooSmall() throws {
        var bytes = try body()
        bytes.replaceSubrange(16..<20, with: [0, 0, 0, 17])
        expectError(.recordSizeTooSmall(17), bytes)
    }

    @Test("A keyid that is not a 65-byte P-256 point is refused (NT-3)")
    func invalidSenderKey() throws {
        var short = try body()
        short[20] = 64
        expectError(.invalidSenderKey(length: 64), short)
        var offCurve = try body()
        offCurve[21 + 64] ^= 0x01  // The point's last byte changed: no longer on the curve.
        expectError(.invalidSenderKey(length: 65), offCurve)
    }

    @Test("Content longer than the record size (a second record) is refused (NT-3)")
    func multipleRecords() throws {
        var bytes = try body("a message longer than its record")
        bytes.replaceSubrange(16..<20, with: [0, 0, 0, 18])
        expectError(.multipleRecords(recordSize: 18, length: bytes.count - 86), bytes)
    }

    @Test("A record shorter than its tag is refused (NT-3)")
    func recordTooShort() throws {
        expectError(.recordTooShort(length: 10), try body().prefix(86 + 10))
    }

    @Test("A record without the last-record delimiter is refused as bad padding (NT-3)", arguments: [[1], [0, 0], [7, 0]])
    func badPadding(tail: [UInt8]) throws {
        // Encrypted with the right keys, so only the padding is wrong.
        let sender = P256.KeyAgreement.PrivateKey()
        let salt = Data(repeating: 9, count: 16)
        let (key, nonce) = WebPushKeySchedule.derive(
            sharedSecret: try sender.sharedSecretFromKeyAgreement(with: keys.privateKey.publicKey), authSecret: keys.authSecret,
            userAgentPublicKey: keys.publicKey, senderPublicKey: sender.publicKey.x963Representation, salt: salt)
        let sealed = try AES.GCM.seal(Data("hi".utf8) + tail, using: key, nonce: AES.GCM.Nonce(data: nonce))
        let bytes = salt + [0, 0, 16, 0, 65] + sender.publicKey.x963Representation + sealed.ciphertext + sealed.tag
        expectError(.badPadding, bytes)
    }

    @Test("A message altered in flight, or encrypted to other keys, fails authentication (NT-3)")
    func authenticationFailed() throws {
        var altered = try body()
        altered[altered.count - 1] ^= 0x80
        expectError(.authenticationFailed, altered)
        expectError(.authenticationFailed, try body(to: .generate()))
        var otherSalt = try body()
        otherSalt[0] ^= 1
        expectError(.authenticationFailed, otherSalt)
    }

    @Test("Every decryption error says what is wrong and the fix (NT-3)")
    func descriptions() {
        let errors: [WebPushDecryptionError] = [
            .headerTooShort(length: 3), .recordSizeTooSmall(2), .invalidSenderKey(length: 1), .multipleRecords(recordSize: 18, length: 99),
            .recordTooShort(length: 5), .badPadding, .authenticationFailed,
        ]
        #expect(Set(errors.map(\.description)).count == errors.count)
        #expect(errors.allSatisfy { $0.description.count > 40 })
    }
}
