import Foundation

/// A Web Push message as the device inbox stores it: the payload of the ``AcceptedPush`` the gateway makes of it,
/// which the SDK reads back.
///
/// ```json
/// {"aps":{"content-available":1},"webpush":{"data":"<base64>","encrypted":false,"topic":"t1","urgency":"normal"}}
/// ```
///
/// `data` is standard base64 of the plaintext, or of the still-encrypted body when the gateway could not decrypt
/// (`encrypted: true`); it is absent for a message without a body, and so is `topic` for a message without one.
public struct WebPushMessage: Sendable, Hashable {
    /// The message's bytes (the plaintext, or the `aes128gcm` body when ``encrypted``); nil for no body.
    public var data: Data?
    /// Whether ``data`` is still encrypted (`aes128gcm`, for the subscriber's keys).
    public var encrypted: Bool
    /// The `Topic`, if any.
    public var topic: String?
    /// The `Urgency`.
    public var urgency: WebPushUrgency

    /// Creates a message.
    public init(data: Data?, encrypted: Bool, topic: String?, urgency: WebPushUrgency) {
        self.data = data
        self.encrypted = encrypted
        self.topic = topic
        self.urgency = urgency
    }

    /// Reads a payload made by ``payload(data:encrypted:topic:urgency:)``.
    public init(payload: Data) throws {
        let decoded: Envelope
        do {
            decoded = try JSONDecoder().decode(Envelope.self, from: payload)
        } catch {
            throw WebPushMessageError(description: "The payload is not a Web Push message ({\"webpush\": {…}}): \(error)")
        }
        var data: Data?
        if let text = decoded.webpush.data {
            guard let bytes = Data(base64Encoded: text) else {
                throw WebPushMessageError(description: "The Web Push message's data is not base64.")
            }
            data = bytes
        }
        guard let urgency = WebPushUrgency(rawValue: decoded.webpush.urgency ?? "normal") else {
            throw WebPushMessageError(description: "The Web Push message's urgency \(decoded.webpush.urgency ?? "") is unknown.")
        }
        self.init(data: data, encrypted: decoded.webpush.encrypted ?? false, topic: decoded.webpush.topic, urgency: urgency)
    }

    /// The data as UTF-8 text, when it is decrypted and is text.
    public var text: String? {
        guard !encrypted, let data else { return nil }
        return String(data: data, encoding: .utf8)
    }

    /// This message as a payload.
    public var payload: Data {
        Self.payload(data: data, encrypted: encrypted, topic: topic, urgency: urgency)
    }

    /// The payload for a message: `{"aps":{"content-available":1},"webpush":{…}}`, UTF-8 JSON with sorted keys.
    /// Empty `data` is written as none.
    public static func payload(data: Data?, encrypted: Bool, topic: String?, urgency: WebPushUrgency) -> Data {
        let envelope = Envelope(
            aps: .init(contentAvailable: 1),
            webpush: .init(
                data: data.flatMap { $0.isEmpty ? nil : $0.base64EncodedString() }, encrypted: encrypted, topic: topic,
                urgency: urgency.rawValue))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings, a bool and an integer always encode.
        return (try? encoder.encode(envelope)) ?? Data()
    }

    private struct Envelope: Codable {
        struct APSPart: Codable {
            var contentAvailable: Int
            enum CodingKeys: String, CodingKey { case contentAvailable = "content-available" }
        }
        struct WebPushPart: Codable {
            var data: String?
            var encrypted: Bool?
            var topic: String?
            var urgency: String?
        }
        var aps: APSPart
        var webpush: WebPushPart
    }
}

/// A payload that is not a Web Push message.
public struct WebPushMessageError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public var description: String
}
