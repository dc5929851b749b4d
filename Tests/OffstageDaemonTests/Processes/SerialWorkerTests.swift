import Foundation
import Synchronization
import Testing

@testable import OffstageDaemon

/// The daemon's serial worker threads (§11 idle: no dispatch queue, so no workqueue monitor waking the daemon every
/// second): jobs in order, jobs for later after their delay, and a stop that runs what was handed over.
@Suite("A serial worker on a thread of its own")
struct SerialWorkerTests {
    @Test("Jobs run in the order handed over; sync waits for its own and every one before it")
    func jobsInOrder() throws {
        let worker = try SerialWorker(name: "test-order", nice: 0)
        defer { worker.stop() }
        let seen = Mutex<[Int]>([])
        for index in 0..<100 { worker.async { seen.withLock { $0.append(index) } } }
        #expect(worker.sync { seen.withLock { $0.count } } == 100)
        #expect(seen.withLock { $0 } == Array(0..<100))
    }

    @Test("A job for later runs once its delay has passed, not before, and after the jobs due before it; a stop drops one still waiting")
    func jobsForLater() throws {
        let worker = try SerialWorker(name: "test-later", nice: 0)
        let clock = ContinuousClock()
        let start = clock.now
        let ranAt = Mutex<[String: ContinuousClock.Instant]>([:])
        worker.async(after: .milliseconds(150)) { ranAt.withLock { $0["late"] = clock.now } }
        worker.async(after: .milliseconds(50)) { ranAt.withLock { $0["early"] = clock.now } }
        worker.async { ranAt.withLock { $0["now"] = clock.now } }
        #expect(ProcessFixtures.eventually { ranAt.withLock { $0.count } == 3 })
        let times = ranAt.withLock { $0 }
        #expect(times["now"]! < times["early"]! && times["early"]! < times["late"]!)
        #expect(times["early"]! - start >= .milliseconds(50) && times["late"]! - start >= .milliseconds(150))
        // Handed over and stopped before it is due: it never runs.
        let dropped = Mutex(false)
        worker.async(after: .seconds(30)) { dropped.withLock { $0 = true } }
        worker.stop()
        #expect(!dropped.withLock { $0 })
        #expect(!worker.async(after: .zero) {}, "a stopped worker takes nothing")
    }
}
