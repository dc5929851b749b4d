import Foundation
import Logging

/// The settings of the APNs front door.
public struct APNsGatewayConfiguration: Sendable, Hashable {
    /// The per-device-token rate limit (429 `TooManyRequests` beyond it).
    public var rateLimit: TokenBucketLimiter.Limit
    /// How old and how early provider tokens may be.
    public var tokenPolicy: ProviderTokenPolicy

    /// Creates a configuration; the defaults are 100 pushes a second per token (200 at once) and APNs' token hour.
    public init(rateLimit: TokenBucketLimiter.Limit = .init(), tokenPolicy: ProviderTokenPolicy = .init()) {
        self.rateLimit = rateLimit
        self.tokenPolicy = tokenPolicy
    }
}

/// The APNs-compatible provider API without the transport: a request in, a response out.
///
/// In order: the request rules (``APNsRequestRules``), the provider token, the key's topics (`TopicDisallowed`),
/// the device token (`BadDeviceToken`, `Unregistered`, `DeviceTokenNotForTopic`), the per-token rate limit, and the
/// backend's durable accept. Only a push the backend stored is answered 200.
public final class APNsGateway: Sendable {
    private let backend: any PushGatewayBackend
    private let verifier: ProviderTokenVerifier
    private let limiter: TokenBucketLimiter
    private let logger: Logger
    private let now: @Sendable () -> Date

    /// Creates a gateway over `backend`; `now` is the clock (tests pass their own).
    public init(
        backend: any PushGatewayBackend,
        configuration: APNsGatewayConfiguration = .init(),
        logger: Logger = Logger(label: "offstage.push.apns"),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.backend = backend
        self.verifier = ProviderTokenVerifier(backend: backend, policy: configuration.tokenPolicy)
        self.limiter = TokenBucketLimiter(limit: configuration.rateLimit)
        self.logger = logger
        self.now = now
    }

    /// Forgets verified provider tokens of `keyID` (of all keys when nil). Hosts call it when a key is removed or
    /// replaced, so a removed key stops authenticating at once instead of when its tokens expire.
    public func providerKeysChanged(keyID: String? = nil) {
        verifier.keysChanged(keyID: keyID)
    }

    /// How many verified provider tokens are remembered (for metrics and tests).
    public var cachedProviderTokenCount: Int { verifier.cachedTokenCount }

    /// Answers `request` as APNs would: 200 with `apns-id`, or the refusal's status, `apns-id` and JSON body.
    public func handle(_ request: PushHTTPRequest) async -> PushHTTPResponse {
        switch await process(request) {
        case .success(let push):
            return PushHTTPResponse(status: 200, headers: [PushHeaderField(APNsHeaderName.id, push.apnsID)])
        case .failure(let refusal):
            if refusal.reason.status >= 500 {
                logger.error("Push refused", metadata: ["refusal": "\(refusal)"])
            } else {
                logger.debug("Push refused", metadata: ["refusal": "\(refusal)"])
            }
            return Self.response(for: refusal, apnsID: APNsRequestRules.responseID(for: request))
        }
    }

    /// The response APNs sends for `refusal`.
    public static func response(for refusal: APNsRefusal, apnsID: String) -> PushHTTPResponse {
        PushHTTPResponse(
            status: refusal.status,
            headers: [PushHeaderField(APNsHeaderName.id, apnsID), PushHeaderField("content-type", "application/json")],
            body: refusal.body
        )
    }

    /// Runs every check on `request` and, when all pass, has the backend store the push.
    public func process(_ request: PushHTTPRequest) async -> Result<AcceptedPush, APNsRefusal> {
        let receivedAt = now()
        let push: ValidatedPush
        switch APNsRequestRules.validate(request, now: receivedAt) {
        case .success(let valid): push = valid
        case .failure(let refusal): return .failure(refusal)
        }
        let provider: VerifiedProvider
        switch await verifier.verify(push.providerToken, now: receivedAt) {
        case .success(let verified): provider = verified
        case .failure(let refusal): return .failure(refusal)
        }
        guard provider.allows(topic: push.topic, app: push.app) else {
            return .failure(
                APNsRefusal(
                    .topicDisallowed,
                    "Provider key \(provider.keyID) may not push to \(push.topic); allow the topic for the key or use another key."
                ))
        }
        let device: String
        do {
            switch try await backend.lookUp(token: push.deviceToken) {
            case .unknown:
                return .failure(
                    APNsRefusal(.badDeviceToken, "No device token \(push.deviceToken) was issued; use the token the app registered."))
            case .revoked(let at):
                return .failure(
                    APNsRefusal(
                        .unregistered, "The device token was revoked (the app was uninstalled); stop sending to it.", timestamp: at))
            case .active(let app, let owner):
                guard app == push.app else {
                    return .failure(
                        APNsRefusal(
                            .deviceTokenNotForTopic,
                            "The device token belongs to another app than \(push.app); send with that app's topic."
                        ))
                }
                device = owner
            }
        } catch {
            return .failure(APNsRefusal(.internalServerError, "The device token could not be looked up: \(error)"))
        }
        guard limiter.take(push.deviceToken, now: receivedAt) else {
            return .failure(
                APNsRefusal(.tooManyRequests, "Too many pushes to device token \(push.deviceToken); slow down and retry later."))
        }
        let accepted = AcceptedPush(
            apnsID: push.apnsID, token: push.deviceToken, app: push.app, device: device, pushType: push.pushType,
            priority: push.priority, expiration: push.expiration, collapseID: push.collapseID, payload: push.payload,
            aps: push.aps, acceptedAt: receivedAt, attemptOnce: push.attemptOnce
        )
        do {
            switch try await backend.accept(accepted) {
            case .stored: return .success(accepted)
            case .refused(let refusal): return .failure(refusal)
            }
        } catch {
            return .failure(APNsRefusal(.internalServerError, "The push could not be stored: \(error)"))
        }
    }
}
