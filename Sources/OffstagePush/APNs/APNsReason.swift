/// Every reason APNs documents in "Handling notification responses from APNs", with its HTTP status code.
///
/// The raw value is the exact string APNs puts in the `reason` key of an error body, so a client written for APNs
/// recognises each one. A few reasons exist for fidelity only (certificate-based connections, broadcast features,
/// token updates) and the gateway never produces them; their documentation says so.
public enum APNsReason: String, Sendable, Hashable, CaseIterable, Codable {
    // MARK: 400 Bad request

    /// 400: The collapse identifier exceeds the maximum allowed size (64 bytes), or is empty.
    case badCollapseId = "BadCollapseId"
    /// 400: The device token is invalid: not 64 hexadecimal digits, or not a token this gateway issued.
    case badDeviceToken = "BadDeviceToken"
    /// 400: The `apns-expiration` value is invalid (not a whole number of UNIX seconds, or past the year 2200).
    case badExpirationDate = "BadExpirationDate"
    /// 400: The `apns-id` value is invalid (not a canonical 8-4-4-4-12 UUID).
    case badMessageId = "BadMessageId"
    /// 400: The `apns-priority` value is invalid (not 10, 5 or 1), or not allowed for the push type (a background push
    /// must use 5).
    case badPriority = "BadPriority"
    /// 400: The `apns-topic` value is invalid (empty, too long, or with characters a bundle identifier cannot have).
    case badTopic = "BadTopic"
    /// 400: The device token doesn't match the specified topic: the token was issued to another app.
    case deviceTokenNotForTopic = "DeviceTokenNotForTopic"
    /// 400: One or more headers are repeated.
    case duplicateHeaders = "DuplicateHeaders"
    /// 400: Idle timeout. APNs documents it; this gateway closes idle connections without it.
    case idleTimeout = "IdleTimeout"
    /// 400: The `apns-push-type` value is invalid (not one of the documented push types).
    case invalidPushType = "InvalidPushType"
    /// 400: The device token isn't specified in the request `:path`.
    case missingDeviceToken = "MissingDeviceToken"
    /// 400: The `apns-topic` header of the request isn't specified and is required (always, with token
    /// authentication).
    case missingTopic = "MissingTopic"
    /// 400: The message payload is empty. This gateway also answers it for a payload that is not a JSON object with an
    /// `aps` dictionary: APNs documents no reason for a malformed payload, and this is the closest one (the request
    /// carries no usable payload).
    case payloadEmpty = "PayloadEmpty"
    /// 400: Pushing to this topic is not allowed: the provider key is limited to other topics.
    case topicDisallowed = "TopicDisallowed"

    // MARK: 403 Forbidden

    /// 403: The certificate is invalid. Certificate-based authentication is not offered by this gateway.
    case badCertificate = "BadCertificate"
    /// 403: The client certificate is for the wrong environment. Not produced by this gateway.
    case badCertificateEnvironment = "BadCertificateEnvironment"
    /// 403: The provider token is stale: its `iat` is more than one hour old. Sign a new token.
    case expiredProviderToken = "ExpiredProviderToken"
    /// 403: The specified action is not allowed.
    case forbidden = "Forbidden"
    /// 403: The provider token is not valid, or its signature can't be verified: unknown `kid`, an algorithm other
    /// than ES256, `iss` not the key's team, a bad signature, an `iat` in the future, or a malformed token.
    case invalidProviderToken = "InvalidProviderToken"
    /// 403: No provider certificate was used and the `authorization` header is missing or carries no bearer token.
    case missingProviderToken = "MissingProviderToken"
    /// 403: The key ID in the provider token isn't related to the key ID of the token used in the first push of this
    /// connection. Not produced by this gateway: a connection may use tokens of several keys.
    case unrelatedKeyIdInToken = "UnrelatedKeyIdInToken"
    /// 403: The key ID in the provider token doesn't match the environment. This gateway has one environment.
    case badEnvironmentKeyInToken = "BadEnvironmentKeyInToken"

    // MARK: 404, 405

    /// 404: The request contained an invalid `:path` value.
    case badPath = "BadPath"
    /// 405: The specified `:method` value isn't POST.
    case methodNotAllowed = "MethodNotAllowed"

    // MARK: 410 Gone

    /// 410: The device token has expired. Not produced by this gateway: tokens stay valid until revoked.
    case expiredToken = "ExpiredToken"
    /// 410: The device token is inactive for the specified topic (the app was uninstalled). The error body carries
    /// `timestamp`, the revocation time in milliseconds since the epoch.
    case unregistered = "Unregistered"

    // MARK: 413

    /// 413: The message payload is too large: over 4096 bytes, or 5120 bytes for a VoIP push.
    case payloadTooLarge = "PayloadTooLarge"

    // MARK: 429

    /// 429: The provider's authentication token is being updated too often. Not produced by this gateway.
    case tooManyProviderTokenUpdates = "TooManyProviderTokenUpdates"
    /// 429: Too many requests were made consecutively to the same device token (the per-token rate limit).
    case tooManyRequests = "TooManyRequests"

    // MARK: 5xx

    /// 500: An internal server error: the gateway could not store the push, and nothing was acknowledged.
    case internalServerError = "InternalServerError"
    /// 503: The service is unavailable.
    case serviceUnavailable = "ServiceUnavailable"
    /// 503: The APNs server is shutting down.
    case shutdown = "Shutdown"

    /// The HTTP status code APNs answers with this reason.
    public var status: Int {
        switch self {
        case .badCollapseId, .badDeviceToken, .badExpirationDate, .badMessageId, .badPriority, .badTopic,
            .deviceTokenNotForTopic, .duplicateHeaders, .idleTimeout, .invalidPushType, .missingDeviceToken,
            .missingTopic, .payloadEmpty, .topicDisallowed:
            400
        case .badCertificate, .badCertificateEnvironment, .expiredProviderToken, .forbidden, .invalidProviderToken,
            .missingProviderToken, .unrelatedKeyIdInToken, .badEnvironmentKeyInToken:
            403
        case .badPath: 404
        case .methodNotAllowed: 405
        case .expiredToken, .unregistered: 410
        case .payloadTooLarge: 413
        case .tooManyProviderTokenUpdates, .tooManyRequests: 429
        case .internalServerError: 500
        case .serviceUnavailable, .shutdown: 503
        }
    }
}
