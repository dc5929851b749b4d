import Foundation
import OffstageProtocol

/// A background session: `URLSession(configuration: .background(withIdentifier:), delegate:, delegateQueue:)` on the
/// platform (SPEC §5). Its downloads and uploads are run by the daemon, also while the app is suspended or not
/// running, and survive the app's termination and the daemon's restart; the app hears of them through its
/// ``BackgroundSessionDelegate``, on the main actor.
///
/// ```swift
/// let session = BackgroundSession(configuration: .background(withIdentifier: "com.example.app.downloads"), delegate: self)
/// let task = try session.downloadTask(with: URL(string: "https://example.com/big.bin")!)
/// task.resume()   // harmless: a task runs once created
/// ```
///
/// **Reconnecting.** Creating a session with an identifier the app used before reconnects to it: the session opens
/// in the daemon, fetches its tasks, and delivers to the new delegate every finished task the app has not handled
/// yet — in the next launch too. Create it at launch, and again in
/// ``ApplicationDelegate/application(_:handleEventsForBackgroundURLSession:completionHandler:)`` when the system wakes
/// the app for it. A new session with the identifier of one that exists in the process replaces it: the old one's
/// delegate hears nothing more. When the daemon restarts under the running app, the session opens again by itself as
/// the app reattaches: progress goes on reaching the delegate.
///
/// **Events, once.** Each finished task is given to the delegate at most once per process
/// (``BackgroundSessionDelegate/urlSession(_:downloadTask:didFinishDownloadingTo:)`` for a completed download, then
/// ``BackgroundSessionDelegate/urlSession(_:task:didCompleteWithError:)``); when the delegate has returned the SDK
/// acknowledges it, and the daemon forgets it with any file left where it was given. A session without a delegate
/// leaves finished tasks waiting for one.
@MainActor
public final class BackgroundSession {
    /// The configuration the session was created with.
    public let configuration: BackgroundSessionConfiguration
    /// The delegate; the session keeps it alive, as on the platform.
    public let delegate: (any BackgroundSessionDelegate)?
    /// The session's identifier (`configuration.identifier`).
    public var identifier: String { configuration.identifier }

    let link: DaemonLink
    let dispatch: TransferDispatch
    /// Whether `OpenSession` succeeded in this process (it is tried again before the next call when not).
    private(set) var isOpen = false
    /// The last refresh, which the next one waits for; and one that has not started yet, which a new request joins.
    private var lastRefresh: Task<Void, Never>?
    private var waitingRefresh: Task<Void, Never>?

    /// Creates the session (or reconnects to the one with this identifier): opens it in the daemon, then, off the
    /// main actor, fetches its tasks and delivers the events waiting for it to `delegate`. A daemon that cannot be
    /// reached is written to standard error; the session opens at its next call.
    public convenience init(configuration: BackgroundSessionConfiguration, delegate: (any BackgroundSessionDelegate)?) {
        self.init(configuration: configuration, delegate: delegate, dispatch: TransferDispatch.shared)
    }

    init(configuration: BackgroundSessionConfiguration, delegate: (any BackgroundSessionDelegate)?, dispatch: TransferDispatch) {
        self.configuration = configuration
        self.delegate = delegate
        self.dispatch = dispatch
        self.link = dispatch.link
        dispatch.adopt(self)
        do throws(BackgroundTransferError) {
            try open()
        } catch {
            reportToDeveloper("could not open background session '\(configuration.identifier)': \(error)")
        }
        refresh()
    }

    // MARK: Tasks

    /// Creates a download of `url` and returns it, running (see ``BackgroundSessionTask`` on why created means
    /// running). The task is journaled by the daemon before this returns: it survives the app and the daemon.
    ///
    /// - Parameters:
    ///   - earliestBeginDate: the task waits until then (the platform's `earliestBeginDate`).
    ///   - discretionary: the task waits for good conditions while the app is not in front, as if the session were
    ///     discretionary; nil takes the session's setting.
    ///   - filename: the name the finished file gets (`Transfers/<id>-<filename>`); the URL's last path component
    ///     when nil.
    ///   - headers: request headers.
    /// - Throws: ``BackgroundTransferError`` — `invalidArgument` for a URL the daemon cannot fetch, `tooManyTasks`,
    ///   `notRunning` or `unavailable`.
    @discardableResult
    public func downloadTask(
        with url: URL, earliestBeginDate: Date? = nil, discretionary: Bool? = nil, filename: String? = nil,
        headers: [String: String] = [:]
    ) throws(BackgroundTransferError) -> BackgroundDownloadTask {
        let task = try create(
            TransfersInterface.CreateTaskParameters(
                session: identifier, kind: "download", url: url.absoluteString, headers: Self.headers(headers),
                filename: filename, discretionary: discretionary, earliestBegin: earliestBeginDate.map(WireTime.seconds)))
        guard let download = task as? BackgroundDownloadTask else {
            throw BackgroundTransferError(.unavailable, "the daemon created an upload for a download", fix: "use an SDK and an offstaged of the same version")
        }
        return download
    }

