import Foundation
import OffstageProtocol

/// Web Push (RFC 8030, 8291, 8292), as UnifiedPush servers and browsers speak it (SPEC NT-3).
///
/// For app servers written for the web or for Linux phones: subscribe, hand ``WebPushSubscription/json`` to the
/// server, and its Web Push library sends encrypted messages that wake the app like background pushes:
///
/// ```swift
/// let subscription = try await application.registerForWebPush(applicationServerKey: serverVAPIDKey)
/// await myServer.upload(subscription: subscription.json)
/// …
/// func application(_ application: Application, didReceiveRemoteNotification userInfo: [String: any Sendable])
///     async -> BackgroundFetchResult
/// {
///     guard let message = WebPushMessage(userInfo: userInfo) else { return .noData }
///     …
/// }
/// ```
///
/// A message wakes the app as a background push does (it needs the `remote-notification` mode, and shares the
/// background-push budget); its `Urgency` sets the priority and its `Topic` collapses messages still waiting.
extension Application {
    /// Subscribes the app to Web Push and returns the endpoint and keys its server sends to.
    ///
    /// The subscription is the app's until it is uninstalled or calls ``unregisterForWebPush()``: subscribing again
    /// returns the same one. `applicationServerKey` — the server's VAPID public key, 65 bytes uncompressed — restricts
    /// it to messages signed by that key (RFC 8292); a subscription restricted to another key is refused, as
    /// `PushManager.subscribe` refuses it: unsubscribe first.
    ///
    /// - Throws: ``RemoteNotificationError`` — `unavailable` when the daemon runs without a push gateway or cannot be
    ///   reached, `notRunning` when the process is not an installed app the daemon launched, `invalidArgument` for a
    ///   key that is not a P-256 public key or differs from the subscription's.
    nonisolated public func registerForWebPush(applicationServerKey: Data? = nil) async throws(RemoteNotificationError)
        -> WebPushSubscription
    {
        try WebPushSubscription.subscribe(link: link, applicationServerKey: applicationServerKey)
    }

    /// Ends the app's Web Push subscription: its endpoint answers 410 Gone from now on, so the server learns to stop
    /// sending. Subscribing again gives a new endpoint and new keys.
    ///
    /// - Throws: ``RemoteNotificationError`` — `unavailable` or `notRunning`, as for subscribing.
    nonisolated public func unregisterForWebPush() async throws(RemoteNotificationError) {
        do {
            _ = try link.request(PushInterface.Method.unsubscribeWebPush, NoParameters(), as: EmptyReply.self)
        } catch {
            throw RemoteNotificationError(error)
        }
    }
}
