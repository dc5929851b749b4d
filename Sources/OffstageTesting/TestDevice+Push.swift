import Foundation
import OffstageCore
import OffstageHost
import OffstagePush

extension TestDevice {
    /// What the push gateway answered the app server: the status, the notification's id, and for a refusal the
    /// reason (APNs', or Web Push's).
    public struct PushResponse: Sendable, Hashable, CustomStringConvertible {
        /// 200 when the push was accepted (201 for a Web Push message); else the refusal's status (400, 403, 410,
        /// 413, 429 …).
        public var status: Int
        /// The notification's `apns-id`: the one sent, or the one the gateway gave it (a Web Push message's, from its
        /// `Location`).
        public var apnsID: String
        /// The reason of a refusal (`BadDeviceToken`, `Unregistered`, `PayloadTooLarge`, `SubscriptionGone` …); nil when
        /// accepted.
        public var reason: String?

        /// Whether the gateway accepted the push (200, or 201 for a Web Push message).
        public var isAccepted: Bool { status == 200 || status == 201 }

        public var description: String { reason.map { "\(status) \($0) (apns-id \(apnsID))" } ?? "\(status) (apns-id \(apnsID))" }

        /// The gateway's `response` to a push with id `apnsID`: the reason is read from a refusal's JSON body.
        init(_ response: PushHTTPResponse, apnsID: String) {
            status = response.status
            self.apnsID = apnsID
            reason = nil
            if !isAccepted {
                reason = (try? JSONSerialization.jsonObject(with: response.body) as? [String: Any])?["reason"] as? String
            }
        }
    }

    /// A request to the kit's gateway, as an app server sends it over HTTP/2.
    private func gatewayRequest(path: String, _ headers: [PushHeaderField], body: Data) -> PushHTTPRequest {
        PushHTTPRequest(
            method: "POST", path: path, headers: headers, body: body,
            authority: String(KitHost.gateway.dropFirst("https://".count)), scheme: "https")
    }

    /// An app server sends `payload` to the device token `app` registered, with APNs' `headers` (`apns-push-type`,
    /// `apns-priority`, `apns-expiration`, `apns-collapse-id`, `apns-id`; `apns-topic` defaults to the app's bundle
    /// identifier), through the same gateway rules as `offstaged`'s: the answer is what the server would get. An
    /// accepted push reaches the device at once and what it sets off happens before this returns.
    ///
    /// ```swift
    /// let response = try await device.sendPush(#"{"aps":{"content-available":1},"message":"m-1"}"#, to: app)
    /// #expect(response.isAccepted)
    /// #expect(device.pushOutcome(response.apnsID) == "handled: newData")
    /// ```
    ///
    /// - Throws: ``TestKitError/invalidArgument(_:)`` when the app has not registered for remote notifications (it has
    ///   no token to send to).
    @discardableResult
    public func sendPush(_ payload: String, to app: TestApp, headers: [String: String] = [:]) async throws -> PushResponse {
        guard let token = app.pushToken else {
            throw TestKitError.invalidArgument(
                "'\(app.id)' has not registered for remote notifications, so no server has a token to send to: have the "
                    + "app call registerForRemoteNotifications() (at launch, as iOS apps do) first")
        }
        var headers = headers
        if headers["apns-topic"] == nil { headers["apns-topic"] = app.id }
        return try await sendPush(payload, toDeviceToken: token, headers: headers)
    }

    /// An app server sends `payload` to device token `token` with APNs' `headers`, which must name the app in
    /// `apns-topic`: for a token the test makes up, an old one, or another app's. See ``sendPush(_:to:headers:)``.
    @discardableResult
    public func sendPush(_ payload: String, toDeviceToken token: String, headers: [String: String]) async throws -> PushResponse {
        try await runUntilIdle()
        let server = try await pushServer()
        let fields =
            headers.map { PushHeaderField($0.key.lowercased(), $0.value) }
            + [PushHeaderField("authorization", "bearer \(try await server.signer.token(now: now))")]
        let response = await server.gateway.handle(
            gatewayRequest(path: "\(APNsRequestRules.pathPrefix)/\(token)", fields, body: Data(payload.utf8)))
        try await runUntilIdle()
        return PushResponse(response, apnsID: response.headers.first { $0.name == APNsHeaderName.id }?.value ?? "")
    }

