import Foundation
import OffstageCore
import OffstagePush

/// The gateway's storage on one device (decisions 0032, 0034): provider keys, tokens and Web Push subscriptions in
/// the daemon's SQLite store, and an accepted push written to the device's inbox before the gateway answers 200 (or
/// 201), then handed to the engine.
struct EmbeddedPushBackend: PushGatewayBackend, WebPushBackend {
    /// The device name tokens of this daemon carry.
    static let device = "local"

    let store: OffstageStore
    /// Hands a newly stored push to the engine (on its event loop).
    let deliver: @Sendable (RemotePush) -> Void

    func providerKey(id: String) async throws -> ProviderKey? {
        try store.pushKey(id: id).map { key in
            ProviderKey(id: key.id, teamID: key.teamID, publicKeyPEM: key.publicKeyPEM, allowedTopics: key.topics.map(Set.init))
        }
    }

    func lookUp(token: String) async throws -> TokenLookup {
        guard let (app, revokedAt) = try store.pushToken(token) else { return .unknown }
        if let revokedAt { return .revoked(at: Date(timeIntervalSince1970: revokedAt.secondsSinceEpoch)) }
        return .active(app: app.rawValue, device: Self.device)
    }

    /// A subscription with the user agent's keys: this device decrypts the messages for it.
    func lookUp(subscription id: String) async throws -> WebPushSubscriptionLookup {
        guard let row = try store.webPushSubscription(id: id) else { return .unknown }
        if let endedAt = row.endedAt { return .gone(at: Date(timeIntervalSince1970: endedAt.secondsSinceEpoch)) }
        return .active(
            WebPushSubscription(
                id: row.id, app: row.app.rawValue, device: Self.device, applicationServerKey: row.applicationServerKey,
                userAgentKeys: try WebPushUserAgentKeys(privateKeyRaw: row.privateKey, authSecret: row.authSecret)))
    }

    func accept(_ accepted: AcceptedPush) async throws -> Acceptance {
        let push = Self.remotePush(accepted)
        // A retry of a push already stored is acknowledged again and not handed in twice.
        if let stored = try store.acceptPush(push) { deliver(stored) }
        return .stored
    }

    /// The core's value of an accepted push.
    static func remotePush(_ accepted: AcceptedPush) -> RemotePush {
        let aps = accepted.aps
        let alert = aps.alert.map { PushAlert(title: $0.title ?? "", subtitle: $0.subtitle ?? "", body: $0.body ?? "") }
        return RemotePush(
            id: accepted.apnsID, app: AppID(accepted.app),
            type: CorePushType(rawValue: accepted.pushType.rawValue) ?? .alert,
            priority: accepted.priority.rawValue, collapseID: accepted.collapseID,
            expiresAt: accepted.expiration.map(Self.instant), acceptedAt: instant(accepted.acceptedAt),
            aps: PushAPS(
                alert: alert, badge: aps.badge, sound: aps.sound?.name, threadID: aps.threadID, category: aps.category,
                contentAvailable: aps.contentAvailable, mutableContent: aps.mutableContent),
            payload: String(decoding: accepted.payload, as: UTF8.self), attemptOnce: accepted.attemptOnce)
    }

    static func instant(_ date: Date) -> Instant {
        Instant(nanosecondsSinceEpoch: Int64((date.timeIntervalSince1970 * 1e9).rounded()))
    }
}
