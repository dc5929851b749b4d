import Foundation
import OffstageCore
import OffstageHost
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
        let push = RemotePush(accepted: accepted)
        // A retry of a push already stored is acknowledged again and not handed in twice.
        if let stored = try store.acceptPush(push) { deliver(stored) }
        return .stored
    }
}
