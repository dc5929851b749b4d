import Foundation
import Logging

/// The settings of the Web Push front door.
public struct WebPushGatewayConfiguration: Sendable, Hashable {
    /// The longest TTL kept; longer ones are lowered to it and the response's `TTL` says so (RFC 8030 §5.2).
    public var maximumTTL: Int
    /// The per-subscription rate limit (429 beyond it).
    public var rateLimit: TokenBucketLimiter.Limit
    /// VAPID's expiry rules.
    public var vapidPolicy: VAPIDPolicy
    /// Origins (`https://push.example.com`) VAPID tokens may name as `aud` besides the one each request reached:
    /// the public name of a gateway behind a proxy that terminates TLS or rewrites `Host`.
    public var publicOrigins: [String]

    /// Creates a configuration; the defaults are 28 days, 100 messages a second per subscription (200 at once),
    /// VAPID's 24 hours, and no public origins.
    public init(
        maximumTTL: Int = 28 * 24 * 3600, rateLimit: TokenBucketLimiter.Limit = .init(), vapidPolicy: VAPIDPolicy = .init(),
        publicOrigins: [String] = []
    ) {
        self.maximumTTL = maximumTTL
        self.rateLimit = rateLimit
        self.vapidPolicy = vapidPolicy
        self.publicOrigins = publicOrigins
    }
}

/// The Web Push push service (RFC 8030, with RFC 8291 encryption and RFC 8292 VAPID) without the transport: a
/// request in, a response out.
///
/// In order: ``WebPushRequestRules``; the subscription (404 unknown, 410 gone); VAPID (401 missing where the
/// subscription is restricted, 403 invalid or another key); the per-subscription rate limit (429); decryption when
/// the subscription carries the subscriber's keys (400, nothing stored); and the backend's durable accept. Only a
/// message the backend stored is answered 201 Created, with `Location: <origin>/m/<message id>` and the `TTL` kept.
public final class WebPushGateway: Sendable {
    private let backend: any WebPushBackend
    private let configuration: WebPushGatewayConfiguration
    private let verifier: VAPIDVerifier
    private let limiter: TokenBucketLimiter
    private let logger: Logger
    private let now: @Sendable () -> Date

    /// Creates a gateway over `backend`; `now` is the clock (tests pass their own).
    public init(
        backend: any WebPushBackend,
        configuration: WebPushGatewayConfiguration = .init(),
        logger: Logger = Logger(label: "offstage.push.webpush"),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.backend = backend
        self.configuration = configuration
        self.verifier = VAPIDVerifier(policy: configuration.vapidPolicy)
        self.limiter = TokenBucketLimiter(limit: configuration.rateLimit)
        self.logger = logger
        self.now = now
    }

    /// Answers `request`: 201 with `Location` and `TTL`, or the refusal's status and JSON body.
    public func handle(_ request: PushHTTPRequest) async -> PushHTTPResponse {
        switch await process(request) {
        case .success(let push):
            let ttl = push.expiration.map { Int($0.timeIntervalSince(push.acceptedAt).rounded()) } ?? 0
            return PushHTTPResponse(
                status: 201,
                headers: [
                    PushHeaderField("location", "\(request.origin)/m/\(push.apnsID)"), PushHeaderField("ttl", String(ttl)),
                ])
        case .failure(let refusal):
            if refusal.status >= 500 {
                logger.error("Web Push message refused", metadata: ["refusal": "\(refusal)"])
            } else {
                logger.debug("Web Push message refused", metadata: ["refusal": "\(refusal)"])
            }
            return refusal.response
        }
    }

