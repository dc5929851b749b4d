import Foundation
import Logging
import NIOCore
import NIOPosix
import OffstageCore

/// Runs the transfer attempts the core starts (SPEC §5), each as a Swift task on the ``HTTPTransferEngine``, and
/// reports their checkpoints and ends to the daemon's loop as core inputs. It decides nothing: which task runs, when,
/// and what a failure means are the core's.
///
/// A task's next attempt starts only once its previous one has ended, so two attempts never write one part file.
/// State lives on the daemon's event loop, like the engine's.
final class TransferRunner: @unchecked Sendable {
    /// The transfer engine's threads: body parts are written there, off the daemon's loop.
    private let group: MultiThreadedEventLoopGroup
    private let engine: HTTPTransferEngine
    private let loop: any EventLoop
    private let paths: TransferPaths
    private let checkpointBytes: Int64
    private let logger: Logger
    /// Where checkpoints and ends go, on the loop.
    private let report: @Sendable (Report) -> Void
    /// The attempt in flight of each task, and the Swift task running it.
    private var running: [UInt64: (attempt: UInt64, job: Task<Void, Never>)] = [:]

    /// What an attempt tells the core.
    enum Report: Sendable {
        /// `journaled`: the gate to tell once this checkpoint is in the journal (downloads' checkpoints only).
        case progress(
            UInt64, attempt: UInt64, bytesDone: Int64, bytesExpected: Int64?, validator: TransferValidator?, restarted: String?,
            journaled: CheckpointGate? = nil)
        case ended(UInt64, attempt: UInt64, TransferAttemptResult)
    }

    /// A runner whose engine has `threads` threads and at most `connectionsPerHost` connections to one host.
    init(
        root: String, loop: any EventLoop, threads: Int = 1, connectionsPerHost: Int, checkpointBytes: Int64, logger: Logger,
        report: @escaping @Sendable (Report) -> Void
    ) {
        group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, threads))
        engine = HTTPTransferEngine(eventLoopGroup: group, maxConnections: connectionsPerHost, logger: logger)
        self.loop = loop
        self.paths = TransferPaths(root: root)
        self.checkpointBytes = checkpointBytes
        self.logger = logger
        self.report = report
    }

    /// Starts attempt `task.attempt`, after the task's previous attempt has ended; an upload keeps up to
    /// `responseBodyLimit` bytes of its server's answer.
    func start(_ task: TransferTask, responseBodyLimit: Int = TransferLimits().maximumResponseBodyBytes) {
        loop.preconditionInEventLoop()
        let previous = running[task.id]?.job
        previous?.cancel()
        var job = makeJob(task)
        job.responseBodyLimit = responseBodyLimit
        let gate = task.request.kind == .download ? CheckpointGate() : nil
        job.gate = gate
        let (engine, report, id, attempt) = (engine, report, task.id, task.attempt)
        let spool = paths.spool(task.app)
        let work = Task {
            await previous?.value
            do {
                try FileManager.default.createDirectory(atPath: spool, withIntermediateDirectories: true)
            } catch {
                report(.ended(id, attempt: attempt, .file("cannot make the folder \(spool): \(error)")))
                return
            }
            let outcome = await engine.run(job) { event in
                switch event {
                case .responseStarted(_, let offset, let total, let validator, let restartReason):
                    report(.progress(id, attempt: attempt, bytesDone: offset, bytesExpected: total, validator: validator, restarted: restartReason))
                case .checkpoint(let bytesDone, let total):
                    report(.progress(id, attempt: attempt, bytesDone: bytesDone, bytesExpected: total, validator: nil, restarted: nil, journaled: gate))
                }
            }
            report(.progress(id, attempt: attempt, bytesDone: outcome.bytesDone, bytesExpected: nil, validator: Self.validator(of: outcome), restarted: nil))
            report(.ended(id, attempt: attempt, Self.result(of: outcome)))
        }
        running[task.id] = (task.attempt, work)
    }

    /// Stops attempt `attempt` of the task, if it is the one in flight; it reports its end as cancelled.
    func stop(_ id: UInt64, attempt: UInt64) {
        loop.preconditionInEventLoop()
        guard let current = running[id], current.attempt == attempt else { return }
        current.job.cancel()
    }

    /// The attempt ended (the core has its report): forgets it unless a newer one replaced it.
    func ended(_ id: UInt64, attempt: UInt64) {
        loop.preconditionInEventLoop()
        if running[id]?.attempt == attempt { running[id] = nil }
    }

    /// Stops every attempt and waits for them, then the engine. Reports that arrive after are ignored by the core
    /// only if the daemon is gone; while it stops they journal the last checkpoints.
    func shutdown() async {
        let jobs = try? await loop.submit { [self] in running.values.map(\.job) }.get()
        for job in jobs ?? [] { job.cancel() }
        for job in jobs ?? [] { await job.value }
        try? await engine.shutdown()
        try? await group.shutdownGracefully()
    }

    private func makeJob(_ task: TransferTask) -> HTTPTransferJob {
        let headers = task.request.headers.map { (name: $0.name, value: $0.value) }
        let body: HTTPTransferJob.Body
        switch task.request.kind {
        case .download:
            body = .download(partFile: paths.partFile(task), resumeFrom: task.bytesDone, validator: task.validator)
        case .upload:
            body = .upload(file: task.request.uploadFile ?? "")
        }
        var job = HTTPTransferJob(url: task.request.url, method: task.request.method, headers: headers, body: body)
        job.checkpointBytes = checkpointBytes
        return job
    }

    static func validator(of outcome: HTTPTransferOutcome) -> TransferValidator? {
        switch outcome {
        case .completed(_, _, let validator, _, _, _), .transient(_, _, _, let validator): validator
        default: nil
        }
    }

    static func result(of outcome: HTTPTransferOutcome) -> TransferAttemptResult {
        switch outcome {
        case .completed(let status, _, _, _, _, let body): .completed(status: status, responseBody: body)
        case .transient(let reason, let retryAfter, _, _): .transient(reason, retryAfter: retryAfter)
        case .permanent(let status, let reason, _): .permanent(status: status, reason)
        case .writeFailed(let reason, _, _): .file(reason)
        case .cancelled: .cancelled
        }
    }
}
