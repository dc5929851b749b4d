// Model-based tests of the core: random sessions of user actions, app replies, process exits, timer firings,
// setting changes and scheduled-task events on virtual time, checked against the SPEC's invariants after every input
// the core receives (see CoreInvariants.swift for the list, ModelShell.swift for how the processes are played).
//
// Seeds. Every sequence comes from one 64-bit seed. A normal run uses a fixed list of seeds (the batches below), so
// it is the same on every machine and every run. For a longer or different search set:
//     OFFSTAGE_MODEL_SEED=<n>    the first seed (decimal); the sequences use n, n+1, n+2, …
//     OFFSTAGE_MODEL_RUNS=<n>    how many sequences each model-based test runs (instead of the fixed list)
// e.g. `OFFSTAGE_MODEL_SEED=$RANDOM$RANDOM OFFSTAGE_MODEL_RUNS=50000 swift test --filter ModelBasedTests`.
//
// A failure is shrunk to a minimal sequence (Shrinking.swift) and reported with its seed, the command that broke
// which invariant, the minimal sequence as Swift source to paste into `ModelShell.replay`, and its trace. Replaying
// within one process is exact; across processes, set SWIFT_DETERMINISTIC_HASHING=1 if the order in which the core
// settles apps (kept in a Set) matters to the failure.

import Foundation
import OffstageCore
import Testing

/// A run of consecutive seeds.
struct SeedBatch: Sendable, CustomTestStringConvertible {
    /// The first seed.
    var first: UInt64
    /// How many sequences.
    var count: Int

    var testDescription: String { "seeds \(first)..<\(first + UInt64(count))" }

    /// The fixed batches of a normal run, or the one batch the environment asks for.
    static func batches(first: UInt64, batches: Int, perBatch: Int) -> [SeedBatch] {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["OFFSTAGE_MODEL_SEED"].flatMap { UInt64($0) }
        let runs = environment["OFFSTAGE_MODEL_RUNS"].flatMap { Int($0) }
        if seed != nil || runs != nil {
            return [SeedBatch(first: seed ?? first, count: max(1, runs ?? batches * perBatch))]
        }
        return (0..<batches).map { SeedBatch(first: first + UInt64($0 * perBatch), count: perBatch) }
    }
}

/// A failing sequence, shrunk.
struct ModelFailure {
    /// The seed that generated it.
    var seed: UInt64
    /// How many commands the generated sequence had up to the failure.
    var originalLength: Int
    /// The shrunk sequence.
    var minimal: [ModelCommand]
    /// The violation the shrunk sequence ends with.
    var violation: Violation
    /// Replays the shrinker made.
    var attempts: Int
    /// The trace of the shrunk sequence.
    var trace: [String]

    /// The report: what broke, how to reproduce it, the sequence as Swift source, and what happened.
    func report(test: String) -> String {
        var lines = [
            "\(violation)",
            "seed \(seed): shrunk from \(originalLength) to \(minimal.count) commands in \(attempts) replays",
            "reproduce: OFFSTAGE_MODEL_SEED=\(seed) OFFSTAGE_MODEL_RUNS=1 swift test --filter \(test)",
            "minimal sequence:",
            "    ModelShell.replay([",
        ]
        lines += minimal.map { "        \($0)," }
        lines.append("    ], enabled: [.\(violation.invariant.rawValue)])")
        lines.append("trace:")
        lines += trace.map { "    " + $0 }
        return lines.joined(separator: "\n")
    }
}

/// What one batch of sequences did.
extension ExplorationResult {
    /// Expects the batch to have gone through each of `keys` at least five times: a session that never reaches the
    /// states the invariants are about checks nothing.
    func expectReached(_ keys: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        for key in keys {
            #expect(
                coverage[key, default: 0] >= 5, "\(key) happened \(coverage[key, default: 0]) times",
                sourceLocation: sourceLocation)
        }
    }
}

struct ExplorationResult {
    /// Sequences run.
    var sequences = 0
    /// Commands applied.
    var commands = 0
    /// Inputs the core received (each followed by a check of every invariant).
    var inputs = 0
    /// How often each kind of action and event happened, over all sequences.
    var coverage: [String: Int] = [:]
    /// Failures found, at most one per invariant, shrunk.
    var failures: [ModelFailure] = []

    /// One line for the test log: how much was checked.
    var summary: String {
        let events = coverage.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        return "\(sequences) sequences, \(commands) commands, \(inputs) inputs checked; \(events)"
    }
}

