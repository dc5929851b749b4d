import Foundation
import OffstageCore
import OffstageProtocol

/// The device's push inbox in the daemon (SPEC NT-3..5): pushes the gateway stored go to the core, its decisions to
/// the store, and each app's device token is issued, looked up and revoked here.
extension DaemonEngine {
    /// A push the gateway stored (on the loop): the core decides what it does.
    func pushAccepted(_ push: RemotePush) {
        eventLoop.preconditionInEventLoop()
        apply(core.pushArrived(push, at: now))
    }

    /// Persists what the push inbox decided.
    func performPush(_ action: PushAction) {
        persist { try store.apply([action], at: now) }
    }

    /// The remote-notification callback is about to go out: the push is marked handed first, so a restart after
    /// this never calls the handler again (persist, then act).
    func pushHanded(_ callback: Callback) {
        guard case .remoteNotification(let call) = callback.kind else { return }
        persist { try store.markPushHanded(call.push) }
    }

    /// Reads the inbox back at start: held pushes go back to the core, pushes whose handler was running when the
    /// daemon stopped are recorded cut off, and the actions for both come back with the pushes to hand in again
    /// (after the apps are recovered).
    func readPushInbox() throws -> (actions: [CoreAction], pending: [RemotePush]) {
        let inbox = try store.loadPushInbox()
        var actions = core.restoreHeldPushes(inbox.held)
        for push in inbox.handed {
            actions.append(.push(.finish(id: push.id, app: push.app, .cutOff("the daemon stopped while its handler ran"))))
        }
        return (actions, inbox.accepted)
    }

    /// The app's token, issued now when it has none (SPEC NT-3: per app, by registration from the SDK).
    func registerForPush(_ id: AppID) throws -> String {
        let candidate = Self.randomBytes(32).map { String(format: "%02x", $0) }.joined()
        let token = try store.issueToken(to: id, candidate: candidate, at: now)
        if token == candidate { eventLog.pending.append(LogEntry(at: now, app: id, kind: .push, message: "registered for remote notifications")) }
        return token
    }

    /// Revokes the app's token: from now on the gateway answers 410 Unregistered for it.
    func unregisterForPush(_ id: AppID, because why: String) {
        persist {
            if try store.revokeTokens(of: id, at: now) > 0 {
                eventLog.pending.append(LogEntry(at: now, app: id, kind: .push, message: "device token revoked: \(why)"))
                remotePush?.registrationsChanged()
            }
        }
    }

    /// Where app servers send this device's pushes: the remote gateway's origin, else the daemon's own gateway's;
    /// nil when the device has neither.
    var pushAddress: String? { remotePush?.address ?? pushGateway?.address }

    /// The push resource of a Web Push subscription, at whichever gateway the device uses.
    func webPushEndpoint(_ subscription: String) -> String? {
        remotePush?.webPushEndpoint(subscription) ?? pushGateway?.webPushEndpoint(subscription)
    }

    /// `count` bytes from the system's secure generator: device tokens and subscription ids.
    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in generator.next() }
    }
}
