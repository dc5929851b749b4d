import Crypto
import Foundation
import Offstage

/// A magazine app (SPEC MODE-5, the platform's Newsstand): when its publisher announces a new issue with a background
/// push, the system wakes it — at most once a day — and the issue downloads as a background transfer, which the
/// daemon finishes while the app is suspended or not running; the app is woken again to shelve the issue.
///
/// - At launch it registers for remote notifications (printing its token and keeping it in `push-token` in its data
///   folder, for its publisher) and opens its background session `com.example.newsstand.issues`.
/// - A push such as `{"aps":{"content-available":1},"issue":"http://…/2026-11.pdf"}` starts the issue's download in
///   that session and completes with new data. The manifest declares `newsstand-content`, not `remote-notification`:
///   the push wakes it as a newsstand app.
/// - When the download is in, it moves the issue to `<data dir>/Issues/<name>` and prints its size and SHA-256; each
///   finished issue (or failure) is one line in `<data dir>/issues.log`.
/// - Woken for the session's events, it lets the session deliver them and calls the completion handler.
///
/// Every event is one timestamped line on standard output.
@MainActor
final class NewsstandDelegate: ApplicationDelegate, BackgroundSessionDelegate {
    static let sessionIdentifier = "com.example.newsstand.issues"

    let dataDirectory: String
    var session: BackgroundSession?
    var finishEvents: (@Sendable () -> Void)?
    /// What shelving found, by task, for the completion line.
    var shelved: [Int: String] = [:]

    init(environment: [String: String]) {
        dataDirectory = environment["OFFSTAGE_DATA_DIR"] ?? FileManager.default.currentDirectoryPath + "/.offstage-data"
    }

    var issues: String { dataDirectory + "/Issues" }

    // MARK: Lifecycle

    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        say("did-finish-launching (\(options.reason.rawValue))")
        openSession()
        Task { await register(application) }
        return true
    }

    func applicationDidBecomeActive(_ application: Application) { say("did-become-active") }
    func applicationDidEnterBackground(_ application: Application) { say("did-enter-background") }

    /// Registers (the same token at every launch) and leaves the token where the publisher's tools find it.
    func register(_ application: Application) async {
        do {
            let registration = try await application.registerForRemoteNotifications()
            try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
            try Data((registration.token + "\n").utf8).write(
                to: URL(fileURLWithPath: dataDirectory + "/push-token"), options: .atomic)
            say("registered token=\(registration.token)")
        } catch {
            say("could not register for remote notifications: \(error)")
        }
    }

    func openSession() {
        guard session == nil else { return }
        session = BackgroundSession(configuration: .background(withIdentifier: Self.sessionIdentifier), delegate: self)
    }

    // MARK: A new issue

    /// The publisher announced an issue: download it in the background session; the app may be suspended at once.
    func application(
        _ application: Application, didReceiveRemoteNotification userInfo: [String: any Sendable]
    ) async throws -> BackgroundFetchResult {
        let push = userInfo[RemoteNotification.apnsIDKey] as? String ?? "?"
        guard let address = userInfo["issue"] as? String, let url = URL(string: address), let session else {
            say("push \(push) announces no issue")
            return .noData
        }
        let name = url.lastPathComponent.isEmpty ? "issue" : url.lastPathComponent
        let task = try session.downloadTask(with: url, filename: name)
        task.resume()
        say("issue \(name) announced by push \(push): download started, task \(task.taskIdentifier)")
        return .newData
    }

    func application(
        _ application: Application, handleEventsForBackgroundURLSession identifier: String,
        completionHandler: @escaping @Sendable () -> Void
    ) {
        say("handle-events-for-background-session \(identifier)")
        guard identifier == Self.sessionIdentifier else {
            completionHandler()
            return
        }
        finishEvents = completionHandler
        openSession()
    }

    // MARK: BackgroundSessionDelegate

    func urlSession(_ session: BackgroundSession, downloadTask: BackgroundDownloadTask, didFinishDownloadingTo location: URL) {
        // Moved before returning: the daemon deletes what is left when this returns.
        let name = downloadTask.url.lastPathComponent.isEmpty ? "issue" : downloadTask.url.lastPathComponent
        let target = issues + "/" + name
        do {
            try FileManager.default.createDirectory(atPath: issues, withIntermediateDirectories: true)
            try? FileManager.default.removeItem(atPath: target)
            try FileManager.default.moveItem(atPath: location.path, toPath: target)
            let data = try Data(contentsOf: URL(fileURLWithPath: target))
            let digest = SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
            shelved[downloadTask.taskIdentifier] = "Issues/\(name) \(data.count) bytes sha256=\(digest)"
            say("issue \(name) in: Issues/\(name) \(data.count) bytes sha256=\(digest)")
        } catch {
            shelved[downloadTask.taskIdentifier] = "not kept: \(error)"
            say("could not keep issue \(name): \(error)")
        }
    }

    func urlSession(_ session: BackgroundSession, task: BackgroundSessionTask, didCompleteWithError error: BackgroundTransferError?) {
        let outcome = error.map { "failed \($0.code.rawValue): \($0.message)" } ?? "completed \(shelved[task.taskIdentifier] ?? "")"
        shelved[task.taskIdentifier] = nil
        say("task \(task.taskIdentifier) \(outcome)")
        append("\(timestamp()) task \(task.taskIdentifier) \(outcome)\n", to: dataDirectory + "/issues.log")
    }

    func urlSessionDidFinishEvents(forBackgroundURLSession session: BackgroundSession) {
        say("did-finish-events \(session.identifier)")
        finishEvents?()
        finishEvents = nil
    }

    func append(_ line: String, to path: String) {
        if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        guard let handle = FileHandle(forWritingAtPath: path) else { return say("cannot write \(path)") }
        defer { try? handle.close() }
        _ = try? handle.seekToEnd()
        try? handle.write(contentsOf: Data(line.utf8))
    }
}

func say(_ text: String) { print(timestamp() + " " + text) }

func timestamp() -> String {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    var time = tm()
    var seconds = now.tv_sec
    localtime_r(&seconds, &time)
    return String(format: "%02d:%02d:%02d.%03d", time.tm_hour, time.tm_min, time.tm_sec, now.tv_nsec / 1_000_000)
}

@main
struct NewsstandMain {
    @MainActor static func main() {
        Application.main(delegate: NewsstandDelegate(environment: ProcessInfo.processInfo.environment))
    }
}