enum ModelExplorer {
    /// Runs the sequences of `batch`, generated with `profile`, checking `enabled`. A sequence stops at its first
    /// violation, which is shrunk; after that the invariant is no longer checked in this batch, so the rest of the
    /// batch goes on testing the others.
    /// Explores a batch with every invariant on, prints what it reached, and records each failure with its minimal
    /// sequence and the command that reproduces it.
    static func check(_ batch: SeedBatch, profile: GeneratorProfile, test name: String) -> ExplorationResult {
        let result = explore(batch, profile: profile, enabled: Set(Invariant.allCases))
        print("model \(name.split(separator: "/").last ?? "") \(batch.testDescription): \(result.summary)")
        for failure in result.failures {
            Issue.record(Comment(rawValue: failure.report(test: name)))
        }
        return result
    }

    static func explore(_ batch: SeedBatch, profile: GeneratorProfile, enabled: Set<Invariant>) -> ExplorationResult {
        var result = ExplorationResult()
        var checking = enabled
        for offset in 0..<batch.count {
            let seed = batch.first + UInt64(offset)
            var generator = CommandGenerator(seed: seed, profile: profile)
            var shell = ModelShell(enabled: checking)
            var commands: [ModelCommand] = []
            for index in 0..<generator.length() {
                let command = generator.next(shell, index: index)
                commands.append(command)
                shell.apply(command)
                if shell.violation != nil { break }
            }
            result.sequences += 1
            result.commands += commands.count
            result.inputs += shell.inputs
            result.coverage.merge(shell.coverage, uniquingKeysWith: +)
            guard let violation = shell.violation else { continue }
            result.failures.append(shrink(commands, violation, seed: seed))
            checking.remove(violation.invariant)
            if checking.isEmpty { break }
        }
        return result
    }

    /// Shrinks a failing sequence, keeping only candidates that break the same invariant.
    static func shrink(_ commands: [ModelCommand], _ violation: Violation, seed: UInt64) -> ModelFailure {
        let only: Set<Invariant> = [violation.invariant]
        let shrunk = Shrinker.shrink(commands) { candidate in
            ModelShell.replay(candidate, enabled: only).violation?.step
        }
        let replayed = ModelShell.replay(shrunk.commands, enabled: only, tracing: true)
        return ModelFailure(
            seed: seed, originalLength: commands.count, minimal: shrunk.commands,
            violation: replayed.violation ?? violation, attempts: shrunk.attempts, trace: replayed.trace ?? [])
    }
}

@Suite("Model-based tests of the core (SPEC LC, BT, SCH)")
struct ModelBasedTests {
    @Test(
        "LC-1, LC-2, LC-3, LC-4, LC-5, LC-6, LC-7, LC-9, BT-2, BT-4, MAN-3, MODE-1, MODE-2: random sessions keep every lifecycle invariant",
        arguments: SeedBatch.batches(first: 1_000_000, batches: 4, perBatch: 600))
    func lifecycle(batch: SeedBatch) {
        let result = ModelExplorer.check(batch, profile: .lifecycle, test: "ModelBasedTests/lifecycle")
        // A session that never reaches the states the invariants are about checks nothing: a batch must have gone
        // through each of them many times (not asked of the few sequences of a reproduction).
        guard batch.count >= 200 else { return }
        let reached = [
            "launch.user", "launch.refresh", "launch.processing", "launch.fetch", "deliver.didEnterBackground",
            "deliver.willTerminate", "deliver.backgroundTasksExpiring", "deliver.runTask", "deliver.performFetch",
            "deliver.taskExpiring", "freeze", "thaw", "terminate", "kill", "forget", "log.watchdog", "log.taskRun",
            "deliver.keepAlive", "deliver.systemEvent", "launch.voip", "watchSocket.armed", "closeSocket",
        ]
        result.expectReached(reached)
        #expect(result.sequences == batch.count || !result.failures.isEmpty)
        #expect(result.inputs > result.sequences * 20, "too few inputs per sequence to mean anything")
    }

    @Test(
        "MODE-2, MODE-4, MODE-6, LC-6, LC-9: random sessions of apps in long-running modes keep every invariant",
        arguments: SeedBatch.batches(first: 9_000_000, batches: 2, perBatch: 400))
    func modes(batch: SeedBatch) {
        let result = ModelExplorer.check(batch, profile: .modes, test: "ModelBasedTests/modes")
        guard batch.count >= 200 else { return }
        // Accessories registered, woken and launched for, their sessions watched and closed, and ended with the app.
        let reached = [
            "watchAccessory", "unwatchAccessory", "deliver.accessory", "launch.accessory", "watchSocket.armed",
            "watchSocket.disarmed", "closeSocket", "thaw", "freeze", "launch.voip", "deliver.keepAlive",
        ]
        result.expectReached(reached)
        #expect(result.inputs > result.sequences * 20)
    }

