import OffstageCore
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// One request of a transfer job, as async-http-client's response delegate: carries out the verdict on the response
/// head, writes a download's body into the part file at its offset, reports events, counts an upload's bytes sent,
/// and ends the request when no byte moved for the idle timeout.
///
/// Confined to ``eventLoop``: the request's channel runs there too (`.delegateAndChannel(on:)`), so every callback,
/// timer and write happens on that thread; only ``cancel()`` may be called from elsewhere.
///
/// Body parts are written to the part file right in ``didReceiveBodyPart(task:_:)``, on the event loop, with
/// `pwrite`: a write into the page cache takes microseconds for the ≤ 64 KiB a read of the socket gives, and the loop
/// does nothing else meanwhile that could be delayed by more (the engine has its loops to itself). Back-pressure is
/// then immediate: the next part is not read from the socket before the write returned. A hop to NIO's thread pool
/// and back per chunk was measured in the loopback benchmark (1 GiB from nginx, 2 cores): 378 MB/s and 2.2 s of CPU
/// per GiB, against 840 MB/s and 1.2 s inline, and curl's 700–835 MB/s into a file in the same runs. Only fsync,
/// which can take seconds, runs off the loop (in the engine).
final class HTTPTransferAttempt: HTTPClientResponseDelegate, @unchecked Sendable {  // confined, see above
    typealias Response = End

    /// How the request ended; the engine finishes the job from it.
    enum End: Sendable {
        /// A download's body is all in the part file (not yet synced), which holds `bytes`; or the server accepted an
        /// upload of `bytes`, answering `responseBody` (nil when its answer had none).
        case finished(
            status: Int, bytes: Int64, validator: TransferValidator?, mimeType: String?, suggestedFilename: String?,
            responseBody: TransferResponseBody? = nil)
        /// The range asked for cannot be used: empty the part file and ask once more without Range.
        case restartWithoutRange(reason: String)
        /// The part file is already whole: ask once more for its last byte only.
        case refetchLastByte(reason: String)
        /// The job's outcome.
        case outcome(HTTPTransferOutcome)
    }

    /// What the request carries.
    enum Kind {
        /// A download into `partFile`, keeping its first `offset` bytes when the response allows (`offset` 0: none).
        case download(partFile: PartFile, offset: Int64)
        /// An upload of `size` bytes, keeping up to `responseBodyLimit` bytes of the body of the server's 2xx answer.
        case upload(size: Int64, responseBodyLimit: Int)
    }

    /// Ends the request when nothing moved for ``HTTPTransferJob/idleTimeout``.
    struct IdleTimeout: Error {}

    /// Ends the request when an upload's answer is longer than the part of it kept: the rest is not read.
    struct ResponseBodyLimitReached: Error {}

    /// The loop everything runs on.
    let eventLoop: any EventLoop
    private let kind: Kind
    /// The validator sent in If-Range (or the part file's, when Range went alone).
    private let sent: TransferValidator?
    /// Whether a 416 or unusable 206 may still become one more request without Range.
    private let mayRestart: Bool
    /// Why the request before this one was a restart, for this one's responseStarted.
    private let carriedRestartReason: String?
    private let checkpointBytes: Int64
    /// Keeps a download's writes within one checkpoint of its journal; nil: not held back (uploads, tools).
    private let gate: CheckpointGate?
    private let idleTimeout: TimeAmount
    private let events: @Sendable (HTTPTransferEvent) -> Void
    private let now: @Sendable () -> Date

    private var task: HTTPClient.Task<End>?
    private var verdict: HTTPResponseVerdict?
    private var status = 0
    /// Where the body is written from (a download's offset, 0 once restarted).
    private var offset: Int64
    private var received: TransferValidator?
    private var expectedEnd: Int64?
    private var expectedTotal: Int64?
    private var mimeType: String?
    private var suggestedFilename: String?
    private var finalURL: String
    /// Bytes written (downloads, from ``offset``) or sent (uploads) by this request.
    private var done: Int64 = 0
    /// The bytes done at which the next checkpoint is reported: the next multiple of the checkpoint size.
    private var nextCheckpoint: Int64 = 0
    /// The bytes done of the last checkpoint reported (the offset before any).
    private var lastReported: Int64 = 0
    private var lastActivity = NIODeadline.now()
    private var idleCheck: Scheduled<Void>?
    private var cancelled = false
    private var writeFailure: PartFile.Failure?
    private var ended = false
    /// An accepted upload's answer, as far as it is kept.
    private var responseBody: [UInt8] = []
    /// The answer was longer than the limit.
    private var responseBodyCut = false

