import Foundation
import Logging
import NIOCore
import NIOPosix
import OffstageCore
@testable import OffstageDaemon
import TestProcesses
import Testing

/// The runner carries out the core's start and stop against a real nginx and reports checkpoints and ends, in order,
/// on the daemon's loop (SPEC TR-1, TR-4).
@Suite("Transfers: the runner")
struct TransferRunnerTests {
    /// Every report, in order, as the runner gave it.
    struct Reports {
        let stream: AsyncStream<TransferRunner.Report>
        let continuation: AsyncStream<TransferRunner.Report>.Continuation
        init() { (stream, continuation) = AsyncStream.makeStream() }
    }

    /// Reads reports until attempt `attempt` of task `id` ends; returns its result and the bytes it checkpointed.
    func end(of id: UInt64, attempt: UInt64, in reports: Reports) async -> (result: TransferAttemptResult?, progress: [Int64]) {
        var progress: [Int64] = []
        for await report in reports.stream {
            // The test is the daemon: each checkpoint is "journaled" as soon as it is read.
            if case .progress(_, _, _, _, _, _, let gate) = report { gate?.journaledNext() }
            switch report {
            case .progress(id, attempt, let bytes, _, _, _, _): progress.append(bytes)
            case .ended(id, attempt, let result): return (result, progress)
            default: continue
            }
        }
        return (nil, progress)
    }

    @Test("TR-1: a started download is written to its part file, checkpointed every chunk, and reported completed; a stopped one reports cancelled")
    func startAndStop() async throws {
        let nginx = try NginxServer.start()
        defer { nginx.stop() }
        var template = Array("/tmp/offstage-runner-XXXXXX".utf8CString)
        let root = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: root) }
        let bytes = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try Data(bytes).write(to: URL(fileURLWithPath: nginx.root + "/three.bin"))
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let reports = Reports()
        let runner = TransferRunner(
            root: root, loop: loop, connectionsPerHost: 4, checkpointBytes: 1 << 20, logger: Logger(label: "test"),
            report: { report in reports.continuation.yield(report) })
        var task = TransferTask(
            id: 7, app: "com.example.a", session: "s",
            request: TransferRequest(kind: .download, url: nginx.url("/three.bin"), filename: "three.bin"), at: .epoch)
        task.attempt = 1
        let started = task
        try await loop.submit { runner.start(started) }.get()
        let (result, progress) = await end(of: 7, attempt: 1, in: reports)
        #expect(result == .completed(status: 200))
        let written = try Data(contentsOf: URL(fileURLWithPath: TransferPaths(root: root).partFile(task)))
        #expect(written == Data(bytes))
        // A checkpoint at the first body part past each MiB: never more than a MiB and a body part apart.
        #expect(progress.first == 0 && progress.last == 3 << 20, "\(progress)")
        #expect(zip(progress.dropFirst(), progress).allSatisfy { $0 - $1 <= (1 << 20) + (1 << 17) }, "a checkpoint per MiB: \(progress)")
        #expect(progress.filter { $0 > 0 && $0 < 3 << 20 }.count == 2, "\(progress)")

        // A download of a server that never answers, stopped by the core.
        var slow = TransferTask(
            id: 8, app: "com.example.a", session: "s",
            request: TransferRequest(kind: .download, url: nginx.url("/flaky/three.bin"), filename: "x"), at: .epoch)
        slow.attempt = 1
        let stopping = slow
        try await loop.submit { runner.start(stopping); runner.stop(8, attempt: 1) }.get()
        let stopped = await end(of: 8, attempt: 1, in: reports).result
        #expect(stopped == .cancelled || stopped == .transient("the server answered 503 Service Unavailable", retryAfter: 7))
        await runner.shutdown()
        try await group.shutdownGracefully()
    }
}
