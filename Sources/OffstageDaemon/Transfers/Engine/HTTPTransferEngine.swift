import OffstageCore
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// The part of background transfers that moves the bytes (SPEC TR-1, TR-4): runs one attempt of a download or an
/// upload over HTTP or HTTPS and says how it ended. What runs and when, retries and their backoff, are decided
/// elsewhere: the engine retries nothing by itself, except one more request when a resume's answer calls for it: a
/// 416 (or a 206 of another range or version) starts over without Range, and a 416 saying the part file already
/// holds every byte asks for the last byte only (an attempt that wrote it and ended before it could say so fetches
/// one byte again, not the file).
///
/// A download writes into its part file with positioned writes, from where the bytes it may keep end: a resume sends
/// `Range` with `If-Range`, and appends to the part file when the server answers 206 with that range; any other
/// answer starts the part file over (``HTTPTransferEvent/responseStarted(status:offset:expectedTotal:validator:restartReason:)``
/// says why). A complete part file is fsynced, not renamed. An upload streams its file as the body.
///
/// Give the engine an event loop group of its own (one or two threads): body parts are written on its loops (see
/// ``HTTPTransferAttempt``), which should not delay the daemon's other work.
///
/// ```swift
/// let engine = HTTPTransferEngine(eventLoopGroup: group, maxConnections: 4, logger: logger)
/// let outcome = await engine.run(.download("https://example.net/big.iso", to: "/var/lib/x/1.part")) { event in … }
/// try await engine.shutdown()
/// ```
final class HTTPTransferEngine: Sendable {
    /// Redirects followed by one request; more end the job as permanent.
    static let redirectLimit = 10
    /// The longest a connection may take to be made (TCP and TLS); then the attempt is transient. Idleness is
    /// counted per job (``HTTPTransferJob/idleTimeout``) once the request is sent.
    static let connectTimeout: TimeAmount = .seconds(60)

    private let client: HTTPClient
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger
    private let now: @Sendable () -> Date

    /// An engine on `eventLoopGroup`, with at most `maxConnections` connections to one host (HTTP/1; HTTP/2 carries
    /// the transfers to a host on one connection). Requests beyond wait for a free connection, which does not count as
    /// idleness.
    convenience init(eventLoopGroup: any EventLoopGroup, maxConnections: Int, logger: Logger) {
        self.init(eventLoopGroup: eventLoopGroup, maxConnections: maxConnections, logger: logger, now: { Date() })
    }

