import Foundation

/// A Web Push request that passed the rules that need no storage: what the gateway goes on with.
public struct ValidatedWebPush: Sendable, Hashable {
    /// The subscription id from the path.
    public var subscriptionID: String
    /// The TTL in seconds, capped at the gateway's maximum (the value echoed in the response's `TTL`).
    public var ttl: Int
    /// The urgency (normal when absent).
    public var urgency: WebPushUrgency
    /// The topic, if any.
    public var topic: String?
    /// The body as sent (empty for a message without data).
    public var body: Data
    /// The body taken apart, when there is one.
    public var encryptedBody: WebPushEncryptedBody?
    /// The VAPID credentials: nil when the request carries none, or why they are malformed. Whether that matters
    /// depends on the subscription, so the gateway decides after the lookup.
    public var vapid: Result<VAPIDCredentials?, VAPIDError>
}

/// The rules of RFC 8030 (with RFC 8291's content coding) that are pure functions of a request.
///
/// In order, the first failure answering: the method is POST (405); the path is `/push/<id>` with a base64url id of
/// 16 to 128 characters (404); `TTL` is present once and a non-negative integer (400), capped at `maximumTTL`;
/// `Urgency` is one of very-low, low, normal, high (400); `Topic` is at most 32 base64url characters (400); a body
/// has `Content-Encoding: aes128gcm` (415) and is a well-formed single-record `aes128gcm` message (400). The
/// body's size (413) is the route's to check while it arrives.
public enum WebPushRequestRules {
    /// The path prefix of push resources.
    public static let pathPrefix = "/push/"
    /// The largest body: RFC 8030 has push services accept 4096 bytes and lets them refuse more with 413.
    public static let maximumBodyBytes = 4096
    /// The shortest and longest subscription id.
    public static let subscriptionIDLengths = 16...128

    /// Checks `request`; TTLs over `maximumTTL` seconds are lowered to it.
    public static func validate(_ request: PushHTTPRequest, maximumTTL: Int) -> Result<ValidatedWebPush, WebPushRefusal> {
        Result { () throws(WebPushRefusal) in try validating(request, maximumTTL: maximumTTL) }
    }

    /// Whether `id` is a subscription id: 16 to 128 characters of the base64url alphabet.
    public static func isSubscriptionID(_ id: some StringProtocol) -> Bool {
        subscriptionIDLengths.contains(id.utf8.count) && id.utf8.allSatisfy(Base64URL.isAlphabet)
    }

    /// Whether `topic` is a valid `Topic`: 1 to 32 characters of the base64url alphabet.
    public static func isTopic(_ topic: String) -> Bool {
        (1...32).contains(topic.utf8.count) && topic.utf8.allSatisfy(Base64URL.isAlphabet)
    }

    private static func validating(_ request: PushHTTPRequest, maximumTTL: Int) throws(WebPushRefusal) -> ValidatedWebPush {
        guard request.method == "POST" else {
            throw WebPushRefusal(
                .methodNotAllowed, "The method \(request.method) is not allowed on a push resource; send messages with POST.",
                headers: [PushHeaderField("allow", "POST")])
        }
        let path = request.path.prefix { $0 != "?" }
        let id = path.dropFirst(pathPrefix.count)
        guard path.hasPrefix(pathPrefix), isSubscriptionID(id) else {
            throw WebPushRefusal(
                .badPath, "The path \(path.prefix(200)) is not a push resource; send to /push/<subscription id> as the subscription's endpoint says.")
        }
        let ttl = try checkTTL(request.values(of: "ttl"), maximumTTL: maximumTTL)
        let urgency = try checkUrgency(request.values(of: "urgency"))
        let topic = try checkTopic(request.values(of: "topic"))
        var encrypted: WebPushEncryptedBody?
        if !request.body.isEmpty {
            try checkContentEncoding(request.values(of: "content-encoding"))
            do {
                encrypted = try WebPushEncryptedBody(request.body)
            } catch {
                throw WebPushRefusal(.badEncryption, error.description)
            }
        }
        let vapid = Result { () throws(VAPIDError) in
            try VAPIDCredentials.parse(authorization: request.values(of: "authorization").first, cryptoKey: request.values(of: "crypto-key").first)
        }
        return ValidatedWebPush(
            subscriptionID: String(id), ttl: ttl, urgency: urgency, topic: topic, body: request.body, encryptedBody: encrypted,
            vapid: vapid)
    }

    private static func checkTTL(_ values: [String], maximumTTL: Int) throws(WebPushRefusal) -> Int {
        guard values.count == 1, let value = values.first?.trimmingCharacters(in: .whitespaces) else {
            throw WebPushRefusal(
                .missingTTL,
                values.isEmpty
                    ? "The request has no TTL header; send TTL: <seconds to keep the message> (0: deliver now or drop)."
                    : "The TTL header appears \(values.count) times; send it once.")
        }
        guard !value.isEmpty, value.utf8.allSatisfy(\.isASCIIDigit) else {
            throw WebPushRefusal(.badTTL, "The TTL \(value.prefix(40)) is not a whole number of seconds (0 or more).")
        }
        // Longer than any cap: no need to parse (and no overflow).
        guard value.utf8.count <= 12, let seconds = Int(value) else { return maximumTTL }
        return min(seconds, maximumTTL)
    }

    private static func checkUrgency(_ values: [String]) throws(WebPushRefusal) -> WebPushUrgency {
        guard let value = values.first else { return .normal }
        guard values.count == 1, let urgency = WebPushUrgency(rawValue: value.trimmingCharacters(in: .whitespaces).lowercased()) else {
            throw WebPushRefusal(
                .badUrgency, "The Urgency \(values.joined(separator: ", ").prefix(40)) is not one of very-low, low, normal, high; send one.")
        }
        return urgency
    }

    private static func checkTopic(_ values: [String]) throws(WebPushRefusal) -> String? {
        guard let value = values.first else { return nil }
        guard values.count == 1, isTopic(value) else {
            throw WebPushRefusal(
                .badTopic,
                "The Topic \(values.joined(separator: ", ").prefix(60)) is not 1 to 32 characters of the base64url alphabet (letters, digits, - and _).")
        }
        return value
    }

    private static func checkContentEncoding(_ values: [String]) throws(WebPushRefusal) {
        let accept = [PushHeaderField("accept-encoding", "aes128gcm")]
        guard values.count == 1, let value = values.first?.trimmingCharacters(in: .whitespaces).lowercased() else {
            throw WebPushRefusal(
                .unsupportedContentEncoding,
                "A message with a body needs one Content-Encoding: aes128gcm header; encrypt the body with RFC 8291.", headers: accept)
        }
        guard value == "aes128gcm" else {
            throw WebPushRefusal(
                .unsupportedContentEncoding,
                "The Content-Encoding \(value.prefix(40)) is not supported; encrypt with aes128gcm (RFC 8291), not the older aesgcm.",
                headers: accept)
        }
    }
}