    @Test(
        "NT-1, NT-2, SET-2, LC-6, LC-7: random sessions with notifications fire each once; store and timer agree",
        arguments: SeedBatch.batches(first: 11_000_000, batches: 2, perBatch: 250))
    func notifications(batch: SeedBatch) {
        let result = ModelExplorer.check(batch, profile: .notifications, test: "ModelBasedTests/notifications")
        guard batch.count >= 200 else { return }
        // Requests added, replaced, removed and fired to the user and to apps in front; taps launching and waking
        // apps; will-present answered; time zones moving triggers; apps forgotten with their notifications.
        let reached = [
            "notification.savePending", "notification.removePending", "notification.fire", "notification.show",
            "notification.removeDelivered", "notification.updateDelivery", "notification.saveBadge",
            "notification.saveCategories", "deliver.notificationWillPresent", "deliver.notificationResponse",
            "launch.notification", "launch.notification-action", "freeze", "thaw",
        ]
        result.expectReached(reached)
        #expect(result.inputs > result.sequences * 20)
    }

    @Test(
        "NT-4, NT-5, LC-6, MAN-3: random sessions with pushes account for every push once, within budget and deadline, across restarts",
        arguments: SeedBatch.batches(first: 13_000_000, batches: 2, perBatch: 250))
    func pushes(batch: SeedBatch) {
        let result = ModelExplorer.check(batch, profile: .pushes, test: "ModelBasedTests/pushes")
        guard batch.count >= 200 else { return }
        // Handlers launched, resumed, completed and cut off; pushes held, coalesced, expired, dropped, shown.
        let reached = [
            "launch.push", "deliver.remoteNotification", "push.handled", "push.hold", "push.coalesced", "push.expired",
            "push.not-delivered", "push.cut-off", "push.shown", "thaw", "freeze", "notification.show",
        ]
        result.expectReached(reached)
        #expect(result.inputs > result.sequences * 20)
    }

    @Test(
        "MEM-1, SET-2, LC-5: random sessions with memory short and relieved warn the running apps and end apps in the order, one per reading, never while memory is not short",
        arguments: SeedBatch.batches(first: 17_000_000, batches: 2, perBatch: 300))
    func memory(batch: SeedBatch) {
        let result = ModelExplorer.check(batch, profile: .memory, test: "ModelBasedTests/memory")
        guard batch.count >= 200 else { return }
        result.expectReached([
            "deliver.memoryWarning", "memory.ended", "memory.relieved", "kill", "freeze", "launch.voip", "deliver.didBecomeActive",
        ])
        #expect(result.inputs > result.sequences * 20)
    }

    @Test(
        "LC-7: an exits-on-suspend app, and every app while multitasking is off, never runs in the background",
        arguments: SeedBatch.batches(first: 7_000_000, batches: 2, perBatch: 400))
    func exitsOnSuspend(batch: SeedBatch) {
        let result = ModelExplorer.check(batch, profile: .multitaskingOff, test: "ModelBasedTests/exitsOnSuspend")
        guard batch.count >= 200 else { return }
        #expect(result.coverage["deliver.willTerminate", default: 0] >= 5)
        #expect(result.coverage["launch.user", default: 0] >= 100)
        #expect(result.inputs > result.sequences * 20)
    }

    @Test("a seed gives the same session every time: the same commands, the same trace")
    func seedsReproduce() {
        func session(_ seed: UInt64) -> ([ModelCommand], [String]) {
            var generator = CommandGenerator(seed: seed, profile: .lifecycle)
            var shell = ModelShell(enabled: Set(Invariant.allCases), tracing: true)
            var commands: [ModelCommand] = []
            for index in 0..<generator.length() {
                commands.append(generator.next(shell, index: index))
                shell.apply(commands[index])
            }
            return (commands, shell.trace ?? [])
        }
        let (first, second) = (session(1_000_123), session(1_000_123))
        #expect(first.0 == second.0 && first.1 == second.1)
        #expect(first.1.count > first.0.count, "the trace records the core's actions too")
        #expect(session(1_000_124).0 != first.0)
        // Replaying the commands alone, without the generator, gives the same trace.
        #expect(ModelShell.replay(first.0, enabled: Set(Invariant.allCases), tracing: true).trace == first.1)
    }

