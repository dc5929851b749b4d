import OffstageCore
import OffstageSimulator
import Testing

/// Random walks through the life of background transfers (SPEC TR-1..6): apps create downloads, attempts fail in
/// every way, conditions change, the user opens, leaves, force-quits, processes die and the daemon restarts. After
/// every step the queue must agree with its journal, stay within its limits and run nothing that is held; at the end,
/// with good conditions, every task created has reached its app exactly once.
@Suite("Background transfers: random walks (SPEC TR-1..6)")
struct TransferRandomWalkTests {
    static let apps: [AppID] = [appA, appB]
    static let urls = (0..<5).map { "https://files.example.com/\($0).bin" }

    struct Walk {
        var sim: Simulation
        var rng: SeededGenerator
        var created: [UInt64: AppID] = [:]
        var finishedSeen: Set<UInt64> = []
        var problems: [String] = []
        var steps: [String] = []

        init(seed: UInt64) {
            var configuration = CoreConfiguration()
            configuration.transfers.maximumRunning = 3
            configuration.transfers.maximumRunningPerApp = 2
            sim = makeSimulation(configuration: configuration)
            rng = SeededGenerator(seed: seed)
            for (index, url) in TransferRandomWalkTests.urls.enumerated() {
                sim.transferSizes[url] = index == 4 ? -1 : Int64(index + 1) * 30_000_000
            }
        }

        mutating func pick<T>(_ items: [T]) -> T { items[Int(rng.next() % UInt64(items.count))] }

        mutating func step() {
            let app = pick(TransferRandomWalkTests.apps)
            switch rng.next() % 14 {
            case 0, 1:
                steps.append("open \(app)")
                try? sim.open(app)
            case 2:
                steps.append("home")
                sim.home()
            case 3, 4, 5:
                guard sim.status(of: app)?.pid != nil else { return }
                let session = pick(["s1", "s2"])
                let configuration = TransferSessionConfiguration(
                    discretionary: rng.next() % 4 == 0, sendsLaunchEvents: rng.next() % 5 != 0, allowsMeteredNetwork: rng.next() % 3 != 0)
                sim.openTransferSession(app, identifier: session, configuration: configuration)
                let url = pick(TransferRandomWalkTests.urls)
                let created = sim.createTransfer(app, session: session, download(url, discretionary: rng.next() % 5 == 0))
                steps.append("create \(url) in \(app)/\(session) → \(created.map(String.init) ?? "refused")")
                if let created { self.created[created] = app }
            case 6, 7:
                let running = sim.core.transfers.tasks.values.filter { $0.state == .running }.sorted { $0.id < $1.id }
                guard !running.isEmpty else { return }
                let task = pick(running)
                let result: TransferAttemptResult = pick([
                    .transient("connection reset", retryAfter: nil), .transient("503", retryAfter: 30), .permanent(status: 410, "gone"),
                    .file("disk full"), .cancelled, .completed(status: 200),
                ])
                steps.append("attempt of \(task.id) ends \(result)")
                sim.endAttempt(task.id, result, bytesDone: task.bytesDone + Int64(rng.next() % 5_000_000))
            case 8:
                let network = pick([NetworkKind.none, .metered, .unmetered, .unmetered])
                let charging = rng.next() % 2 == 0
                steps.append("conditions \(network) charging \(charging)")
                try? sim.setConditions(ConditionOverrides(charging: charging, network: network))
            case 9:
                steps.append("force-quit \(app)")
                try? sim.forceQuit(app)
            case 10:
                guard let pid = sim.status(of: app)?.pid else { return }
                steps.append("\(app) crashes")
                sim.input { core, now in core.processExited(app, pid: pid, status: .signaled(9), at: now) }
            case 11:
                steps.append("daemon restarts")
                sim.reboot()
            default:
                let seconds = Double(rng.next() % 120_000) / 1000
                steps.append("run \(seconds) s")
                sim.run(for: .seconds(double: seconds))
            }
        }

