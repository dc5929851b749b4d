import Foundation

/// The rules of APNs' provider API ("Sending notification requests to APNs"), as a pure function of a request.
///
/// The checks run in this order, and the first failure is the answer:
/// 1. the path is under `/3/device` (else 404 `BadPath`), the method is POST (405 `MethodNotAllowed`), the path names
///    a token (`MissingDeviceToken`) of 64 hexadecimal digits (`BadDeviceToken`);
/// 2. no header that matters appears twice (`DuplicateHeaders`);
/// 3. `authorization` carries a bearer token (403 `MissingProviderToken`; its verification comes later, in the
///    gateway, because it needs the provider keys);
/// 4. `apns-topic`, `apns-id`, `apns-push-type`, `apns-priority`, `apns-expiration`, `apns-collapse-id`;
/// 5. the payload: not empty, not too large (413), a JSON object with an `aps` dictionary;
/// 6. the push type inferred when absent (background for an `aps` with only `content-available: 1`, else alert), and
///    a background push at priority 5 ("Using priority 10 is an error").
public enum APNsRequestRules {
    /// The path prefix of the provider API.
    public static let pathPrefix = "/3/device"

    /// Expirations past this instant (2200-01-01) are refused: the daemon's instants hold nanoseconds only to 2262.
    public static let latestExpiration: Int64 = 7_258_118_400

    /// Checks `request` against every rule; `now` stamps the push's `receivedAt`.
    public static func validate(_ request: PushHTTPRequest, now: Date) -> Result<ValidatedPush, APNsRefusal> {
        Result { () throws(APNsRefusal) in try validating(request, now: now) }
    }

    /// The `apns-id` a response to `request` carries: the request's when it sent one valid `apns-id`, else a new
    /// lowercase UUID.
    public static func responseID(for request: PushHTTPRequest) -> String {
        let ids = request.values(of: APNsHeaderName.id)
        if ids.count == 1, isCanonicalUUID(ids[0]) { return ids[0] }
        return newID()
    }

    /// A new notification id: a random UUID, lowercase as APNs writes them.
    public static func newID() -> String { UUID().uuidString.lowercased() }

    /// Whether `token` is 64 hexadecimal digits (the shape of an APNs device token).
    public static func isDeviceTokenShaped(_ token: Substring) -> Bool {
        token.utf8.count == 64 && token.utf8.allSatisfy(\.isHexDigit)
    }

