import Foundation
import OffstageProtocol

/// One download or upload of a ``BackgroundSession``: `URLSessionTask` on the platform. The daemon runs it, also
/// while the app is suspended or not running; this object shows what the app last heard of it.
///
/// **Created means running.** On the platform a new task is suspended until `resume()`. Here creating a task asks
/// the daemon, which journals it before it answers and queues it at once (so that a crash of the app between
/// creating and resuming loses nothing). ``resume()`` on a new task is therefore harmless, and ported code that
/// calls it keeps working; ``suspend()`` pauses the task in the daemon until ``resume()``.
@MainActor
public class BackgroundSessionTask {
    /// The platform's task states.
    public enum State: Int, Sendable, Hashable, CustomStringConvertible {
        /// Waiting for its turn or moving bytes (see ``BackgroundSessionTask/waitingFor``).
        case running = 0
        /// Paused by ``BackgroundSessionTask/suspend()``.
        case suspended = 1
        /// ``BackgroundSessionTask/cancel()`` was called; the delegate hears of the cancellation.
        case canceling = 2
        /// Finished, with success or an ``BackgroundSessionTask/error``.
        case completed = 3

        public var description: String {
            switch self {
            case .running: "running"
            case .suspended: "suspended"
            case .canceling: "canceling"
            case .completed: "completed"
            }
        }
    }

    /// A download or an upload.
    public enum Kind: String, Sendable, Hashable {
        case download, upload
    }

    /// The task's number, unique on the device and kept across launches (the platform's `taskIdentifier`).
    public let taskIdentifier: Int
    /// A download or an upload.
    public let kind: Kind
    /// The URL (the platform's `originalRequest.url`).
    public let url: URL
    /// The identifier of the session the task belongs to.
    public let sessionIdentifier: String
    /// The state, as last heard from the daemon (or set by ``cancel()``, ``suspend()`` and ``resume()``).
    public internal(set) var state: State = .running
    /// Bytes of the response body received (downloads).
    public internal(set) var countOfBytesReceived: Int64 = 0
    /// The response body's length, or -1 while it is unknown (the platform's `NSURLSessionTransferSizeUnknown`).
    public internal(set) var countOfBytesExpectedToReceive: Int64 = -1
    /// Bytes of the request body sent (uploads).
    public internal(set) var countOfBytesSent: Int64 = 0
    /// The request body's length (uploads), or 0.
    public internal(set) var countOfBytesExpectedToSend: Int64 = 0
    /// The HTTP status of the last response, when there was one (the platform's `response.statusCode`).
    public internal(set) var httpStatus: Int?
    /// Why the task failed, once it has (the platform's `error`); nil while it runs and after success.
    public internal(set) var error: BackgroundTransferError?
    /// Why a task that has not started moving bytes waits, for people (no network, a metered network, the earliest
    /// begin date, the retry backoff, busy slots); nil when it moves bytes or has finished.
    public internal(set) var waitingFor: String?
    /// The daemon's own state: waiting, running, paused, completed or failed.
    public internal(set) var daemonState: String = "waiting"

    /// The session whose delegate hears of the task (the newest session with its identifier).
    weak var session: BackgroundSession?
    /// The last change sent, which the next waits for.
    private var lastChange: Task<Void, Never>?

    init(_ message: TransfersInterface.TaskMessage, session: BackgroundSession?) {
        taskIdentifier = Int(truncatingIfNeeded: message.id)
        kind = message.kind == "upload" ? .upload : .download
        url = URL(string: message.url) ?? URL(fileURLWithPath: "/")
        sessionIdentifier = message.session
        self.session = session
        update(message)
    }

    /// The task's daemon id.
    var id: UInt64 { UInt64(truncatingIfNeeded: taskIdentifier) }

    /// Bytes moved so far in the task's direction.
    var bytesMoved: Int64 { kind == .download ? countOfBytesReceived : countOfBytesSent }