    /// An attempt on `eventLoop`; it does nothing until ``start(_:)``.
    init(
        kind: Kind, url: String, sent: TransferValidator?, mayRestart: Bool, carriedRestartReason: String?, checkpointBytes: Int64,
        gate: CheckpointGate? = nil, idleTimeout: Double, eventLoop: any EventLoop, now: @escaping @Sendable () -> Date,
        events: @escaping @Sendable (HTTPTransferEvent) -> Void
    ) {
        self.kind = kind
        self.finalURL = url
        self.sent = sent
        self.mayRestart = mayRestart
        self.carriedRestartReason = carriedRestartReason
        self.checkpointBytes = max(1, checkpointBytes)
        self.idleTimeout = .nanoseconds(Int64(max(0.001, idleTimeout) * 1e9))
        self.eventLoop = eventLoop
        self.now = now
        self.events = events
        if case .download(_, let offset) = kind { self.offset = offset } else { self.offset = 0 }
        nextCheckpoint = (self.offset / self.checkpointBytes + 1) * self.checkpointBytes
        lastReported = self.offset
        // The part file was cut to the offset: what the journal vouches for beyond it is gone.
        self.gate = gate
        gate?.restart(from: self.offset)
    }

    /// The valid bytes in the part file now (downloads), or sent (uploads).
    private var bytesDone: Int64 {
        switch kind {
        case .download: offset + done
        case .upload: done
        }
    }

    /// The validator of the part file's bytes now: the response's once its body is being written, else the one sent.
    private var currentValidator: TransferValidator? {
        if case .write = verdict { return received }
        return sent
    }

    // MARK: Started, cancelled, idle

    /// Keeps `task`, to end it when cancelled or idle. On the loop, right after the request was handed to the client.
    func start(_ task: HTTPClient.Task<End>) {
        eventLoop.preconditionInEventLoop()
        self.task = task
        if cancelled { task.cancel() }
    }

    /// Ends the request as cancelled; from any thread.
    func cancel() {
        eventLoop.execute {
            self.cancelled = true
            self.gate?.release(CancellationError())
            self.task?.cancel()
        }
    }

    private func armIdleCheck(at deadline: NIODeadline) {
        idleCheck = eventLoop.scheduleTask(deadline: deadline) { [self] in
            // The deadline moves with each byte; the check is scheduled again rather than per byte.
            let due = lastActivity + idleTimeout
            if NIODeadline.now() >= due {
                task?.fail(reason: IdleTimeout())
            } else {
                armIdleCheck(at: due)
            }
        }
    }

    // MARK: The delegate

    func didSendRequestHead(task: HTTPClient.Task<End>, _ head: HTTPRequestHead) {
        // Idleness counts from the moment a connection took the request: waiting for a free connection of the pool
        // is not idleness, and making one is bounded by the client's connect timeout.
        lastActivity = .now()
        if idleCheck == nil { armIdleCheck(at: lastActivity + idleTimeout) }
    }

    func didVisitURL(task: HTTPClient.Task<End>, _ request: HTTPClient.Request, _ head: HTTPResponseHead) {
        finalURL = request.url.absoluteString
        // A redirect: the next connection is to where it leads (a certificate refused there names that host).
        if (300..<400).contains(head.status.code), let location = head.headers.first(name: "Location"),
            let next = URL(string: location, relativeTo: request.url)
        {
            finalURL = next.absoluteString
        }
        lastActivity = .now()
    }

    func didSendRequestPart(task: HTTPClient.Task<End>, _ part: IOData) {
        lastActivity = .now()
        guard case .upload(let size, _) = kind else { return }
        done += Int64(part.readableBytes)
        reportCheckpoint(total: size)
    }

    func didReceiveHead(task: HTTPClient.Task<End>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        lastActivity = .now()
        status = Int(head.status.code)
        received = TransferValidator(headers: head.headers)
        mimeType = head.headers.first(name: "Content-Type").flatMap(TransferHeaders.mimeType)
        suggestedFilename = head.headers.first(name: "Content-Disposition").flatMap { TransferHeaders.filename(contentDisposition: $0) }
            ?? TransferHeaders.filename(url: finalURL)
        switch kind {
        case .download(let partFile, _):
            let verdict = HTTPResponseVerdict.download(
                status: status, headers: head.headers, offset: offset, sent: sent, mayRestart: mayRestart, now: now())
            self.verdict = verdict
            guard case .write(let start, let end, let total, let restartReason) = verdict else { break }
            // A 206 need not repeat the validator: the bytes appended are of the version the request named.
            if start > 0, received == nil { received = sent }
            if start != offset {
                // A resume became a restart: the bytes kept belong to another version, or to nothing the server sends.
                do {
                    try partFile.truncate(to: start)
                } catch {
                    writeFailure = error
                    return eventLoop.makeFailedFuture(error)
                }
                offset = start
                nextCheckpoint = checkpointBytes
                lastReported = start
                gate?.restart(from: start)
            }
            expectedEnd = end
            expectedTotal = total
            events(
                .responseStarted(
                    status: status, offset: offset, expectedTotal: total, validator: received,
                    restartReason: restartReason ?? carriedRestartReason))
        case .upload:
            verdict = HTTPResponseVerdict.upload(status: status, headers: head.headers, now: now())
            if case .accepted = verdict {
                let length = head.headers.first(name: "Content-Length").flatMap { TransferHeaders.decimal(Substring($0)) }
                events(.responseStarted(status: status, offset: 0, expectedTotal: length, validator: received, restartReason: nil))
            }
        }
        return eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<End>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        lastActivity = .now()
        // A download's accepted body is the transfer's, and an accepted upload's answer is kept for the app (up to
        // its limit); an error page is read and dropped.
        if case .upload(_, let limit) = kind, case .accepted = verdict, !ended {
            keep(buffer, limit: limit, of: task)
            return eventLoop.makeSucceededVoidFuture()
        }
        guard case .download(let partFile, _) = kind, case .write = verdict, !ended else { return eventLoop.makeSucceededVoidFuture() }
        return write(buffer, to: partFile)
    }

