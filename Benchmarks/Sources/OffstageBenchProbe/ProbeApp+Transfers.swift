import Foundation
import Offstage
import OffstageBenchKit

/// The probe's `--transfers PLAN --report SOCKET [--refresh-task ID]` mode, for the transfer benchmarks (SPEC §5, §11).
///
/// - At launch it opens background session `bench.transfers` with itself as delegate and, with `--refresh-task`,
///   registers a launch handler for that refresh identifier.
/// - Each time it becomes active it reads PLAN: a first line naming a generation, then one step a line —
///   `download URL` (a download in the session), `download-keep URL` (the same, and the finished file is kept in
///   `<data dir>/Downloads`), `refresh` (submits a refresh request due an hour ahead, for `offstage run-task`) and
///   `exit` (the process exits once the steps are done). A generation is carried out once (it is remembered in the
///   data folder); it then sends `created GENERATION ID…` (the daemon's task ids) to SOCKET.
/// - Its handler of the session's events and its refresh handler first take the time (CLOCK_REALTIME, ns, the clock of
///   the daemon's event log) and send `events NS` or `refresh NS` to SOCKET; the events are then delivered to the
///   session's delegate, which calls the handler's completion once they are.
/// - Each finished task appends `completed ID SIZE PATH` or `failed ID MESSAGE` to `<data dir>/completions.log`.
@MainActor
final class TransferProbe: BackgroundSessionDelegate {
    static let sessionIdentifier = "bench.transfers"

    let plan: String
    let report: String
    let refreshTask: String?
    let dataDirectory: String
    var session: BackgroundSession?
    var finishEvents: (@Sendable () -> Void)?
    /// What did-finish-downloading found, by task, for the completion line.
    var finished: [Int: String] = [:]
    /// Task ids whose finished files are kept.
    var keep: Set<Int> = []
    var reportSocket: Int32 = -1

    init(plan: String, report: String, refreshTask: String?) {
        self.plan = plan
        self.report = report
        self.refreshTask = refreshTask
        dataDirectory = ProcessInfo.processInfo.environment["OFFSTAGE_DATA_DIR"] ?? FileManager.default.currentDirectoryPath
    }

    var donePath: String { dataDirectory + "/plan.done" }

    /// At launch: the session, and the refresh handler.
    func launched() {
        if let refreshTask {
            TaskScheduler.shared.register(forTaskWithIdentifier: refreshTask, using: nil) { [self] task in
                let began = WallClock.now()
                send("refresh \(began)")
                task.setTaskCompleted(success: true)
            }
        }
        session = BackgroundSession(configuration: .background(withIdentifier: Self.sessionIdentifier), delegate: self)
    }

    /// Carries out the plan's generation if it is new.
    func becameActive() {
        guard let text = try? String(contentsOfFile: plan, encoding: .utf8) else { return }
        let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let generation = lines.first, !generation.isEmpty else { return }
        let done = (try? String(contentsOfFile: donePath, encoding: .utf8)) ?? ""
        guard done != generation else { return }
        try? generation.write(toFile: donePath, atomically: true, encoding: .utf8)
        var created: [String] = []
        var exitAfter = false
        for line in lines.dropFirst() {
            let words = line.split(separator: " ", maxSplits: 1).map(String.init)
            switch words.first {
            case "download", "download-keep":
                guard words.count == 2, let url = URL(string: words[1]), let session else { continue }
                do {
                    let task = try session.downloadTask(with: url)
                    if words[0] == "download-keep" { keep.insert(task.taskIdentifier) }
                    created.append(String(task.taskIdentifier))
                } catch {
                    created.append("error:\(error.code.rawValue)")
                    print("probe: cannot create the download of \(url): \(error)")
                }
            case "refresh":
                guard let refreshTask else { continue }
                let request = AppRefreshTaskRequest(identifier: refreshTask)
                request.earliestBeginDate = Date(timeIntervalSinceNow: 3_600)
                do {
                    try TaskScheduler.shared.submit(request)
                    created.append("refresh")
                } catch {
                    created.append("error:refresh")
                    print("probe: cannot submit \(refreshTask): \(error)")
                }
            case "exit":
                exitAfter = true
            default:
                continue
            }
        }
        send((["created", generation] + created).joined(separator: " "))
        // After this handler returns, so its CallbackDone goes out first.
        if exitAfter { DispatchQueue.main.async { exit(0) } }
    }

    /// The system woke the app for the session's events: the time first.
    func handleEvents(_ identifier: String, completionHandler: @escaping @Sendable () -> Void) {
        let began = WallClock.now()
        send("events \(began) \(Application.shared.applicationState.rawValue)")
        guard identifier == Self.sessionIdentifier else {
            completionHandler()
            return
        }
        finishEvents = completionHandler
        if session == nil {
            session = BackgroundSession(configuration: .background(withIdentifier: Self.sessionIdentifier), delegate: self)
        }
    }

    // MARK: BackgroundSessionDelegate

    func urlSession(_ session: BackgroundSession, downloadTask: BackgroundDownloadTask, didFinishDownloadingTo location: URL) {
        let size = (try? FileManager.default.attributesOfItem(atPath: location.path)[.size] as? Int64) ?? -1
        var kept = "-"
        if keep.contains(downloadTask.taskIdentifier) {
            let folder = dataDirectory + "/Downloads"
            let target = folder + "/\(downloadTask.taskIdentifier)"
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                try? FileManager.default.removeItem(atPath: target)
                try FileManager.default.moveItem(atPath: location.path, toPath: target)
                kept = target
            } catch {
                print("probe: cannot keep \(location.path): \(error)")
            }
        }
        finished[downloadTask.taskIdentifier] = "\(size) \(kept)"
    }

    func urlSession(_ session: BackgroundSession, task: BackgroundSessionTask, didCompleteWithError error: BackgroundTransferError?) {
        let line: String
        if let error {
            line = "failed \(task.taskIdentifier) \(error.code.rawValue) \(error.message)"
        } else {
            line = "completed \(task.taskIdentifier) \(finished[task.taskIdentifier] ?? "-1 -")"
        }
        finished[task.taskIdentifier] = nil
        keep.remove(task.taskIdentifier)
        append(line)
    }

    func urlSessionDidFinishEvents(forBackgroundURLSession session: BackgroundSession) {
        finishEvents?()
        finishEvents = nil
    }

    // MARK: Output

    private func append(_ line: String) {
        let path = dataDirectory + "/completions.log"
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        guard fd >= 0 else {
            print("probe: cannot write \(path)")
            return
        }
        defer { close(fd) }
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    private func send(_ text: String) {
        do {
            if reportSocket < 0 { reportSocket = try UnixSocket.datagram() }
            try UnixSocket.send(reportSocket, datagram: Array(text.utf8), to: report)
        } catch {
            print("probe: cannot report to \(report): \(error)")
        }
    }
}

extension ProbeDelegate {
    func application(
        _ application: Application, handleEventsForBackgroundURLSession identifier: String,
        completionHandler: @escaping @Sendable () -> Void
    ) {
        guard let transfers else {
            completionHandler()
            return
        }
        transfers.handleEvents(identifier, completionHandler: completionHandler)
    }
}