    /// Creates an upload of the file at `fileURL` to `url` and returns it, running. The file must be inside the app's
    /// data folder (`OFFSTAGE_DATA_DIR`); the daemon keeps its own link or copy of it before this returns, so the app
    /// may change or delete it at once.
    ///
    /// - Parameters:
    ///   - method: `PUT` (the default) or `POST`.
    ///   - headers: request headers.
    /// - Throws: ``BackgroundTransferError`` — `invalidArgument` for a file outside the data folder or a bad URL,
    ///   `tooManyTasks`, `notRunning` or `unavailable`.
    @discardableResult
    public func uploadTask(
        with url: URL, fromFile fileURL: URL, method: String = "PUT", headers: [String: String] = [:]
    ) throws(BackgroundTransferError) -> BackgroundUploadTask {
        let task = try create(
            TransfersInterface.CreateTaskParameters(
                session: identifier, kind: "upload", url: url.absoluteString, method: method, headers: Self.headers(headers),
                file: fileURL.standardizedFileURL.path))
        guard let upload = task as? BackgroundUploadTask else {
            throw BackgroundTransferError(.unavailable, "the daemon created a download for an upload", fix: "use an SDK and an offstaged of the same version")
        }
        return upload
    }

    /// The session's unfinished tasks, as the daemon has them now (the platform's `getAllTasks`). Finished tasks
    /// found on the way are delivered to the delegate first, as events.
    public func getAllTasks() async -> [BackgroundSessionTask] {
        await refresh().value
        return dispatch.tasks.values.filter { $0.sessionIdentifier == identifier && $0.state != .completed }
            .sorted { $0.taskIdentifier < $1.taskIdentifier }
    }

    private func create(_ parameters: TransfersInterface.CreateTaskParameters) throws(BackgroundTransferError) -> BackgroundSessionTask {
        try open()
        let message: TransfersInterface.TaskMessage
        do throws(BackgroundTransferError) {
            message = try link.createTransfer(parameters)
        } catch where error.code == .noSuchTask {
            // The daemon forgot the session (it restarted, or the app was reinstalled): opened again, created again.
            isOpen = false
            try open()
            message = try link.createTransfer(parameters)
        }
        return dispatch.task(for: message, in: self)
    }

    private static func headers(_ headers: [String: String]) -> [TransfersInterface.HeaderMessage]? {
        headers.isEmpty ? nil : headers.sorted { $0.key < $1.key }.map { .init(name: $0.key, value: $0.value) }
    }

    /// The app reattached to a restarted daemon, which knows the session's tasks (they are journaled) but not that
    /// this process has it open: opened again, so that progress reaches the delegate again, and its tasks fetched, so
    /// that what finished while the daemon was away is delivered.
    func reattached() {
        isOpen = false
        refresh()
    }

    /// Opens the session in the daemon, once per process (again after the daemon forgot it).
    private func open() throws(BackgroundTransferError) {
        guard !isOpen else { return }
        try link.openTransferSession(configuration)
        isOpen = true
    }

    // MARK: Events

    /// Fetches the session's tasks (off the main actor), reports progress, delivers the finished ones and
    /// acknowledges them. Refreshes run one at a time; a request while one waits to start joins it.
    @discardableResult
    func refresh() -> Task<Void, Never> {
        if let waitingRefresh { return waitingRefresh }
        let previous = lastRefresh
        dispatch.refreshing += 1
        let refresh = Task { @MainActor in
            await previous?.value
            self.waitingRefresh = nil
            await self.synchronize()
            self.dispatch.refreshing = max(0, self.dispatch.refreshing - 1)  // a new process may have reset it
        }
        waitingRefresh = refresh
        lastRefresh = refresh
        return refresh
    }

