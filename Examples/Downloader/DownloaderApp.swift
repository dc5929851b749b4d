import Crypto
import Foundation
import Offstage

/// The background-download cookbook app (SPEC §5, the platform's background `URLSession`): it downloads one file in
/// a background session, which the daemon finishes while the app is suspended or not running, and handles the
/// system's wake for the session's events.
///
/// - Opened by the user, it opens session `com.example.downloader.session` and, unless a download is in flight or
///   the file is already in `Downloads`, starts downloading `DOWNLOADER_URL` (an environment variable, set in the
///   manifest's `OffstageLinux.Environment`; the bundled manifest points at a local server, change it or install
///   with your own).
/// - While in front it prints a progress line whenever the daemon reports progress.
/// - When the download completes it moves the file to `<data dir>/Downloads/<name>` and prints its size and SHA-256.
/// - Each finished task (success or failure) appends one line to `<data dir>/completions.log`.
/// - An upload in its session whose server answers a body (`urlSession(_:dataTask:didReceive:)`) has that body
///   written to `<data dir>/Responses/task-<id>.body`, and a line saying its size (and `cut` when the server sent
///   more than the daemon keeps).
/// - Woken for the session's events (`handleEventsForBackgroundURLSession`), it recreates the session, whose
///   delegate gets the events, and calls the completion handler in `urlSessionDidFinishEvents`.
///
/// Every event is one line on standard output (the app's log, `offstage logs com.example.downloader`).
@MainActor
final class DownloaderDelegate: ApplicationDelegate, BackgroundSessionDelegate {
    static let sessionIdentifier = "com.example.downloader.session"

    let dataDirectory: String
    let url: URL?
    var session: BackgroundSession?
    /// The completion handler of the system's wake for the session's events, called once they are handled.
    var finishEvents: (@Sendable () -> Void)?
    /// What the move in did-finish-downloading found, by task, for the completion line.
    var finished: [Int: String] = [:]

    init(environment: [String: String]) {
        dataDirectory = environment["OFFSTAGE_DATA_DIR"] ?? FileManager.default.currentDirectoryPath + "/.offstage-data"
        url = environment["DOWNLOADER_URL"].flatMap { $0.isEmpty ? nil : URL(string: $0) }
    }

    var downloads: String { dataDirectory + "/Downloads" }

    // MARK: Lifecycle

    func application(_ application: Application, didFinishLaunchingWithOptions options: LaunchOptions) -> Bool {
        say("did-finish-launching (\(options.reason.rawValue))")
        // Launched for the session's events, the app recreates the session in handleEventsForBackgroundURLSession.
        if options.reason != .transferEvents { startIfIdle() }
        return true
    }

    func applicationDidBecomeActive(_ application: Application) { say("did-become-active") }
    func applicationDidEnterBackground(_ application: Application) { say("did-enter-background") }
    func applicationWillEnterForeground(_ application: Application) { say("will-enter-foreground") }
    func applicationWillTerminate(_ application: Application) { say("will-terminate") }

    func application(
        _ application: Application, handleEventsForBackgroundURLSession identifier: String,
        completionHandler: @escaping @Sendable () -> Void
    ) {
        say("handle-events-for-background-session \(identifier) (state=\(application.applicationState.rawValue))")
        guard identifier == Self.sessionIdentifier else {
            completionHandler()
            return
        }
        finishEvents = completionHandler
        openSession()
    }

    // MARK: Downloading

    func openSession() {
        session = BackgroundSession(configuration: .background(withIdentifier: Self.sessionIdentifier), delegate: self)
    }

    /// Opens the session and starts the download unless one is in flight or its file is here already.
    func startIfIdle() {
        openSession()
        guard let session, let url else {
            say("DOWNLOADER_URL is not set: nothing to download")
            return
        }
        Task {
            let tasks = await session.getAllTasks()
            if !tasks.isEmpty {
                say("\(tasks.count) download(s) in flight: \(tasks.map { "task \($0.taskIdentifier)" }.joined(separator: ", "))")
                return
            }
            let name = Self.name(of: url)
            if FileManager.default.fileExists(atPath: downloads + "/" + name) {
                say("\(name) is downloaded already")
                return
            }
            do {
                let task = try session.downloadTask(with: url, filename: name)
                task.resume()
                say("download started: task \(task.taskIdentifier) \(url.absoluteString)")
            } catch {
                say("could not start the download: \(error)")
            }
        }
    }