    /// Keeps an upload's answer up to `limit` bytes; past it, marks it cut and ends the request (the rest is not read:
    /// a server answering megabytes costs no more of the device's data).
    private func keep(_ buffer: ByteBuffer, limit: Int, of task: HTTPClient.Task<End>) {
        guard !responseBodyCut else { return }
        let room = max(0, limit - responseBody.count)
        responseBody.append(contentsOf: buffer.readableBytesView.prefix(room))
        if buffer.readableBytes > room {
            responseBodyCut = true
            task.fail(reason: ResponseBodyLimitReached())
        }
    }

    /// What the app is given of an accepted upload's answer: nil when it had no body.
    private var keptResponseBody: TransferResponseBody? {
        responseBody.isEmpty && !responseBodyCut ? nil : TransferResponseBody(Data(responseBody), truncated: responseBodyCut)
    }

    /// Writes `buffer` after the part file's valid bytes, never more than one checkpoint past what the journal vouches
    /// for (SPEC §11): the part that would go further waits until the journal has caught up, and the socket is not
    /// read meanwhile.
    private func write(_ buffer: ByteBuffer, to partFile: PartFile) -> EventLoopFuture<Void> {
        var buffer = buffer
        while buffer.readableBytes > 0 {
            var length = Int64(buffer.readableBytes)
            if let gate {
                let allowed = gate.journaled + checkpointBytes - bytesDone
                if allowed <= 0 {
                    // The journal must vouch for all but one checkpoint of where the next slice ends: report the bytes
                    // written as a checkpoint unless one that covers them is on its way already, and wait for it.
                    let needed = bytesDone + min(length, checkpointBytes) - checkpointBytes
                    if lastReported < needed { report(total: expectedTotal) }
                    let rest = buffer
                    return gate.whenJournaled(needed, on: eventLoop).flatMap { [self] in
                        lastActivity = .now()
                        return ended ? eventLoop.makeSucceededVoidFuture() : write(rest, to: partFile)
                    }
                }
                length = min(length, allowed)
            }
            let slice = buffer.readSlice(length: Int(length))!
            let (written, failure) = partFile.write(slice, at: offset + done)
            done += Int64(written)
            if let failure {
                writeFailure = failure
                return eventLoop.makeFailedFuture(failure)
            }
            reportCheckpoint(total: expectedTotal)
        }
        return eventLoop.makeSucceededVoidFuture()
    }

    /// Reports a checkpoint when the bytes done passed a multiple of the checkpoint size (one for several, when a
    /// chunk passed several).
    private func reportCheckpoint(total: Int64?) {
        guard bytesDone >= nextCheckpoint else { return }
        report(total: total)
    }

    /// Reports the bytes done as a checkpoint.
    private func report(total: Int64?) {
        let bytesDone = bytesDone
        nextCheckpoint = (bytesDone / checkpointBytes + 1) * checkpointBytes
        lastReported = bytesDone
        gate?.reported(bytesDone)
        events(.checkpoint(bytesDone: bytesDone, expectedTotal: total))
    }

    func didReceiveError(task: HTTPClient.Task<End>, _ error: any Error) {
        idleCheck?.cancel()
        gate?.release(error)
    }