    private func synchronize() async {
        guard dispatch.sessions[identifier] === self else { return }  // replaced by a newer session
        // A wake for the session's events that happened before this fetch is finished by it.
        let wake = dispatch.wakes[identifier]
        do throws(BackgroundTransferError) {
            try open()
        } catch {
            reportToDeveloper("could not open background session '\(identifier)': \(error)")
            finishEvents(wake)
            return
        }
        let (link, identifier) = (self.link, self.identifier)
        let fetched = await Task.detached { () -> Result<[TransfersInterface.TaskMessage], BackgroundTransferError> in
            do throws(BackgroundTransferError) {
                return .success(try link.transferTasks(session: identifier))
            } catch {
                return .failure(error)
            }
        }.value
        guard dispatch.sessions[identifier] === self else { return }
        switch fetched {
        case .failure(let error):
            if error.code == .noSuchTask || error.code == .notRunning { isOpen = false }
            reportToDeveloper("could not fetch the tasks of background session '\(identifier)': \(error)")
        case .success(let messages):
            let handled = deliver(messages)
            if !handled.isEmpty {
                let failure = await Task.detached { () -> BackgroundTransferError? in
                    do throws(BackgroundTransferError) {
                        try link.acknowledgeTransfers(session: identifier, ids: handled)
                        return nil
                    } catch {
                        return error
                    }
                }.value
                // Not acknowledged: the daemon gives them again, and this process does not deliver them twice.
                if let failure { reportToDeveloper("could not acknowledge transfers \(handled) of '\(identifier)': \(failure)") }
            }
        }
        finishEvents(wake)
    }

    /// Tells the delegate the events of a wake are all delivered, once per wake.
    private func finishEvents(_ wake: UInt64?) {
        guard let wake, dispatch.wakes[identifier] == wake else { return }
        dispatch.wakes[identifier] = nil
        delegate?.urlSessionDidFinishEvents(forBackgroundURLSession: self)
    }

    /// Reports progress of unfinished tasks and gives each finished task to the delegate, once per process; returns
    /// the finished tasks' ids, to acknowledge (also those delivered before, whose acknowledgement was lost).
    func deliver(_ messages: [TransfersInterface.TaskMessage]) -> [UInt64] {
        var handled: [UInt64] = []
        for message in messages.sorted(by: { $0.id < $1.id }) {
            let before = dispatch.tasks[message.id]?.bytesMoved ?? 0
            let task = dispatch.task(for: message, in: self)
            let finished = message.state == "completed" || message.state == "failed"
            guard finished else {
                reportProgress(task, since: before)
                continue
            }
            guard let delegate else { continue }  // waits for a session with a delegate
            handled.append(message.id)
            guard dispatch.firstDelivery(of: message.id) else { continue }
            if message.state == "completed" { reportProgress(task, since: before) }
            var error = task.error
            if let download = task as? BackgroundDownloadTask, message.state == "completed" {
                if let file = message.file {
                    delegate.urlSession(self, downloadTask: download, didFinishDownloadingTo: URL(fileURLWithPath: file))
                } else {
                    error = BackgroundTransferError(
                        .file, "the daemon gave no file for completed download \(message.id)",
                        fix: "see `offstage log` for the daemon's side")
                }
            }
            // An upload's answer, before its completion, as the platform gives a data task's bytes.
            if let upload = task as? BackgroundUploadTask, message.state == "completed", let body = upload.responseBody {
                delegate.urlSession(self, dataTask: upload, didReceive: body)
            }
            delegate.urlSession(self, task: task, didCompleteWithError: error)
            dispatch.tasks[message.id] = nil
        }
        return handled
    }

    private func reportProgress(_ task: BackgroundSessionTask, since before: Int64) {
        let moved = task.bytesMoved
        guard moved != before, let delegate else { return }
        let delta = max(0, moved - before)
        switch task {
        case let download as BackgroundDownloadTask:
            delegate.urlSession(
                self, downloadTask: download, didWriteData: delta, totalBytesWritten: moved,
                totalBytesExpectedToWrite: download.countOfBytesExpectedToReceive)
        default:
            delegate.urlSession(
                self, task: task, didSendBodyData: delta, totalBytesSent: moved,
                totalBytesExpectedToSend: task.countOfBytesExpectedToSend)
        }
    }
}
