import Foundation
import Offstage

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A messenger woken by its server's pushes (SPEC NT-3, NT-4): the complete app for push.
///
/// At launch it registers for remote notifications, prints its device token and the gateway to send to, and keeps
/// the token in `push-token` in its data folder (beside its ``DurableStore``), where its "server" — or
/// `offstage push com.example.messenger …`, which asks the daemon — finds it. It also subscribes to Web Push, for
/// servers that speak it (pywebpush and the like), restricted to the server's VAPID key when the data folder has one
/// in `vapid-public-key` (base64url), and keeps the subscription's JSON in `webpush-subscription.json`.
///
/// A background push such as `{"aps":{"content-available":1},"message":"m-42"}` wakes it (resuming it, or launching
/// it into the background). It "fetches" the message the push announces — for real, from the URL in the payload's
/// `fetch` key, when there is one — posts it as an alert through the notification center, and completes with new
/// data. An alert push (`{"aps":{"alert":"Hi"}}`) needs no code: the system shows it. A Web Push message whose body
/// is `{"message":"m-43"}` does the same as a background push announcing `m-43`.
///
/// Every event is one line on standard output, `messenger: …`; each push its handler is given is announced first, as
/// `messenger: received push <apns-id>`.
@MainActor
final class MessengerDelegate: ApplicationDelegate {
    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        say("did-finish-launching (\(options.reason.rawValue))")
        Task { await register(application) }
        return true
    }

    func applicationDidBecomeActive(_ application: Application) { say("did-become-active") }
    func applicationDidEnterBackground(_ application: Application) { say("did-enter-background") }

    /// Registers (the same token at every launch) and hands the token over; then the same for Web Push.
    func register(_ application: Application) async {
        let folder = URL(fileURLWithPath: DurableStore.standard.path).deletingLastPathComponent()
        do {
            let registration = try await application.registerForRemoteNotifications()
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data((registration.token + "\n").utf8).write(to: folder.appendingPathComponent("push-token"), options: .atomic)
            say("registered token=\(registration.token) gateway=\(registration.gateway.absoluteString)")
        } catch {
            say("could not register for remote notifications: \(error)")  // the code, what was wrong, the fix
        }
        do {
            let key = (try? String(contentsOf: folder.appendingPathComponent("vapid-public-key"), encoding: .utf8))
                .flatMap { base64URL($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            let subscription = try await application.registerForWebPush(applicationServerKey: key)
            // The file first: whoever reads the line finds the subscription written.
            try Data(subscription.json.utf8).write(
                to: folder.appendingPathComponent("webpush-subscription.json"), options: .atomic)
            say("subscribed to Web Push endpoint=\(subscription.endpoint.absoluteString)")
        } catch {
            say("could not subscribe to Web Push: \(error)")
        }
    }

    /// A background push: fetch the message it announces, show it, and say there was new data.
    func application(
        _ application: Application, didReceiveRemoteNotification userInfo: [String: any Sendable]
    ) async throws -> BackgroundFetchResult {
        let push = userInfo[RemoteNotification.apnsIDKey] as? String ?? "?"
        // First, before anything can fail: a line per push the handler was given (one write to the app's output,
        // which the system appends to its log), so a push handled twice shows as two lines.
        say("received push \(push)")
        var userInfo = userInfo
        if let webPush = WebPushMessage(userInfo: userInfo) {
            // A Web Push message's body is the server's own JSON: read it as a payload's keys.
            let body = (try? JSONSerialization.jsonObject(with: webPush.data)) as? [String: Any] ?? [:]
            for (key, value) in body { if let text = value as? String { userInfo[key] = text } }
        }
        guard let message = userInfo["message"] as? String else {
            say("push \(push) announces no message: nothing to fetch")
            return .noData
        }
        var text = "New message \(message)"
        if let address = userInfo["fetch"] as? String, let url = URL(string: address) {
            // Thrown errors complete the push as failed.
            let (data, _) = try await URLSession.shared.data(from: url)
            text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        var content = NotificationContent()
        content.title = "Messenger"
        content.body = text
        content.sound = .default
        content.userInfo = ["message": message]
        // No trigger: shown now (to the user, or to the app if it is in front).
        try await UserNotificationCenter.current().add(NotificationRequest(identifier: message, content: content, trigger: nil))
        say("fetched \(message) after push \(push)")
        return .newData
    }
}

func say(_ text: String) { print("messenger: " + text) }

/// Base64url (with or without padding) as Web Push writes keys, decoded.
func base64URL(_ text: String) -> Data? {
    var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
    return Data(base64Encoded: base64)
}

@main
struct MessengerMain {
    @MainActor static func main() {
        Application.main(delegate: MessengerDelegate())
    }
}