    /// An application server sends `message` to the app's Web Push subscription (RFC 8030), encrypted to the
    /// subscription's keys (RFC 8291, `aes128gcm`) and signed with the kit's VAPID key (RFC 8292), with the
    /// request's other `headers` (`ttl` defaults to 60; `urgency`, `topic`; an `authorization` given replaces the
    /// kit's, and an empty one sends none); the answer is what the server would get
    /// from `offstaged`'s gateway: 201, with the message's id in ``PushResponse/apnsID`` for ``pushOutcome(_:)``,
    /// or the status and the reason (`SubscriptionGone`, `MissingAuthorization` …). An app that restricts its
    /// subscription to a key subscribes with ``webPushApplicationServerKey``.
    ///
    /// - Throws: ``TestKitError/invalidArgument(_:)`` when the app has no Web Push subscription, or `message` does not
    ///   fit one record (about 4 KB).
    @discardableResult
    public func sendWebPush(_ message: Data, to app: TestApp, headers: [String: String] = [:]) async throws -> PushResponse {
        try await runUntilIdle()
        guard let subscription = host.with({ $0.webPushSubscriptions[app.appID] }), let keys = subscription.userAgentKeys else {
            throw TestKitError.invalidArgument(
                "'\(app.id)' has no Web Push subscription, so no server has an endpoint to send to: have the app call "
                    + "registerForWebPush(applicationServerKey:) first")
        }
        let server = try await pushServer()
        let body: Data
        do {
            body = try WebPushEncryptor().encrypt(message, p256dh: keys.publicKey, auth: keys.authSecret)
        } catch {
            throw TestKitError.invalidArgument("the message cannot be encrypted: \(error)")
        }
        var given = ["ttl": "60", "content-encoding": "aes128gcm"].merging(headers.map { ($0.key.lowercased(), $0.value) }) { _, given in given }
        if given["authorization"] == nil {
            given["authorization"] = try await server.vapid.authorization(
                audience: KitHost.gateway, expiration: now.addingTimeInterval(12 * 3600))
        }
        let fields = given.filter { !$0.value.isEmpty }.map { PushHeaderField($0.key, $0.value) }
        let response = await server.webPush.handle(gatewayRequest(path: "/push/\(subscription.id)", fields, body: body))
        try await runUntilIdle()
        let location = response.headers.first { $0.name == "location" }?.value
        return PushResponse(response, apnsID: location.map { String($0.split(separator: "/").last ?? "") } ?? "")
    }

    /// The kit's VAPID public key (base64url), which ``sendWebPush(_:to:headers:)`` signs with: the key an app gives
    /// `registerForWebPush(applicationServerKey:)` to accept only this server's messages.
    public var webPushApplicationServerKey: String {
        get async throws { Base64URL.encode(try await pushServer().vapid.publicKey) }
    }

    /// What became of the push with this `apns-id` — the outcome `offstage push-status` shows, with its detail after a
    /// colon (`handled: newData`, `shown`,
    /// `coalesced: <newer apns-id>`, `expired`, `not-delivered: …`, `cut-off: …`); `held` while it waits for the
    /// app's budget; nil for a push the device never got or has not finished with.
    public func pushOutcome(_ apnsID: String) -> String? {
        host.with { state in
            if state.simulation.heldPushes[apnsID] != nil { return "held" }
            return state.simulation.pushOutcomes[apnsID]?.description
        }
    }

    /// The kit's gateway and the app server's key, made at the first push.
    private func pushServer() async throws -> KitPushServer {
        if let server = pushServerMade { return server }
        let server = try await KitPushServer(host: host)
        pushServerMade = server
        return server
    }
}

extension TestApp {
    /// The device token the app registered for remote notifications, as its server got it; nil when it has not
    /// registered, or unregistered.
    public var pushToken: String? { device.host.with { $0.pushTokens[appID] } }
}

/// The push gateway of a test device: `offstaged`'s (``APNsGateway``) over the kit's tokens, on the device's virtual
/// clock, with one provider key that the test's "app server" signs with. The kit's own key stands in for the app
/// developer's: provider keys are not what an app's test is about.
final class KitPushServer: Sendable {
    static let keyID = "KITKEY0001"
    static let teamID = "KITTEAM001"

    let gateway: APNsGateway
    let signer: ProviderTokenSigner
    let webPush: WebPushGateway
    let vapid: VAPIDSigner

    init(host: KitHost) async throws {
        let pair = ProviderKeyPair.generate()
        signer = try await ProviderTokenSigner(keyID: Self.keyID, teamID: Self.teamID, privateKeyPEM: pair.privateKeyPEM)
        vapid = VAPIDSigner(privateKey: .init(), subject: "mailto:tests@offstage-testing.invalid")
        let backend = KitPushBackend(
            host: host, key: ProviderKey(id: Self.keyID, teamID: Self.teamID, publicKeyPEM: pair.publicKeyPEM))
        let now: @Sendable () -> Date = { Date(timeIntervalSince1970: host.nowSeconds) }
        gateway = APNsGateway(backend: backend, now: now)
        webPush = WebPushGateway(backend: backend, now: now)
    }
}

/// The gateway's storage port on the kit: the tokens the app registered, and an accepted push handed to the core at
/// once, as the daemon's inbox hands it.
struct KitPushBackend: PushGatewayBackend, WebPushBackend {
    /// The device's name at the gateway.
    static let device = "test-device"

    let host: KitHost
    let key: ProviderKey

    func providerKey(id: String) async throws -> ProviderKey? { id == key.id ? key : nil }

    func lookUp(token: String) async throws -> TokenLookup {
        host.with { state in
            if let app = state.pushTokens.first(where: { $0.value == token })?.key {
                return .active(app: app.rawValue, device: Self.device)
            }
            if let revoked = state.revokedTokens[token] {
                return .revoked(at: Date(timeIntervalSince1970: revoked.at.secondsSinceEpoch))
            }
            return .unknown
        }
    }

    func lookUp(subscription id: String) async throws -> WebPushSubscriptionLookup {
        host.with { state in
            if let live = state.webPushSubscriptions.values.first(where: { $0.id == id }) { return .active(live) }
            if let ended = state.endedSubscriptions[id] { return .gone(at: Date(timeIntervalSince1970: ended.secondsSinceEpoch)) }
            return .unknown
        }
    }

    func accept(_ push: AcceptedPush) async throws -> Acceptance {
        host.with { state in
            // A retry of a push already taken is acknowledged again and not handed in twice.
            if state.acceptedPushes.insert(push.apnsID).inserted { state.simulation.receivePush(RemotePush(accepted: push)) }
        }
        return .stored
    }
}