    @Test("LC-2, LC-8, BT-4: expiration handlers in flight when the callback stream closes are sent again, not twice")
    func expirationSentAgainAfterReattach() {
        // Found by a long search (seed 42004017): the re-sent callback keeps its id, so it is one call, not two.
        let shell = ModelShell.replay(
            [
                .install(0, .plain), .open(0), .spawn(0, .normal), .attach(0), .interrupt(.accept), .reply(0),
                .beginTask(0), .reply(0), .fireTimer, .detach(0), .attach(0),
            ], enabled: Set(Invariant.allCases), tracing: true)
        #expect(shell.violation == nil, "\(shell.violation.map(\.description) ?? "")")
        let expiring = shell.trace?.filter { $0.contains("deliver background-tasks-expiring") } ?? []
        #expect(expiring.count == 2 && Set(expiring).count == 1, "the same callback, sent twice")
    }

    @Test("the shrinker keeps only the commands that matter, with their simplest arguments, up to the failure")
    func shrinking() {
        var generator = CommandGenerator(seed: 42, profile: .lifecycle)
        let idle = ModelShell(enabled: [])
        var commands = (0..<150).map { generator.next(idle, index: $0 + ModelWorld.appCount) }
        commands.insert(.install(2, .exitsOnSuspend), at: 20)
        commands.insert(.forceQuit(2), at: 80)
        commands.insert(.runTask(2, .fetch), at: 140)
        // Fails once slot 2 has been installed, then force-quit, then run (any kind, any manifest).
        let failingLength = { (candidate: [ModelCommand]) -> Int? in
            var stage = 0
            for (index, command) in candidate.enumerated() {
                switch (stage, command) {
                case (0, .install(2, _)), (1, .forceQuit(2)): stage += 1
                case (2, .runTask(2, _)): return index + 1
                default: break
                }
            }
            return nil
        }
        let shrunk = Shrinker.shrink(commands, failingLength: failingLength)
        #expect(shrunk.commands.count == 3)
        #expect(shrunk.commands.first == .install(2, .plain), "the simplest manifest")
        #expect(failingLength(shrunk.commands) == 3)
        #expect(shrunk.attempts < 1_000)
    }

    @Test("MAN-3, MODE-2: an app uninstalled while its VoIP relaunch waits leaves no deadline behind for a new install")
    func uninstallDropsVoIPRelaunch() {
        // Found while the accessory commands were added; a longer lifecycle search (OFFSTAGE_MODEL_SEED=3000000,
        // 2400 runs) hits it too. The relaunch time outlived the app and, the id installed again, was in the past.
        let shell = ModelShell.replay(
            [
                .install(0, .modes), .runTask(0, .fetch), .advance(ms: 118_954), .uninstall(0), .advance(ms: 19_157),
                .install(0, .plain),
            ], enabled: Set(Invariant.allCases))
        #expect(shell.violation == nil, "\(shell.violation.map(\.description) ?? "")")
        #expect(shell.core.modes.voip.relaunchAt.isEmpty)
    }

    @Test("MAN-3: installing an app again while its uninstall waits for the process to exit loses no process")
    func installDuringUninstall() {
        let session: [ModelCommand] = [.install(0, .plain), .open(0), .uninstall(0), .install(0, .plain)]
        var shell = ModelShell(enabled: Set(Invariant.allCases), tracing: true)
        for command in session { shell.apply(command) }
        #expect(shell.violation == nil, "\(shell.violation.map(\.description) ?? "")")
        #expect(shell.core.apps[ModelWorld.app(0)]?.uninstalling == true, "the install was refused; the uninstall goes on")
    }

    @Test("LC-6, LC-7, LC-9, NT-2: a notification's background action launches the app only as any launch may")
    func notificationActionLaunchesByTheRules() {
        // Found by the notifications profile: the action launched the app into the background after a force-quit,
        // though it exits on suspend, and right after a failed launch. Now the response waits for its next launch.
        let sessions: [[ModelCommand]] = [
            [
                .install(2, .plain), .open(2), .advance(ms: 1), .notificationCategories(2),
                .notify(2, index: 1, .after(ms: 1054)), .forceQuit(2), .fireTimer, .tapNotification(2, 1, .later),
            ],
            [
                .install(1, .exitsOnSuspend), .open(1), .spawn(1, .normal), .notificationCategories(1),
                .notify(1, index: 2, .daily(hour: 17, minute: 53, zone: nil)), .fireTimer, .fireTimer,
                .tapNotification(1, 2, .later),
            ],
            [
                .install(2, .plain), .open(2), .spawn(2, .normal), .notificationCategories(2),
                .notify(2, index: 4, .every(seconds: 600)), .advance(ms: 1_489_784), .tapNotification(2, 3, .later),
                .spawn(2, .failsToStart), .tapNotification(2, 1, .later),
            ],
        ]
        for session in sessions {
            let shell = ModelShell.replay(session, enabled: Set(Invariant.allCases))
            #expect(shell.violation == nil, "\(shell.violation.map(\.description) ?? "")")
        }
    }
}