    static func name(of url: URL) -> String {
        let last = url.lastPathComponent
        return last.isEmpty || last == "/" ? "download" : last
    }

    // MARK: BackgroundSessionDelegate

    func urlSession(
        _ session: BackgroundSession, downloadTask: BackgroundDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
    ) {
        guard Application.shared.applicationState == .active else { return }
        let percent = totalBytesExpectedToWrite > 0 ? " (\(totalBytesWritten * 100 / totalBytesExpectedToWrite) %)" : ""
        let total = totalBytesExpectedToWrite >= 0 ? String(totalBytesExpectedToWrite) : "?"
        say("progress task \(downloadTask.taskIdentifier): \(totalBytesWritten) of \(total) bytes\(percent)")
    }

    func urlSession(_ session: BackgroundSession, downloadTask: BackgroundDownloadTask, didFinishDownloadingTo location: URL) {
        // The file must be moved before returning: the daemon deletes what is left when this returns.
        let name = Self.name(of: downloadTask.url)
        let target = downloads + "/" + name
        do {
            try FileManager.default.createDirectory(atPath: downloads, withIntermediateDirectories: true)
            try? FileManager.default.removeItem(atPath: target)
            try FileManager.default.moveItem(atPath: location.path, toPath: target)
            let (size, digest) = try Self.sha256(ofFile: target)
            say("downloaded task \(downloadTask.taskIdentifier): Downloads/\(name) \(size) bytes sha256=\(digest)")
            finished[downloadTask.taskIdentifier] = "Downloads/\(name) \(size) bytes sha256=\(digest)"
        } catch {
            say("could not keep the download of task \(downloadTask.taskIdentifier): \(error)")
            finished[downloadTask.taskIdentifier] = "not kept: \(error)"
        }
    }

    func urlSession(_ session: BackgroundSession, dataTask: BackgroundUploadTask, didReceive data: Data) {
        let folder = dataDirectory + "/Responses"
        let path = folder + "/task-\(dataTask.taskIdentifier).body"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: path, contents: data) else {
            say("cannot write \(path)")
            return
        }
        say("response task \(dataTask.taskIdentifier): \(data.count) bytes\(dataTask.responseBodyTruncated ? " cut" : "")")
    }

    func urlSession(_ session: BackgroundSession, task: BackgroundSessionTask, didCompleteWithError error: BackgroundTransferError?) {
        let outcome = error.map { "failed \($0.code.rawValue)\($0.httpStatus.map { " \($0)" } ?? ""): \($0.message)" }
            ?? "completed \(finished[task.taskIdentifier] ?? "")"
        finished[task.taskIdentifier] = nil
        say("task \(task.taskIdentifier) \(outcome)")
        appendCompletion("\(timestamp()) task \(task.taskIdentifier) \(outcome)")
    }

    func urlSessionDidFinishEvents(forBackgroundURLSession session: BackgroundSession) {
        say("did-finish-events \(session.identifier)")
        finishEvents?()
        finishEvents = nil
    }

    // MARK: Files

    /// Appends one line to `completions.log` in the data folder.
    func appendCompletion(_ line: String) {
        let path = dataDirectory + "/completions.log"
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
        }
        guard let handle = FileHandle(forWritingAtPath: path) else {
            say("cannot write \(path)")
            return
        }
        defer { try? handle.close() }
        _ = try? handle.seekToEnd()
        try? handle.write(contentsOf: Data((line + "\n").utf8))
    }

    /// The file's size and SHA-256 (hex), read a megabyte at a time.
    static func sha256(ofFile path: String) throws -> (Int64, String) {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw CocoaError(.fileReadNoSuchFile) }
        defer { try? handle.close() }
        var hash = SHA256()
        var size: Int64 = 0
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            hash.update(data: chunk)
            size += Int64(chunk.count)
        }
        return (size, hash.finalize().map { String(format: "%02x", $0) }.joined())
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
struct DownloaderMain {
    @MainActor static func main() {
        Application.main(delegate: DownloaderDelegate(environment: ProcessInfo.processInfo.environment))
    }
}