    /// An engine whose Retry-After dates are read against `now` (tests give a fixed instant). `tls` replaces the
    /// client's TLS configuration (the system's trust store, full verification): only tests give one, to trust a
    /// certificate they made; the daemon has no such setting.
    init(
        eventLoopGroup: any EventLoopGroup, maxConnections: Int, logger: Logger, now: @escaping @Sendable () -> Date,
        tls: TLSConfiguration? = nil
    ) {
        var pool = HTTPClient.Configuration.ConnectionPool(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(1, maxConnections))
        // A connection that cannot be made fails the attempt at once: retrying it is the scheduler's business.
        pool.retryConnectionEstablishment = false
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .follow(max: Self.redirectLimit, allowCycles: false),
            timeout: .init(connect: Self.connectTimeout),
            connectionPool: pool,
            // The bytes as the server sends them, so that a range of them can be resumed.
            decompression: .disabled)
        if let tls { configuration.tlsConfiguration = tls }
        self.client = HTTPClient(eventLoopGroup: eventLoopGroup, configuration: configuration, backgroundActivityLogger: logger)
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        self.now = now
    }

    /// Runs one attempt of `job` and returns how it ended; `events` hears of its progress meanwhile, in order, on an
    /// event loop of the engine (it must not block). Cancelling the calling Task cancels the request and returns
    /// ``HTTPTransferOutcome/cancelled(bytesDone:)``.
    func run(_ job: HTTPTransferJob, events: @escaping @Sendable (HTTPTransferEvent) -> Void) async -> HTTPTransferOutcome {
        let outcome: HTTPTransferOutcome
        switch job.body {
        case .download(let path, let resumeFrom, let validator):
            outcome = await download(job, partFile: path, resumeFrom: resumeFrom, validator: validator, events: events)
        case .upload(let path):
            outcome = await upload(job, file: path, events: events)
        }
        switch outcome {
        case .completed, .cancelled: break
        case .transient(let reason, let retryAfter, let bytesDone, _):
            logger.notice(
                "transfer attempt failed, to be retried: \(reason)",
                metadata: metadata(job, ["offstage.transfer.bytes": "\(bytesDone)", "offstage.transfer.retryAfter": "\(retryAfter.map { "\($0)" } ?? "none")"]))
        case .permanent(let status, let reason, let bytesDone):
            logger.notice(
                "transfer failed: \(reason)",
                metadata: metadata(job, ["offstage.transfer.bytes": "\(bytesDone)", "offstage.transfer.status": "\(status.map { "\($0)" } ?? "none")"]))
        case .writeFailed(let reason, let errno, let bytesDone):
            logger.notice(
                "transfer could not write its file: \(reason)",
                metadata: metadata(job, ["offstage.transfer.bytes": "\(bytesDone)", "offstage.transfer.errno": "\(errno)"]))
        }
        return outcome
    }

    /// Ends the client: requests in flight fail. Call once, after the last ``run(_:events:)`` returned.
    func shutdown() async throws {
        try await client.shutdown()
    }

    // MARK: Downloads

    private func download(
        _ job: HTTPTransferJob, partFile path: String, resumeFrom: Int64, validator: TransferValidator?,
        events: @escaping @Sendable (HTTPTransferEvent) -> Void
    ) async -> HTTPTransferOutcome {
        let url: URL
        switch Self.check(job.url) {
        case .success(let checked): url = checked
        case .failure(let problem): return .permanent(status: nil, reason: problem.reason, bytesDone: 0)
        }
        let partFile: PartFile
        var offset: Int64
        let found: Int64
        do {
            partFile = try PartFile(path: path)
            // The bytes to keep: those the daemon vouches for that are really there; anything after is cut off.
            found = try partFile.size()
            offset = max(0, min(resumeFrom, found))
            try partFile.truncate(to: offset)
        } catch {
            return .writeFailed(reason: error.reason, errno: error.errno, bytesDone: 0)
        }
        defer { partFile.close() }
        if resumeFrom > 0 || found > 0 {
            // Bytes written after the last checkpoint the journal holds (by an attempt cut short by a crash) are
            // fetched again. The gate keeps them within one checkpoint (SPEC §11); the figure is logged to be measured.
            logger.notice(
                "transfer resumes from its last checkpoint; bytes written after it are fetched again",
                metadata: metadata(job, ["offstage.transfer.kept": "\(offset)", "offstage.transfer.refetched": "\(found - offset)"]))
        }
        if offset < resumeFrom {
            logger.notice(
                "the part file is shorter than expected: resuming from its size",
                metadata: metadata(job, ["offstage.transfer.expected": "\(resumeFrom)", "offstage.transfer.found": "\(offset)"]))
        }
        var sent = offset > 0 ? validator : nil
        var carriedRestartReason: String?
        var askedAgain = false
        while true {
            if Task.isCancelled { return .cancelled(bytesDone: offset) }
            var headers = Self.appHeaders(job.headers)
            if offset > 0 {
                headers.add(name: "Range", value: "bytes=\(offset)-")
                if let ifRange = sent?.ifRange { headers.add(name: "If-Range", value: ifRange) }
            }
            let attempt = HTTPTransferAttempt(
                kind: .download(partFile: partFile, offset: offset), url: url.absoluteString, sent: sent,
                mayRestart: !askedAgain, carriedRestartReason: carriedRestartReason, checkpointBytes: job.checkpointBytes,
                gate: job.gate, idleTimeout: job.idleTimeout, eventLoop: eventLoopGroup.next(), now: now, events: events)
            let request: HTTPClient.Request
            do {
                request = try HTTPClient.Request(url: url, method: HTTPMethod(rawValue: job.method), headers: headers)
            } catch {
                return .permanent(status: nil, reason: "the request for \(job.url) cannot be made: \(error)", bytesDone: offset)
            }
            switch await execute(request, attempt) {
            case .outcome(let outcome):
                return outcome
            case .restartWithoutRange(let reason):
                logger.notice("transfer restarts from the start: \(reason)", metadata: metadata(job, ["offstage.transfer.dropped": "\(offset)"]))
                do {
                    try partFile.truncate(to: 0)
                } catch {
                    return .writeFailed(reason: error.reason, errno: error.errno, bytesDone: 0)
                }
                offset = 0
                sent = nil
                carriedRestartReason = reason
                askedAgain = true
            case .refetchLastByte(let reason):
                logger.notice("transfer asks for the last byte again: \(reason)", metadata: metadata(job, [:]))
                do {
                    try partFile.truncate(to: offset - 1)
                } catch {
                    return .writeFailed(reason: error.reason, errno: error.errno, bytesDone: offset)
                }
                offset -= 1
                askedAgain = true
            case .finished(let status, let bytes, let validator, let mimeType, let suggestedFilename, _):
                // fsync can take seconds for a large file: on a thread of the pool, not on the loop nor the task's
                // executor.
                do {
                    try await NIOThreadPool.singleton.runIfActive { try partFile.sync() }
                } catch let failure as PartFile.Failure {
                    return .writeFailed(reason: failure.reason, errno: failure.errno, bytesDone: bytes)
                } catch {
                    return .writeFailed(reason: "fsync of the part file \(path) failed: \(error)", errno: EIO, bytesDone: bytes)
                }
                return .completed(status: status, bytes: bytes, validator: validator, mimeType: mimeType, suggestedFilename: suggestedFilename)
            }
        }
    }

    // MARK: Uploads

    private func upload(
        _ job: HTTPTransferJob, file path: String, events: @escaping @Sendable (HTTPTransferEvent) -> Void
    ) async -> HTTPTransferOutcome {
        let url: URL
        switch Self.check(job.url) {
        case .success(let checked): url = checked
        case .failure(let problem): return .permanent(status: nil, reason: problem.reason, bytesDone: 0)
        }
        let file: UploadFile
        do {
            file = try UploadFile(path: path)
        } catch {
            return .permanent(status: nil, reason: error.reason, bytesDone: 0)
        }
        if Task.isCancelled {
            file.close()
            return .cancelled(bytesDone: 0)
        }
        let eventLoop = eventLoopGroup.next()
        // Closed on the loop that reads it, after the request ended.
        defer { eventLoop.execute { file.close() } }
        let attempt = HTTPTransferAttempt(
            kind: .upload(size: file.size, responseBodyLimit: job.responseBodyLimit), url: url.absoluteString, sent: nil, mayRestart: false, carriedRestartReason: nil,
            checkpointBytes: job.checkpointBytes, idleTimeout: job.idleTimeout, eventLoop: eventLoop, now: now, events: events)
        let request: HTTPClient.Request
        do {
            request = try HTTPClient.Request(
                url: url, method: HTTPMethod(rawValue: job.method), headers: Self.appHeaders(job.headers),
                body: .stream(contentLength: file.size) { writer in file.send(to: writer, on: eventLoop) })
        } catch {
            return .permanent(status: nil, reason: "the request for \(job.url) cannot be made: \(error)", bytesDone: 0)
        }
        switch await execute(request, attempt) {
        case .outcome(let outcome):
            return outcome
        case .finished(let status, let bytes, let validator, let mimeType, _, let responseBody):
            return .completed(
                status: status, bytes: bytes, validator: validator, mimeType: mimeType, suggestedFilename: nil, responseBody: responseBody)
        case .restartWithoutRange(let reason), .refetchLastByte(let reason):
            // An upload asks for no range: neither can happen.
            return .permanent(status: nil, reason: reason, bytesDone: 0)
        }
    }

    // MARK: Requests

    /// Sends `request` with `attempt` as its delegate, on the attempt's loop (its connection too), and waits for its
    /// end; a cancellation of the calling task cancels the request.
    private func execute(_ request: HTTPClient.Request, _ attempt: HTTPTransferAttempt) async -> HTTPTransferAttempt.End {
        let eventLoop = attempt.eventLoop
        let task = client.execute(request: request, delegate: attempt, eventLoop: .delegateAndChannel(on: eventLoop), logger: nil)
        eventLoop.execute { attempt.start(task) }
        let ended = task.futureResult.recover { error in attempt.end(after: error) }
        return await withTaskCancellationHandler {
            // `recover` cannot fail: the result is always there.
            (try? await ended.get()) ?? .outcome(.cancelled(bytesDone: 0))
        } onCancel: {
            attempt.cancel()
        }
    }

    /// The app's headers without those the engine sets (Range, If-Range, Content-Length, Transfer-Encoding).
    static func appHeaders(_ headers: [(name: String, value: String)]) -> HTTPHeaders {
        let engines: Set<String> = ["range", "if-range", "content-length", "transfer-encoding"]
        return HTTPHeaders(headers.filter { !engines.contains($0.name.lowercased()) })
    }

    /// Why a job's URL cannot be used.
    struct URLProblem: Error {
        /// The URL and what is wrong with it, with the fix.
        var reason: String
    }

    /// `text` as an `http` or `https` URL with a host, or what is wrong with it.
    static func check(_ text: String) -> Result<URL, URLProblem> {
        guard let url = URL(string: text), let scheme = url.scheme else {
            return .failure(URLProblem(reason: "the URL \"\(text)\" is not a valid URL; give an absolute http or https URL"))
        }
        guard ["http", "https"].contains(scheme.lowercased()) else {
            return .failure(
                URLProblem(reason: "the URL \"\(text)\" has the scheme \(scheme); background transfers support only http and https"))
        }
        guard let host = url.host, !host.isEmpty else {
            return .failure(URLProblem(reason: "the URL \"\(text)\" has no host; give one, as in https://example.net/file"))
        }
        return .success(url)
    }

    /// The job's log metadata: its method and URL (redacted).
    private func metadata(_ job: HTTPTransferJob, _ more: Logger.Metadata) -> Logger.Metadata {
        var metadata = more
        metadata["offstage.transfer.method"] = "\(job.method)"
        metadata["offstage.transfer.url"] = "\(Self.redacted(job.url))"
        return metadata
    }

    /// `url` without what may carry credentials (user and password, query, fragment: a signed URL's signature is in
    /// its query), for logs and reasons.
    static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url) else {
            return String(url.prefix { $0 != "?" && $0 != "#" && $0 != "@" })
        }
        components.user = nil
        components.password = nil
        components.query = nil
        components.fragment = nil
        return components.string ?? ""
    }
}