    /// Whether `value` is a UUID in its canonical 8-4-4-4-12 hexadecimal form (either case).
    public static func isCanonicalUUID(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard byte == UInt8(ascii: "-") else { return false }
            } else if !byte.isHexDigit {
                return false
            }
        }
        return true
    }

    // MARK: - The checks

    private static func validating(_ request: PushHTTPRequest, now: Date) throws(APNsRefusal) -> ValidatedPush {
        let deviceToken = try checkPathAndMethod(request)
        let single = try singleHeaders(request)
        let providerToken = try bearerToken(single[APNsHeaderName.authorization])
        let topic = try checkTopic(single[APNsHeaderName.topic])
        let apnsID = try checkID(single[APNsHeaderName.id])
        let statedType = try checkPushType(single[APNsHeaderName.pushType])
        let statedPriority = try checkPriority(single[APNsHeaderName.priority])
        let expirationHeader = single[APNsHeaderName.expiration]
        let expiration = try checkExpiration(expirationHeader)
        let collapseID = try checkCollapseID(single[APNsHeaderName.collapseID])
        let aps = try checkPayload(request.body, statedType: statedType)

        let pushType = statedType ?? ((aps.contentAvailable && !aps.interactsWithUser) ? .background : .alert)
        let priority: PushPriority
        if pushType == .background {
            if let statedPriority, statedPriority != .powerConsidered {
                throw APNsRefusal(
                    .badPriority,
                    "A background push (content-available only) must use apns-priority 5, not \(statedPriority.rawValue); send 5 or omit the header."
                )
            }
            priority = .powerConsidered
        } else {
            priority = statedPriority ?? .immediate
        }
        return ValidatedPush(
            apnsID: apnsID, deviceToken: deviceToken, topic: topic, app: pushType.app(forTopic: topic),
            pushType: pushType, priority: priority, expiration: expiration, attemptOnce: expirationHeader == "0",
            collapseID: collapseID, payload: request.body, aps: aps, providerToken: providerToken, receivedAt: now
        )
    }

    /// The device token (lowercased) from a `POST /3/device/<token>`.
    ///
    /// Read in bytes, as HTTP/2 carries them, not in characters: a combining mark after a `/` would otherwise merge
    /// with it into one character, and `/3/device/\u{307}…` would not be under `/3/device/`.
    private static func checkPathAndMethod(_ request: PushHTTPRequest) throws(APNsRefusal) -> String {
        let path = request.path
        let bytes = Array(path.utf8)
        let prefix = Array(pathPrefix.utf8)
        guard bytes.starts(with: prefix) else {
            throw APNsRefusal(.badPath, "The path \(path) is not a provider API path; send to /3/device/<device token>.")
        }
        let rest = bytes[prefix.count...]
        guard rest.isEmpty || rest.first == UInt8(ascii: "/") else {
            throw APNsRefusal(.badPath, "The path \(path) is not a provider API path; send to /3/device/<device token>.")
        }
        guard request.method.utf8.elementsEqual("POST".utf8) else {
            throw APNsRefusal(.methodNotAllowed, "The method \(request.method) is not allowed; send pushes with POST.")
        }
        let token = rest.dropFirst()
        guard !token.isEmpty else {
            throw APNsRefusal(.missingDeviceToken, "The path names no device token; send to /3/device/<device token>.")
        }
        guard !token.contains(UInt8(ascii: "/")) else {
            throw APNsRefusal(.badPath, "The path \(path) has segments after the device token; send to /3/device/<device token>.")
        }
        let text = String(decoding: token, as: UTF8.self)
        guard token.count == 64, token.allSatisfy(\.isHexDigit) else {
            throw APNsRefusal(
                .badDeviceToken,
                "The device token \(text.prefix(80)) is not 64 hexadecimal digits; use the token the app registered."
            )
        }
        return text.lowercased()
    }

    /// The value of each header that must appear at most once.
    private static func singleHeaders(_ request: PushHTTPRequest) throws(APNsRefusal) -> [String: String] {
        var values: [String: String] = [:]
        for field in request.headers where APNsHeaderName.singular.contains(field.name) {
            guard values.updateValue(field.value, forKey: field.name) == nil else {
                throw APNsRefusal(.duplicateHeaders, "The header \(field.name) appears more than once; send it once.")
            }
        }
        return values
    }

    private static func bearerToken(_ authorization: String?) throws(APNsRefusal) -> String {
        guard let authorization else {
            throw APNsRefusal(
                .missingProviderToken,
                "The request has no authorization header; send authorization: bearer <provider JWT signed with your key>."
            )
        }
        // Compared and cut in bytes, not characters: the scheme is ASCII, and a value whose token starts with a
        // combining mark ("bearer \u{301}…") would otherwise merge it with the space into one character.
        let scheme = Array("bearer ".utf8)
        let bytes = Array(authorization.utf8)
        let lowercased = bytes.prefix(scheme.count).map { (65...90).contains($0) ? $0 + 32 : $0 }
        guard bytes.count > scheme.count, lowercased == scheme else {
            throw APNsRefusal(
                .missingProviderToken,
                "The authorization header carries no bearer token; send authorization: bearer <provider JWT>."
            )
        }
        let token = String(decoding: bytes[scheme.count...], as: UTF8.self).trimmingCharacters(in: .whitespaces)
        guard !token.isEmpty else {
            throw APNsRefusal(.missingProviderToken, "The authorization header's bearer token is empty; send the provider JWT.")
        }
        return token
    }

    private static func checkTopic(_ topic: String?) throws(APNsRefusal) -> String {
        guard let topic else {
            throw APNsRefusal(.missingTopic, "The request has no apns-topic header; send the app's bundle identifier.")
        }
        let allowed = topic.utf8.allSatisfy { $0.isASCIIAlphanumeric || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
        guard !topic.isEmpty, topic.utf8.count <= 255, allowed else {
            throw APNsRefusal(
                .badTopic,
                "The apns-topic \(topic.prefix(80)) is not a bundle identifier; use letters, digits, '.', '-' and '_' (at most 255)."
            )
        }
        return topic
    }

    private static func checkID(_ id: String?) throws(APNsRefusal) -> String {
        guard let id else { return newID() }
        guard isCanonicalUUID(id) else {
            throw APNsRefusal(
                .badMessageId,
                "The apns-id \(id.prefix(80)) is not a canonical UUID; send 8-4-4-4-12 hexadecimal digits or omit it."
            )
        }
        return id
    }

    private static func checkPushType(_ value: String?) throws(APNsRefusal) -> PushType? {
        guard let value else { return nil }
        guard let type = PushType(rawValue: value) else {
            let known = PushType.allCases.map(\.rawValue).joined(separator: ", ")
            throw APNsRefusal(.invalidPushType, "The apns-push-type \(value.prefix(80)) is unknown; use one of \(known).")
        }
        return type
    }

    private static func checkPriority(_ value: String?) throws(APNsRefusal) -> PushPriority? {
        guard let value else { return nil }
        guard let priority = PushPriority.allCases.first(where: { String($0.rawValue) == value }) else {
            throw APNsRefusal(.badPriority, "The apns-priority \(value.prefix(80)) is not 10, 5 or 1; send one of those.")
        }
        return priority
    }

    private static func checkExpiration(_ value: String?) throws(APNsRefusal) -> Date? {
        guard let value else { return nil }
        guard !value.isEmpty, value.utf8.count <= 19, value.utf8.allSatisfy(\.isASCIIDigit), let seconds = Int64(value),
            seconds <= latestExpiration
        else {
            throw APNsRefusal(
                .badExpirationDate,
                "The apns-expiration \(value.prefix(80)) is not UNIX seconds from 0 to \(latestExpiration) (2200-01-01); send 0 to not store the push."
            )
        }
        return seconds == 0 ? nil : Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    private static func checkCollapseID(_ value: String?) throws(APNsRefusal) -> String? {
        guard let value else { return nil }
        guard !value.isEmpty, value.utf8.count <= 64 else {
            throw APNsRefusal(
                .badCollapseId,
                "The apns-collapse-id is \(value.utf8.count) bytes; it must be 1 to 64 bytes."
            )
        }
        return value
    }

    private static func checkPayload(_ body: Data, statedType: PushType?) throws(APNsRefusal) -> APS {
        guard !body.isEmpty else {
            throw APNsRefusal(.payloadEmpty, "The payload is empty; send a JSON object with an aps dictionary.")
        }
        let limit = (statedType ?? .alert).maximumPayloadBytes
        guard body.count <= limit else {
            throw APNsRefusal(
                .payloadTooLarge,
                "The payload is \(body.count) bytes; a \((statedType ?? .alert).rawValue) push may carry at most \(limit)."
            )
        }
        return try PayloadParser.parse(body).get()
    }
}

extension UInt8 {
    var isHexDigit: Bool {
        isASCIIDigit || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }
    var isASCIIDigit: Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) }
    var isASCIIAlphanumeric: Bool {
        isASCIIDigit || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self)
    }
}