        /// What must hold after every step.
        mutating func check() {
            let core = sim.core
            let tasks = core.transfers.tasks
            func fail(_ message: String) { problems.append("after [\(steps.suffix(3).joined(separator: "; "))]: \(message)") }
            // TR-6: the journal is the core's state: nothing the core knows is unwritten, nothing forgotten is left.
            if Set(tasks.keys) != Set(sim.transferJournal.keys) {
                fail("journal has \(sim.transferJournal.keys.sorted()), the core \(tasks.keys.sorted())")
            }
            for (id, task) in tasks where sim.transferJournal[id] != task {
                fail("task \(id) is \(task.state) with \(task.bytesDone) bytes in the core, \(String(describing: sim.transferJournal[id]?.state)) in the journal")
            }
            // Limits, and nothing runs that is held.
            let running = tasks.values.filter { $0.state == .running }
            let limits = core.transferLimits
            if running.count > limits.maximumRunning { fail("\(running.count) running, more than \(limits.maximumRunning)") }
            for (app, group) in Dictionary(grouping: running, by: \.app) where group.count > limits.maximumRunningPerApp {
                fail("\(group.count) of \(app) running, more than \(limits.maximumRunningPerApp)")
            }
            for task in running {
                let holds = core.transferHolds(task, at: sim.now)
                if !holds.isEmpty { fail("task \(task.id) runs though held: \(holds)") }
            }
            // Finished stays finished; nothing is lost; events are heard once.
            for (id, task) in tasks {
                if task.state.isFinished { finishedSeen.insert(id) } else if finishedSeen.contains(id) {
                    fail("task \(id) was finished and is \(task.state) again")
                }
            }
            var heard: [UInt64: Int] = [:]
            for ids in sim.transferEventsHeard.values { for id in ids { heard[id, default: 0] += 1 } }
            for (id, count) in heard where count > 1 { fail("the app heard of task \(id) \(count) times") }
            for id in created.keys where tasks[id] == nil && heard[id] == nil { fail("task \(id) is gone without its app hearing of it") }
            // A time-based hold is a deadline: nothing waits for a time that no timer will bring.
            let lifts = tasks.values.filter { $0.state == .waiting }.flatMap { core.transferHolds($0, at: sim.now).compactMap(\.liftsAt) }
            if let first = lifts.min(), core.nextDeadline.map({ $0 > first }) ?? true {
                fail("a hold lifts at \(first.clockTime) and the next deadline is \(core.nextDeadline?.clockTime ?? "none")")
            }
        }

        /// Good conditions, every app opened with its sessions: every task ends and is heard of once.
        mutating func settle() {
            try? sim.setConditions(ConditionOverrides(charging: true, network: .unmetered))
            for app in TransferRandomWalkTests.apps {
                try? sim.open(app)
                sim.run(for: .seconds(1))
                for session in ["s1", "s2"] { sim.openTransferSession(app, identifier: session) }
                // Attempts that the walk left failing end by themselves: whatever still runs completes.
                sim.run(for: .seconds(2_000))
            }
            for app in TransferRandomWalkTests.apps {
                try? sim.open(app)
                sim.run(for: .seconds(1))
                for session in ["s1", "s2"] { sim.openTransferSession(app, identifier: session) }
                sim.run(for: .seconds(1))
            }
            let heard = Set(sim.transferEventsHeard.values.joined())
            for id in created.keys.sorted() where !heard.contains(id) {
                let task = sim.core.transfers.tasks[id]
                problems.append(
                    "task \(id) of \(created[id]!) never reached its app: \(task.map { "\($0.state) \($0.failure?.message ?? "")" } ?? "gone"); app \(String(describing: sim.status(of: created[id]!))); errors \(sim.errors.suffix(2)); last steps \(steps.suffix(4))")
            }
        }
    }

    @Test("TR-1..6: 400 random walks of 200 steps keep the journal, the limits and the holds, and every task reaches its app once", arguments: 0..<8)
    func randomWalks(batch: Int) {
        for seed in UInt64(batch * 50)..<UInt64(batch * 50 + 50) {
            var walk = Walk(seed: seed)
            for _ in 0..<200 {
                walk.step()
                walk.check()
                if !walk.problems.isEmpty { break }
            }
            if walk.problems.isEmpty { walk.settle() }
            #expect(walk.problems.isEmpty, "seed \(seed): \(walk.problems.prefix(3).joined(separator: "\n"))")
        }
    }
}