    func didFinishRequest(task: HTTPClient.Task<End>) throws -> End {
        idleCheck?.cancel()
        ended = true
        switch verdict {
        case .write:
            if let expectedEnd, bytesDone < expectedEnd {
                // A server that closes a Content-Length response early; the next attempt resumes.
                return .outcome(
                    .transient(
                        reason: "the response ended after \(bytesDone) of \(expectedEnd) bytes", retryAfter: nil, bytesDone: bytesDone,
                        validator: received))
            }
            if let expectedTotal, bytesDone != expectedTotal {
                return .outcome(
                    .transient(
                        reason: "the server sent bytes up to \(bytesDone) of a \(expectedTotal)-byte file", retryAfter: nil,
                        bytesDone: min(bytesDone, expectedTotal), validator: received))
            }
            return .finished(status: status, bytes: bytesDone, validator: received, mimeType: mimeType, suggestedFilename: suggestedFilename)
        case .accepted:
            return .finished(
                status: status, bytes: bytesDone, validator: received, mimeType: mimeType, suggestedFilename: nil, responseBody: keptResponseBody)
        case .restartWithoutRange(let reason):
            return .restartWithoutRange(reason: reason)
        case .refetchLastByte(let reason):
            return .refetchLastByte(reason: reason)
        case .transient(let reason, let retryAfter):
            return .outcome(.transient(reason: reason, retryAfter: retryAfter, bytesDone: bytesDone, validator: currentValidator))
        case .permanent(let status, let reason):
            return .outcome(.permanent(status: status, reason: reason, bytesDone: bytesDone))
        case nil:
            return .outcome(
                .transient(reason: "the request ended without a response", retryAfter: nil, bytesDone: bytesDone, validator: currentValidator))
        }
    }

    /// The end of a request that failed with `error`: what the engine stopped it for (cancelled, idle, a write that
    /// failed), else what the error says. On the loop, once the task's future failed.
    func end(after error: any Error) -> End {
        idleCheck?.cancel()
        gate?.release(error)
        ended = true
        let bytesDone = bytesDone
        if let writeFailure {
            return .outcome(.writeFailed(reason: writeFailure.reason, errno: writeFailure.errno, bytesDone: bytesDone))
        }
        if cancelled { return .outcome(.cancelled(bytesDone: bytesDone)) }
        // A head already decided the end: an error page that breaks off while it is read and dropped changes nothing.
        switch verdict {
        case .transient(let reason, let retryAfter):
            return .outcome(.transient(reason: reason, retryAfter: retryAfter, bytesDone: bytesDone, validator: currentValidator))
        case .permanent(let status, let reason):
            return .outcome(.permanent(status: status, reason: reason, bytesDone: bytesDone))
        case .restartWithoutRange(let reason):
            return .restartWithoutRange(reason: reason)
        case .refetchLastByte(let reason):
            return .refetchLastByte(reason: reason)
        case .accepted:
            // The server took the whole file and said so; only its answer's body broke off, or was longer than kept.
            if case .upload(let size, _) = kind, done == size {
                if !(error is ResponseBodyLimitReached) { responseBodyCut = true }
                return .finished(
                    status: status, bytes: done, validator: received, mimeType: mimeType, suggestedFilename: nil, responseBody: keptResponseBody)
            }
        case .write, nil:
            break
        }
        if error is IdleTimeout {
            let seconds = Double(idleTimeout.nanoseconds) / 1e9
            return .outcome(
                .transient(
                    reason: "no byte \(verdict == nil ? "came" : "moved") for \(Self.format(seconds)) s (the idle timeout)", retryAfter: nil,
                    bytesDone: bytesDone, validator: currentValidator))
        }
        if let failure = error as? UploadFile.Failure {
            return .outcome(.permanent(status: nil, reason: failure.reason, bytesDone: bytesDone))
        }
        if let clientError = error as? HTTPClientError {
            switch clientError {
            case .redirectLimitReached:
                return .outcome(.permanent(status: nil, reason: "too many redirects (the last to \(HTTPTransferEngine.redacted(finalURL)))", bytesDone: bytesDone))
            case .redirectCycleDetected:
                return .outcome(.permanent(status: nil, reason: "the redirects go round in a cycle (through \(HTTPTransferEngine.redacted(finalURL)))", bytesDone: bytesDone))
            case .invalidURL, .emptyHost, .emptyScheme:
                return .outcome(.permanent(status: nil, reason: "a redirect led to an unusable URL: \(clientError)", bytesDone: bytesDone))
            case .cancelled:
                return .outcome(.cancelled(bytesDone: bytesDone))
            default:
                break
            }
        }
        if let reason = TransferTLSFailure.untrustedCertificate(error, host: URL(string: finalURL)?.host ?? finalURL) {
            return .outcome(.permanent(status: nil, reason: reason, bytesDone: bytesDone))
        }
        let during = verdict == nil ? "before a response" : "after \(bytesDone) bytes"
        return .outcome(
            .transient(reason: "the connection failed \(during): \(error)", retryAfter: nil, bytesDone: bytesDone, validator: currentValidator))
    }

    /// `0.5`, `60`.
    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}
