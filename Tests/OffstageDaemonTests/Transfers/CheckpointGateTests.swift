import Foundation
import NIOCore
import NIOPosix
@testable import OffstageDaemon
import Synchronization
import TestProcesses
import Testing

/// A download never runs more than one checkpoint past what the daemon's journal vouches for, so a crash fetches at
/// most one chunk again (SPEC TR-6, §11).
@Suite("Transfers: the checkpoint gate", .timeLimit(.minutes(2)))
struct CheckpointGateTests {
    /// The checkpoints a download reported, in order, from the engine's loop.
    final class Reported: Sendable {
        private let list = Mutex<[Int64]>([])
        /// Adds `bytes`; returns how many there are now.
        func append(_ bytes: Int64) -> Int { list.withLock { $0.append(bytes); return $0.count } }
        var all: [Int64] { list.withLock { $0 } }
        var count: Int { all.count }
    }

    @Test("§11: each confirmation journals the oldest checkpoint reported; a write waits until the journal reaches it")
    func confirmationsInOrder() async throws {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let gate = CheckpointGate(journaled: 100)
        #expect(gate.journaled == 100)
        try await gate.whenJournaled(100, on: loop).get()  // vouched for already: at once
        gate.reported(200)
        gate.reported(300)
        let waiting = gate.whenJournaled(250, on: loop)
        let done = Mutex(false)
        waiting.whenComplete { _ in done.withLock { $0 = true } }
        gate.journaledNext()
        #expect(gate.journaled == 200)
        try await loop.submit {}.get()  // callbacks of a promise completed on the loop have run by now
        #expect(!done.withLock { $0 }, "200 journaled is not 250")
        gate.journaledNext()
        try await waiting.get()
        #expect(gate.journaled == 300)
        gate.journaledNext()  // nothing pending: nothing changes
        #expect(gate.journaled == 300)
    }

    @Test("§11: after the part file starts over, checkpoints reported before it confirm nothing")
    func restartForgetsEarlierCheckpoints() {
        let gate = CheckpointGate()
        gate.reported(1 << 20)
        gate.reported(2 << 20)
        gate.restart(from: 0)
        gate.reported(4096)
        gate.journaledNext()
        gate.journaledNext()
        #expect(gate.journaled == 0, "the bytes of the earlier version were cut off")
        gate.journaledNext()
        #expect(gate.journaled == 4096)
    }

    @Test("§11: an attempt that ends fails the write waiting for the journal")
    func releaseFailsTheWaiter() async throws {
        let gate = CheckpointGate()
        let waiting = gate.whenJournaled(10, on: MultiThreadedEventLoopGroup.singleton.next())
        gate.release(CancellationError())
        await #expect(throws: CancellationError.self) { try await waiting.get() }
    }

    @Test("TR-6, §11: against nginx, a download whose checkpoints are not journaled stops one checkpoint past the last one that is, and goes on when they are")
    func downloadWaitsForTheJournal() async throws {
        let nginx = try NginxServer.start()
        defer { nginx.stop() }
        try await TransferEngineFixture.with { fixture in
            let size = 8 << 20
            let chunk: Int64 = 256 << 10
            let data = TransferEngineFixture.randomBytes(size)
            try data.write(to: URL(fileURLWithPath: nginx.root + "/eight.bin"))
            let part = fixture.folder + "/eight.part"
            var job = HTTPTransferJob.download(nginx.url("/eight.bin"), to: part)
            job.checkpointBytes = chunk
            let gate = CheckpointGate()
            job.gate = gate
            // The journal confirms the first three checkpoints and then stops, as a daemon whose loop is stuck would.
            let reported = Reported()
            let (engine, held) = (fixture.engine, job)
            let running = Task {
                await engine.run(held) { event in
                    guard case .checkpoint(let bytes, _) = event else { return }
                    if reported.append(bytes) <= 3 { gate.journaledNext() }
                }
            }
            // Wait until the download is held: the fourth checkpoint is reported and never confirmed.
            let deadline = Date().addingTimeInterval(20)
            while reported.count < 4, Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
            let checkpoints = reported.all
            try #require(checkpoints.count >= 4, "checkpoints: \(checkpoints)")
            // A safety property: at no time may the part file hold more than one checkpoint past the journal. Looked
            // at a while after the download was held (an unheld one is done with 8 MiB on loopback by then).
            try await Task.sleep(for: .milliseconds(300))
            let journaled = gate.journaled
            let written = Int64(try FileManager.default.attributesOfItem(atPath: part)[.size] as? Int ?? -1)
            #expect(journaled == checkpoints[2], "the third checkpoint is the last journaled: \(checkpoints)")
            #expect(written <= journaled + chunk, "written \(written), journaled \(journaled)")
            #expect(written < Int64(size))
            #expect(reported.count == 4, "no checkpoint past the unconfirmed one: \(reported.all)")
            // The journal catches up: every checkpoint reported so far and after is confirmed, and the download ends.
            let confirmer = Task {
                var confirmed = 3
                while !Task.isCancelled {
                    let count = reported.count
                    while confirmed < count { gate.journaledNext(); confirmed += 1 }
                    try? await Task.sleep(for: .milliseconds(5))
                }
            }
            let outcome = await running.value
            confirmer.cancel()
            guard case .completed(200, let bytes, _, _, _, _) = outcome else {
                Issue.record("expected completed, got \(outcome)")
                return
            }
            #expect(bytes == Int64(size))
            #expect(try Data(contentsOf: URL(fileURLWithPath: part)) == data)
        }
    }

    @Test("TR-2: cancelling a download held by the gate ends it as cancelled, at once")
    func cancelWhileHeld() async throws {
        let nginx = try NginxServer.start()
        defer { nginx.stop() }
        try await TransferEngineFixture.with { fixture in
            try TransferEngineFixture.randomBytes(4 << 20).write(to: URL(fileURLWithPath: nginx.root + "/four.bin"))
            var job = HTTPTransferJob.download(nginx.url("/four.bin"), to: fixture.folder + "/four.part")
            job.checkpointBytes = 256 << 10
            job.gate = CheckpointGate()
            let checkpoints = Reported()
            let (engine, held) = (fixture.engine, job)
            let running = Task { await engine.run(held) { if case .checkpoint(let bytes, _) = $0 { _ = checkpoints.append(bytes) } } }
            let deadline = Date().addingTimeInterval(20)
            while checkpoints.count < 1, Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
            running.cancel()
            let outcome = await running.value
            guard case .cancelled(let bytes) = outcome else {
                Issue.record("expected cancelled, got \(outcome)")
                return
            }
            #expect(bytes <= 256 << 10, "never more than one checkpoint past none journaled: \(bytes)")
        }
    }
}
