import OffstageCore
import Testing

/// Model-based tests of background transfers and continued processing, in the whole lifecycle: the same shell and
/// invariants as ``ModelBasedTests``, with apps downloading and continuing work the user started (see
/// ModelShell+Transfers.swift for how the engine and the apps are played, ModelTransfers.swift for the invariants).
@Suite("Model-based tests of transfers and continued processing (SPEC TR-1..6, SCH-11)")
struct ModelBasedTransferTests {
    @Test(
        "TR-1, TR-2, TR-3, TR-4, TR-5, TR-6, SCH-11, LC-6, SET-2: random sessions keep every transfer and continued-processing invariant, across restarts",
        arguments: SeedBatch.batches(first: 15_000_000, batches: 2, perBatch: 250))
    func transfers(batch: SeedBatch) {
        let result = ModelExplorer.check(batch, profile: .transfers, test: "ModelBasedTransferTests/transfers")
        guard batch.count >= 200 else { return }
        // Attempts started, stopped, retried, completed and failed; files handed over; apps launched and resumed for
        // their sessions' events; continued tasks run and ended (a queued one launching its app is rare here:
        // `queuedContinuedTaskLaunchesItsApp` has it).
        let reached = [
            "transfer.start", "transfer.stop", "transfer.handOver", "transfer.save.completed", "transfer.save.failed",
            "transfer.save.waiting", "transfer.save.paused", "transfer.delete", "transfer.saveRelaunches",
            "launch.transfer-events", "deliver.transferEvents", "continued.running", "continued.ending",
            "freeze", "thaw",
        ]
        result.expectReached(reached)
        #expect(result.inputs > result.sequences * 20)
    }

    @Test("TR-6: a restart puts back what the journal holds: a running download resumes from its checkpoint, nothing lost")
    func restartResumesFromTheJournal() {
        let shell = ModelShell.replay(
            [
                .install(0, .downloader), .install(1, .plain), .install(2, .plain), .open(0), .spawn(0, .normal),
                .attach(0), .reply(0), .reply(0), .openTransferSession(0, session: 0, discretionary: false),
                .createTransfer(0, session: 0, file: 1, discretionary: false), .transferProgress(0), .restart,
            ], enabled: Set(Invariant.allCases), tracing: true)
        #expect(shell.violation == nil, "\(shell.violation.map(\.description) ?? "")\n\(shell.trace?.joined(separator: "\n") ?? "")")
        let tasks = Array(shell.core.transfers.tasks.values)
        #expect(tasks.count == 1)
        #expect(tasks.first?.bytesDone == 1_048_576, "resumed from its checkpoint")
        #expect(tasks.first?.interrupted == true || tasks.first?.state == .running)
    }

    @Test("LC-9, MODE-2: a VoIP app in a crash loop when the daemon restarts is launched once its delay has passed, not at boot")
    func bootLaunchWaitsForTheCrashLoopDelay() {
        // Found by the transfers profile (seeds 15000139, 15000327): the boot launch ignored the durable delay.
        var shell = ModelShell.replay(
            [.install(1, .modes), .runTask(1, .fetch), .advance(ms: 154_135), .restart], enabled: Set(Invariant.allCases),
            tracing: true)
        #expect(shell.violation == nil, "\(shell.violation.map(\.description) ?? "")")
        #expect(shell.pendingLaunches.isEmpty, "not launched at boot")
        let restartedAt = shell.trace?.count ?? 0
        shell.apply(.advance(ms: 600_000))
        #expect(shell.violation == nil, "\(shell.violation.map(\.description) ?? "")")
        let later = shell.trace?.dropFirst(restartedAt) ?? []
        #expect(later.contains { $0.contains("→ launch com.example.model1") && $0.contains("(voip)") }, "launched when the delay ended")
    }

    @Test("SCH-11: a queued continued task whose app crashed starts in a launch into the background when a slot frees")
    func queuedContinuedTaskLaunchesItsApp() {
        var shell = ModelShell.replay(
            [
                .install(0, .downloader), .install(1, .downloader), .install(2, .plain), .open(0), .spawn(0, .normal),
                .attach(0), .reply(0), .reply(0), .submitContinued(0, index: 0, queue: true),
                .submitContinued(0, index: 1, queue: true), .submitContinued(0, index: 2, queue: true), .home,
                .exit(0, .signaled(11)),
            ], enabled: Set(Invariant.allCases), tracing: true)
        #expect(shell.violation == nil, "\(shell.violation.map(\.description) ?? "")")
        shell.apply(.advance(ms: 1_000))
        #expect(shell.violation == nil, "\(shell.violation.map(\.description) ?? "")")
        #expect(
            shell.trace?.contains { $0.contains("(continued-processing)") } == true,
            "\(shell.trace?.joined(separator: "\n") ?? "")")
    }
}

