import Foundation

/// Why the Web Push front door refused a request, with its HTTP status code (RFC 8030 and the RFCs it builds on).
///
/// The raw value is the `reason` of the JSON error body; ``WebPushRefusal/message`` says what was wrong and the fix.
public enum WebPushReason: String, Sendable, Hashable, CaseIterable, Codable {
    /// 400: the `TTL` header is missing or repeated (RFC 8030 §5.2 requires it).
    case missingTTL = "MissingTTL"
    /// 400: `TTL` is not a non-negative whole number of seconds.
    case badTTL = "BadTTL"
    /// 400: `Urgency` is not one of very-low, low, normal, high (RFC 8030 §5.3).
    case badUrgency = "BadUrgency"
    /// 400: `Topic` is longer than 32 characters or uses characters outside base64url (RFC 8030 §5.4).
    case badTopic = "BadTopic"
    /// 400: the body is not a well-formed single-record `aes128gcm` message (RFC 8188, RFC 8291 §4).
    case badEncryption = "BadEncryption"
    /// 400: the body does not decrypt with the subscription's keys (RFC 8291).
    case decryptionFailed = "DecryptionFailed"
    /// 401: the subscription requires VAPID and the request carries none (RFC 8292 §4.2).
    case missingAuthorization = "MissingAuthorization"
    /// 403: the VAPID token or key is invalid: a bad signature, the wrong `aud`, an expired or too long `exp`, a bad
    /// `sub`, a malformed header (RFC 8292 §4.2).
    case invalidAuthorization = "InvalidAuthorization"
    /// 403: the VAPID key is not the subscription's `applicationServerKey` (RFC 8292 §4.2).
    case keyMismatch = "KeyMismatch"
    /// 404: the path is not `/push/<subscription id>` with a base64url id of 16 to 128 characters.
    case badPath = "BadPath"
    /// 404: no such subscription.
    case unknownSubscription = "UnknownSubscription"
    /// 404: the message resource is not known (`/m/<id>` with an id that is not a message id).
    case unknownMessage = "UnknownMessage"
    /// 405: the method is not allowed here (POST for pushes; nothing for message resources).
    case methodNotAllowed = "MethodNotAllowed"
    /// 410: the subscription expired or was removed : stop sending to it.
    case subscriptionGone = "SubscriptionGone"
    /// 413: the body is over 4096 bytes, the size RFC 8030 has push services accept.
    case payloadTooLarge = "PayloadTooLarge"
    /// 415: a body without `Content-Encoding: aes128gcm` (RFC 8291 §4; RFC 7231 §6.5.13).
    case unsupportedContentEncoding = "UnsupportedContentEncoding"
    /// 429: too many messages for this subscription (RFC 6585 §4); `Retry-After` says when to retry.
    case tooManyRequests = "TooManyRequests"
    /// 500: the message could not be stored, and nothing was acknowledged.
    case internalServerError = "InternalServerError"
    /// 503: the push service cannot take messages now.
    case serviceUnavailable = "ServiceUnavailable"

    /// The HTTP status code of the response.
    public var status: Int {
        switch self {
        case .missingTTL, .badTTL, .badUrgency, .badTopic, .badEncryption, .decryptionFailed: 400
        case .missingAuthorization: 401
        case .invalidAuthorization, .keyMismatch: 403
        case .badPath, .unknownSubscription, .unknownMessage: 404
        case .methodNotAllowed: 405
        case .subscriptionGone: 410
        case .payloadTooLarge: 413
        case .unsupportedContentEncoding: 415
        case .tooManyRequests: 429
        case .internalServerError: 500
        case .serviceUnavailable: 503
        }
    }
}

/// A refused Web Push request: the reason, what was wrong and the fix, and extra response headers.
public struct WebPushRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// The reason, which decides the status code.
    public var reason: WebPushReason
    /// What was wrong and how to fix it (sent as `message`).
    public var message: String
    /// Extra response headers: `Retry-After` for 429, `Allow` for 405, `Accept-Encoding` for 415.
    public var headers: [PushHeaderField]

    /// Creates a refusal.
    public init(_ reason: WebPushReason, _ message: String, headers: [PushHeaderField] = []) {
        self.reason = reason
        self.message = message
        self.headers = headers
    }

    /// The HTTP status code.
    public var status: Int { reason.status }

    /// The JSON body: `{"reason":"<Reason>","message":"<what was wrong and the fix>"}`.
    public var body: Data { Self.errorBody(reason: reason.rawValue, message: message) }

    /// `{"reason":…,"message":…}`, sorted keys, slashes as they are: the error body of the Web Push front door and
    /// of the device link.
    static func errorBody(reason: String, message: String) -> Data {
        struct Body: Encodable {
            var reason: String
            var message: String
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Two strings always encode.
        return (try? encoder.encode(Body(reason: reason, message: message))) ?? Data()
    }

    /// The whole response: status, `content-type: application/json`, the extra headers and ``body``.
    public var response: PushHTTPResponse {
        PushHTTPResponse(status: status, headers: headers + [PushHeaderField("content-type", "application/json")], body: body)
    }

    /// `"<status> <Reason>: <message>"`.
    public var description: String { "\(status) \(reason.rawValue): \(message)" }
}
