import Foundation

/// What a ``BackgroundSession`` tells the app about its tasks: `URLSessionDownloadDelegate` (with
/// `URLSessionTaskDelegate` and `URLSessionDelegate`) on the platform. Every method runs on the main actor and has an
/// empty default implementation.
///
/// The methods keep the platform's names, with the session and task types of this SDK:
///
/// | Platform                                                                  | Offstage                                   |
/// |---------------------------------------------------------------------------|--------------------------------------------|
/// | `urlSession(_:downloadTask:didWriteData:totalBytesWritten:totalBytesExpectedToWrite:)` | the same, with a ``BackgroundDownloadTask`` |
/// | `urlSession(_:downloadTask:didFinishDownloadingTo:)`                      | the same                                   |
/// | `urlSession(_:task:didSendBodyData:totalBytesSent:totalBytesExpectedToSend:)` | the same, with a ``BackgroundSessionTask`` |
/// | `urlSession(_:dataTask:didReceive:)` (an upload's response body)           | the same, with a ``BackgroundUploadTask``, the body whole |
/// | `urlSession(_:task:didCompleteWithError:)`                                | the same, with a ``BackgroundTransferError`` |
/// | `urlSessionDidFinishEvents(forBackgroundURLSession:)`                     | the same                                   |
///
/// How they differ from the platform's:
/// - Progress comes as the daemon reports it, at most about once a second and only while the app runs with the
///   session open; `bytesWritten` is what moved since the last report this process heard.
/// - Each finished task is given to the delegate at most once per process, then acknowledged to the daemon: a
///   task whose event was not acknowledged (the app was killed inside the delegate) is given again in the next
///   process.
@MainActor
public protocol BackgroundSessionDelegate: AnyObject {
    /// A download moved bytes: `bytesWritten` since the last report, `totalBytesWritten` in all, of
    /// `totalBytesExpectedToWrite` (-1 while unknown).
    func urlSession(
        _ session: BackgroundSession, downloadTask: BackgroundDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64)

    /// A download completed: its file is at `location`, in the app's data folder (`Transfers/<id>-<name>`). Move it
    /// where it belongs **before returning**, as on the platform: when this method returns, the SDK acknowledges the
    /// event and the daemon deletes whatever is left at `location`.
    /// ``urlSession(_:task:didCompleteWithError:)`` follows, with nil.
    func urlSession(_ session: BackgroundSession, downloadTask: BackgroundDownloadTask, didFinishDownloadingTo location: URL)

    /// An upload sent bytes: `bytesSent` since the last report, `totalBytesSent` in all, of
    /// `totalBytesExpectedToSend`.
    func urlSession(
        _ session: BackgroundSession, task: BackgroundSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64)

    /// An upload completed and the server's answer had a body: `data` is that body, whole (the platform may give it
    /// in pieces; here it comes at once), or its first `transfers.maximumResponseBodyBytes` (64 KiB by default) when
    /// ``BackgroundUploadTask/responseBodyTruncated`` says the server sent more. Called once, also when the upload
    /// finished while the app was not running (the daemon keeps the body until the app has handled the task), and
    /// before ``urlSession(_:task:didCompleteWithError:)``, which follows with nil. Not called for an answer without a
    /// body, nor for a failed upload.
    func urlSession(_ session: BackgroundSession, dataTask: BackgroundUploadTask, didReceive data: Data)

    /// A task finished: `error` is nil on success, else why it failed (its ``BackgroundTransferError/code``, the HTTP
    /// status when the server's answer ended it, and a message). After this the task is forgotten by the daemon.
    func urlSession(_ session: BackgroundSession, task: BackgroundSessionTask, didCompleteWithError error: BackgroundTransferError?)

    /// Every event waiting for the session when the system woke the app for it has been delivered: call the
    /// completion handler that
    /// ``ApplicationDelegate/application(_:handleEventsForBackgroundURLSession:completionHandler:)`` was given, so
    /// that the app can be suspended again. Called only after such a wake.
    func urlSessionDidFinishEvents(forBackgroundURLSession session: BackgroundSession)
}

/// The empty defaults: an app implements only what it needs (a download's delegate at least
/// ``urlSession(_:downloadTask:didFinishDownloadingTo:)``, or the file is deleted unseen).
extension BackgroundSessionDelegate {
    public func urlSession(
        _ session: BackgroundSession, downloadTask: BackgroundDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
    ) {}

    public func urlSession(_ session: BackgroundSession, downloadTask: BackgroundDownloadTask, didFinishDownloadingTo location: URL) {}

    public func urlSession(
        _ session: BackgroundSession, task: BackgroundSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {}

    public func urlSession(_ session: BackgroundSession, dataTask: BackgroundUploadTask, didReceive data: Data) {}

    public func urlSession(_ session: BackgroundSession, task: BackgroundSessionTask, didCompleteWithError error: BackgroundTransferError?) {}

    public func urlSessionDidFinishEvents(forBackgroundURLSession session: BackgroundSession) {}
}