    /// Takes in what the daemon says of the task.
    func update(_ message: TransfersInterface.TaskMessage) {
        daemonState = message.state
        switch message.state {
        case "paused": state = .suspended
        case "completed", "failed": state = .completed
        default: if state != .canceling { state = .running }
        }
        switch kind {
        case .download:
            countOfBytesReceived = message.bytesDone
            countOfBytesExpectedToReceive = message.bytesExpected ?? -1
        case .upload:
            countOfBytesSent = message.bytesDone
            countOfBytesExpectedToSend = message.bytesExpected ?? 0
        }
        httpStatus = message.httpStatus ?? httpStatus
        waitingFor = message.waitingFor
        if let failure = message.failure {
            error = BackgroundTransferError(failure: failure)
        } else if message.state == "failed" {
            error = BackgroundTransferError(.unknown, "the task failed without a reason", fix: "see `offstage log`")
        }
    }

    /// Cancels the task. The daemon ends it and the delegate hears
    /// ``BackgroundSessionDelegate/urlSession(_:task:didCompleteWithError:)`` with ``BackgroundTransferError/Code/cancelled``.
    /// Cancelling a finished task does nothing.
    public func cancel() {
        guard state == .running || state == .suspended else { return }
        state = .canceling
        change("cancel")
    }

    /// Pauses the task until ``resume()``; a paused task keeps its bytes and resumes where it was (when the server
    /// allows ranges). Suspending a task that is not running does nothing.
    public func suspend() {
        guard state == .running else { return }
        state = .suspended
        change("pause")
    }

    /// Resumes a task paused by ``suspend()``. On a task that runs (every new task: created means running) it does
    /// nothing, so code written for the platform, which must resume every new task, works unchanged.
    public func resume() {
        guard state == .suspended else { return }
        state = .running
        change("resume")
    }

    /// Sends the change to the daemon off the main actor, then refreshes the session so its delegate hears what
    /// came of it (a cancelled task's completion).
    private func change(_ change: String) {
        guard let session else {
            reportToDeveloper("\(change) of transfer \(taskIdentifier) ignored: its session is gone")
            return
        }
        let link = session.link
        let id = id
        let previous = lastChange
        lastChange = Task { @MainActor [weak session] in
            await previous?.value  // one change at a time, in the order the app made them
            let result = await Task.detached { () -> BackgroundTransferError? in
                do throws(BackgroundTransferError) {
                    try link.changeTransfer(id, change)
                    return nil
                } catch {
                    return error
                }
            }.value
            if let result { reportToDeveloper("\(change) of transfer \(id) failed: \(result)") }
            session?.refresh()
        }
    }
}

/// A download: `URLSessionDownloadTask` on the platform. When it completes the delegate gets the file in
/// ``BackgroundSessionDelegate/urlSession(_:downloadTask:didFinishDownloadingTo:)``.
@MainActor
public final class BackgroundDownloadTask: BackgroundSessionTask {}

/// An upload of a file: `URLSessionUploadTask` on the platform. The daemon sends its own link or copy of the file,
/// made when the task was created, so the app may change or delete its file at once. When the server accepts it
/// with a body, the delegate gets the body in ``BackgroundSessionDelegate/urlSession(_:dataTask:didReceive:)``,
/// and ``responseBody`` holds it.
@MainActor
public final class BackgroundUploadTask: BackgroundSessionTask {
    /// The body of the server's 2xx answer, once the upload has completed and when the server sent one (nil
    /// before, and when it sent none). The daemon keeps at most `transfers.maximumResponseBodyBytes` of it (64 KiB by
    /// default): ``responseBodyTruncated`` says when the server sent more.
    public internal(set) var responseBody: Data?
    /// Whether the server's answer was longer than the daemon keeps: ``responseBody`` is its beginning.
    public internal(set) var responseBodyTruncated = false

    override func update(_ message: TransfersInterface.TaskMessage) {
        super.update(message)
        if let body = message.responseBodyData {
            responseBody = body
            responseBodyTruncated = message.responseBodyTruncated ?? false
        }
    }
}