    /// Runs every check on `request` and, when all pass, has the backend store the message.
    public func process(_ request: PushHTTPRequest) async -> Result<AcceptedPush, WebPushRefusal> {
        let receivedAt = now()
        let push: ValidatedWebPush
        switch WebPushRequestRules.validate(request, maximumTTL: configuration.maximumTTL) {
        case .success(let valid): push = valid
        case .failure(let refusal): return .failure(refusal)
        }
        let subscription: WebPushSubscription
        do {
            switch try await backend.lookUp(subscription: push.subscriptionID) {
            case .unknown:
                return .failure(
                    WebPushRefusal(.unknownSubscription, "No subscription \(push.subscriptionID) exists; use the endpoint of a live subscription."))
            case .gone(let at):
                return .failure(
                    WebPushRefusal(
                        .subscriptionGone,
                        "The subscription ended at \(Int64(at.timeIntervalSince1970)) (unsubscribed or uninstalled); stop sending to it."))
            case .active(let found):
                subscription = found
            }
        } catch {
            return .failure(WebPushRefusal(.internalServerError, "The subscription could not be looked up: \(error)"))
        }
        if let refusal = await checkVAPID(push.vapid, subscription: subscription, request: request, now: receivedAt) {
            return .failure(refusal)
        }
        guard limiter.take(subscription.id, now: receivedAt) else {
            let wait = max(1, Int((1 / max(configuration.rateLimit.ratePerSecond, 1e-9)).rounded(.up)))
            return .failure(
                WebPushRefusal(
                    .tooManyRequests, "Too many messages to subscription \(subscription.id); retry after \(wait) s.",
                    headers: [PushHeaderField("retry-after", String(min(wait, 86_400)))]))
        }
        var data: Data? = push.body.isEmpty ? nil : push.body
        var encrypted = data != nil
        if let keys = subscription.userAgentKeys, let body = push.encryptedBody {
            do {
                data = try WebPushDecryptor(keys: keys).decrypt(body)
                encrypted = false
            } catch {
                return .failure(WebPushRefusal(.decryptionFailed, error.description))
            }
        }
        let accepted = AcceptedPush(
            apnsID: APNsRequestRules.newID(), token: subscription.id, app: subscription.app, device: subscription.device,
            pushType: .background, priority: push.urgency.priority,
            expiration: push.ttl == 0 ? nil : receivedAt.addingTimeInterval(TimeInterval(push.ttl)), collapseID: push.topic,
            payload: WebPushMessage.payload(data: data, encrypted: encrypted, topic: push.topic, urgency: push.urgency),
            aps: APS(contentAvailable: true), acceptedAt: receivedAt, attemptOnce: push.ttl == 0)
        do {
            switch try await backend.accept(accepted) {
            case .stored: return .success(accepted)
            case .refused(let refusal): return .failure(Self.refusal(for: refusal))
            }
        } catch {
            return .failure(WebPushRefusal(.internalServerError, "The message could not be stored: \(error)"))
        }
    }

    /// The VAPID answer for this subscription, or nil when the request may go on.
    private func checkVAPID(
        _ parsed: Result<VAPIDCredentials?, VAPIDError>, subscription: WebPushSubscription, request: PushHTTPRequest, now: Date
    ) async -> WebPushRefusal? {
        let credentials: VAPIDCredentials
        switch parsed {
        case .failure(let error):
            return WebPushRefusal(.invalidAuthorization, error.description)
        case .success(nil):
            guard subscription.applicationServerKey == nil else {
                return WebPushRefusal(.missingAuthorization, VAPIDError.missing.description + " The subscription is restricted to an application server key.")
            }
            return nil
        case .success(let present?):
            credentials = present
        }
        var origins = configuration.publicOrigins
        if !request.authority.isEmpty { origins.insert(request.origin, at: 0) }
        if case .failure(let error) = await verifier.verify(credentials, origins: origins, now: now) {
            return WebPushRefusal(.invalidAuthorization, error.description)
        }
        if let key = subscription.applicationServerKey, key != credentials.publicKey {
            return WebPushRefusal(
                .keyMismatch,
                "The VAPID key is not the applicationServerKey the subscription was made with; sign with that key.")
        }
        return nil
    }

    /// The Web Push refusal for a backend's APNs refusal, by its status.
    static func refusal(for refusal: APNsRefusal) -> WebPushRefusal {
        switch refusal.status {
        case 429: WebPushRefusal(.tooManyRequests, refusal.detail, headers: [PushHeaderField("retry-after", "1")])
        case 410: WebPushRefusal(.subscriptionGone, refusal.detail)
        case 413: WebPushRefusal(.payloadTooLarge, refusal.detail)
        case 503: WebPushRefusal(.serviceUnavailable, refusal.detail)
        case 400 where refusal.reason == .badDeviceToken: WebPushRefusal(.unknownSubscription, refusal.detail)
        default: WebPushRefusal(.internalServerError, "The store refused the message (\(refusal.reason.rawValue)): \(refusal.detail)")
        }
    }
}
