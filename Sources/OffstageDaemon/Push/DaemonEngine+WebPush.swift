import Foundation
import OffstageCore
import OffstageHost
import OffstageProtocol
import OffstagePush

/// Web Push subscriptions in the daemon (SPEC NT-3, decision 0034): the device is each subscription's user agent, so
/// it makes the keys, keeps the private half, and hands the app the endpoint and public keys its server encrypts to.
extension DaemonEngine {
    /// The app's subscription, made now when it has none. `applicationServerKey` (65 bytes, uncompressed P-256)
    /// restricts a new subscription to that VAPID key; an existing one restricted otherwise is refused, as
    /// `PushManager.subscribe` refuses it: the app unsubscribes first.
    func subscribeWebPush(_ id: AppID, applicationServerKey: Data?) throws -> OffstageStore.WebPushSubscriptionRow {
        let keys = WebPushUserAgentKeys.generate()
        let candidate = OffstageStore.WebPushSubscriptionRow(
            id: Base64URL.encode(Data(Self.randomBytes(32))), app: id, privateKey: keys.privateKeyRaw, authSecret: keys.authSecret,
            applicationServerKey: applicationServerKey, createdAt: now, endedAt: nil)
        let subscription = try store.subscribeWebPush(candidate)
        if subscription.id == candidate.id {
            eventLog.pending.append(LogEntry(at: now, app: id, kind: .push, message: "subscribed to Web Push"))
        }
        return subscription
    }

    /// Ends the app's subscription: from now on its endpoint answers 410 Gone.
    func unsubscribeWebPush(_ id: AppID, because why: String) {
        persist {
            if try store.endWebPushSubscriptions(of: id, at: now) > 0 {
                eventLog.pending.append(LogEntry(at: now, app: id, kind: .push, message: "Web Push subscription ended: \(why)"))
                remotePush?.registrationsChanged()
            }
        }
    }
}

/// A stored subscription as the app receives it.
extension PushInterface.WebPushSubscriptionMessage {
    init(_ row: OffstageStore.WebPushSubscriptionRow, endpoint: String) throws {
        let keys = try WebPushUserAgentKeys(privateKeyRaw: row.privateKey, authSecret: row.authSecret)
        self = PushCalls.subscription(endpoint: endpoint, keys: keys, applicationServerKey: row.applicationServerKey)
    }
}
