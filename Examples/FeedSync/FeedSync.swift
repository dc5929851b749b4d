import Dispatch
import Foundation
import Offstage

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A feed reader that keeps its feed fresh: it syncs when the user opens it, and in the background in an app-refresh
/// task (`com.example.feedsync.refresh`), resubmitted after every run. Each sync downloads the feed with
/// `URLSession`, the way an iOS app does, and prints what it got or why it failed. Like Apple's sample code, it
/// submits its refresh request when the user leaves it, and again in each refresh.
///
/// It shows the user's data controls (SPEC SET-2) at work: with background data off on a metered network, the sync in
/// the background fails at once (the kernel refuses the app's connection) while the one in the foreground succeeds.
///
/// Every event is one line on standard output, such as
/// `sync 2 (background): failed after 2 ms: Could not connect to the server.` or
/// `sync 3 (foreground): 48213 bytes, 12 items in 9 ms`.
///
/// Options (in the manifest's `OffstageLinux.Arguments`):
/// - `--feed URL`: the feed to download (required).
/// - `--earliest-seconds S`: submit refresh requests S seconds ahead (default 900, the platform's usual minimum).
@MainActor
final class FeedSyncDelegate: ApplicationDelegate {
    static let refreshIdentifier = "com.example.feedsync.refresh"
    let feed: URL?
    let earliestSeconds: Double
    let session: URLSession
    var syncs = 0

    init(arguments: [String]) {
        feed = option("--feed", in: arguments).flatMap(URL.init(string:))
        earliestSeconds = option("--earliest-seconds", in: arguments).flatMap(Double.init) ?? 900
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 10
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration)
    }

    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        say("did-finish-launching (\(options.reason.rawValue)); feed \(feed?.absoluteString ?? "missing: pass --feed URL")")
        let registered = TaskScheduler.shared.register(forTaskWithIdentifier: Self.refreshIdentifier, using: nil) { task in
            self.refresh(task as! AppRefreshTask)
        }
        say("register \(Self.refreshIdentifier): \(registered)")
        return true
    }

    func applicationDidBecomeActive(_ application: Application) {
        say("did-become-active")
        sync("foreground") { _ in }
    }
    /// Where Apple's sample code schedules its refresh: each time the user leaves the app.
    func applicationDidEnterBackground(_ application: Application) {
        say("did-enter-background")
        scheduleRefresh()
    }
    func applicationWillTerminate(_ application: Application) { say("will-terminate") }

    func scheduleRefresh() {
        let request = AppRefreshTaskRequest(identifier: Self.refreshIdentifier)
        request.earliestBeginDate = Date(timeIntervalSinceNow: earliestSeconds)
        do {
            try TaskScheduler.shared.submit(request)
        } catch {
            say("could not submit the refresh request: \(error)")
        }
    }

    func refresh(_ task: AppRefreshTask) {
        say("refresh task started (state=\(Application.shared.applicationState.rawValue))")
        scheduleRefresh()
        task.expirationHandler = {
            say("refresh task expired")
            task.setTaskCompleted(success: false)
        }
        sync("background") { ok in task.setTaskCompleted(success: ok) }
    }

    /// Downloads the feed and says what came of it; `done` gets whether it worked, on the main actor.
    func sync(_ when: String, done: @escaping @MainActor (Bool) -> Void) {
        syncs += 1
        let number = syncs
        guard let feed else {
            say("sync \(number) (\(when)): no feed to sync (pass --feed URL)")
            return done(false)
        }
        let started = Date()
        session.dataTask(with: feed) { data, response, error in
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            let milliseconds = Int(Date().timeIntervalSince(started) * 1000)
            let line: String
            let ok: Bool
            if let error {
                line = "failed after \(milliseconds) ms: \(error.localizedDescription)"
                ok = false
            } else if status != 200 {
                line = "failed after \(milliseconds) ms: HTTP \(status)"
                ok = false
            } else {
                let data = data ?? Data()
                let items = String(decoding: data, as: UTF8.self).components(separatedBy: "<item>").count - 1
                line = "\(data.count) bytes, \(items) items in \(milliseconds) ms"
                ok = true
            }
            DispatchQueue.main.async {
                MainActor.assumeIsolated {
                    say("sync \(number) (\(when)): \(line)")
                    done(ok)
                }
            }
        }.resume()
    }
}

func option(_ name: String, in arguments: [String]) -> String? {
    arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
}

func say(_ text: String) { print(text) }

@main
struct FeedSyncMain {
    @MainActor static func main() {
        Application.main(delegate: FeedSyncDelegate(arguments: CommandLine.arguments))
    }
}
