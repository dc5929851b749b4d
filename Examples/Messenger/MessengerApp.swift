import Foundation
import Offstage

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A messenger woken by its server's pushes (SPEC NT-3, NT-4): the complete app for push.
///
/// At launch it registers for remote notifications, prints its device token and the gateway to send to, and keeps
/// the token in `push-token` in its data folder (beside its ``DurableStore``), where its "server" — or
/// `offstage push com.example.messenger …`, which asks the daemon — finds it.
///
/// A background push such as `{"aps":{"content-available":1},"message":"m-42"}` wakes it (resuming it, or launching
/// it into the background). It "fetches" the message the push announces — for real, from the URL in the payload's
/// `fetch` key, when there is one — posts it as an alert through the notification center, and completes with new
/// data. An alert push (`{"aps":{"alert":"Hi"}}`) needs no code: the system shows it.
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

    /// Registers (the same token at every launch) and hands the token over.
    func register(_ application: Application) async {
        do {
            let registration = try await application.registerForRemoteNotifications()
            say("registered token=\(registration.token) gateway=\(registration.gateway.absoluteString)")
            let file = URL(fileURLWithPath: DurableStore.standard.path).deletingLastPathComponent()
                .appendingPathComponent("push-token")
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data((registration.token + "\n").utf8).write(to: file, options: .atomic)
        } catch {
            say("could not register for remote notifications: \(error)")  // the code, what was wrong, the fix
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

@main
struct MessengerMain {
    @MainActor static func main() {
        Application.main(delegate: MessengerDelegate())
    }
}
