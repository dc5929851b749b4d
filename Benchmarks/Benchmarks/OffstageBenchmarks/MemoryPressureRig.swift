import COffstageSystem
import Foundation
import OffstageBenchKit
import OffstageDaemon

// The memory-pressure benchmark's rig (see MemoryPressureBenchmark): the budget's group, the eventfd and pidfd watches,
// the usage sampler and the bare chain it is compared with.

/// The daemon's instance group in the cgroup v1 memory hierarchy, whose limit is the app memory budget: its usage and
/// thresholds, an eventfd of ours on its critical threshold (``crossings``), and the grower's group made inside it.
final class BudgetGroup {
    let instance: String
    let growerGroup: String
    let limit: Int64
    let warning: Int64
    let critical: Int64
    let crossings: ThresholdWatch
    let memoryMount: String

    init(daemon: DaemonFixture) throws {
        guard let mount = CgroupMounts.current().memory?.mountPoint else {
            throw BenchError("no cgroup v1 memory hierarchy is mounted: the budget's usage thresholds need one")
        }
        memoryMount = mount
        instance = mount + "/offstage." + OffstageDaemonService.instanceName(for: daemon.stateDirectory)
        guard let limit = Self.readNumber(instance + "/memory.limit_in_bytes") else {
            throw BenchError("\(instance) has no memory.limit_in_bytes: the daemon did not make its group")
        }
        self.limit = limit
        guard limit == Int64(MemoryPressureBenchmark.budgetMB) << 20 else {
            throw BenchError("\(instance)/memory.limit_in_bytes is \(limit), not the budget: the daemon did not apply it")
        }
        // As the daemon rounds them (MemoryBudget).
        warning = Int64((Double(limit) * MemoryPressureBenchmark.warningPercent / 100).rounded())
        critical = Int64((Double(limit) * MemoryPressureBenchmark.criticalPercent / 100).rounded())
        growerGroup = instance + "/bench-grower"
        guard mkdir(growerGroup, 0o755) == 0 || errno == EEXIST else { throw SystemCallError("mkdir \(growerGroup)") }
        do {
            crossings = try ThresholdWatch(group: instance, threshold: critical)
        } catch {
            rmdir(growerGroup)
            throw error
        }
    }

    /// The budget's usage now (what the daemon reads).
    func usage() -> Int64 { Self.readNumber(instance + "/memory.usage_in_bytes") ?? -1 }

    /// The grower's group's usage now.
    func growerUsage() -> Int64 { Self.readNumber(growerGroup + "/memory.usage_in_bytes") ?? 0 }

    /// How many times the budget's limit was hit (the kernel reclaimed or killed at the limit).
    func failCount() -> Int64 { Self.readNumber(instance + "/memory.failcnt") ?? 0 }

    /// The usage of the memory group `pid` is in.
    func groupUsage(of pid: pid_t) -> Int64? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/cgroup", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            if parts.count == 3, parts[1].split(separator: ",").contains("memory") {
                return Self.readNumber(memoryMount + parts[2] + "/memory.usage_in_bytes")
            }
        }
        return nil
    }

    /// Closes the eventfd (which ends its registration) and removes the grower's group (its processes are gone).
    func tearDown() {
        crossings.close()
        for _ in 0..<200 {
            if rmdir(growerGroup) == 0 || errno == ENOENT { return }
            MonotonicClock.sleep(milliseconds: 10)
        }
        print("warning: could not remove \(growerGroup): \(String(cString: strerror(errno)))")
    }

    static func readNumber(_ path: String) -> Int64? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return Int64(String(decoding: buffer[0..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}

/// An eventfd registered on a cgroup v1 memory group's `cgroup.event_control` at one usage threshold: the kernel
/// signals it when the usage crosses the threshold, either way. A thread of ours sleeps in poll on it and timestamps
/// each signal (CLOCK_MONOTONIC) as it wakes.
final class ThresholdWatch: @unchecked Sendable {
    private let eventfd: Int32
    private let stopper: Int32
    private let lock = NSLock()
    private var stamps: [UInt64] = []
    private let finished = DispatchSemaphore(value: 0)
    private var closed = false

    init(group: String, threshold: Int64) throws {
        eventfd = offstage_eventfd()
        guard eventfd >= 0 else { throw SystemCallError("eventfd") }
        stopper = offstage_eventfd()
        let usage = open(group + "/memory.usage_in_bytes", O_RDONLY | O_CLOEXEC)
        defer { if usage >= 0 { Glibc.close(usage) } }
        do {
            guard stopper >= 0, usage >= 0 else { throw SystemCallError("open \(group)/memory.usage_in_bytes") }
            try RawFreezer.write(group + "/cgroup.event_control", "\(eventfd) \(usage) \(threshold)")
        } catch {
            Glibc.close(eventfd)
            if stopper >= 0 { Glibc.close(stopper) }
            throw error
        }
        Thread.detachNewThread { [self] in run() }
    }

    private func run() {
        var entries = [pollfd(fd: eventfd, events: Int16(POLLIN), revents: 0), pollfd(fd: stopper, events: Int16(POLLIN), revents: 0)]
        while true {
            let ready = poll(&entries, 2, -1)
            let now = MonotonicClock.now()
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            if entries[1].revents != 0 { break }
            if entries[0].revents != 0 {
                var counter: UInt64 = 0
                _ = read(eventfd, &counter, 8)
                lock.withLock { stamps.append(now) }
            }
        }
        finished.signal()
    }

    /// The first signal at or after `instant`.
    func first(after instant: UInt64) -> UInt64? {
        lock.withLock { stamps.first { $0 >= instant } }
    }

    func close() {
        guard !closed else { return }
        closed = true
        var one: UInt64 = 1
        _ = write(stopper, &one, 8)
        finished.wait()
        Glibc.close(eventfd)
        Glibc.close(stopper)
    }
}

/// pidfds of processes that are not our children: readable once each is gone.
final class PidWatch {
    private var entries: [pollfd]
    private var gone: [Int: UInt64] = [:]

    init(_ pids: [pid_t]) throws {
        entries = []
        for pid in pids {
            let fd = offstage_pidfd_open(pid)
            guard fd >= 0 else {
                close()
                throw SystemCallError("pidfd_open \(pid)")
            }
            entries.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0))
        }
    }

    /// Waits for the first process to go; its index and when its pidfd became readable.
    func first(timeoutMilliseconds: Int32) -> (Int, UInt64)? {
        let deadline = MonotonicClock.now() + UInt64(timeoutMilliseconds) * 1_000_000
        while MonotonicClock.now() < deadline {
            let ready = poll(&entries, nfds_t(entries.count), timeoutMilliseconds)
            let now = MonotonicClock.now()
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0, let index = entries.indices.first(where: { entries[$0].revents != 0 }) else { return nil }
            gone[index] = now
            return (index, now)
        }
        return nil
    }

    /// Whether process `index` is gone now.
    func exited(_ index: Int) -> Bool {
        var entry = entries[index]
        return poll(&entry, 1, 0) > 0
    }

    func close() {
        for entry in entries where entry.fd >= 0 { Glibc.close(entry.fd) }
        entries = []
    }
}

/// The episode's sampler: a thread of ours that every 2 ms reads the budget's usage and the grower's (kept only when
/// the grower's reads before and after agree), and sleeps in poll on the apps' pidfds in between, so each exit is
/// timestamped as it happens.
final class UsageSampler: @unchecked Sendable {
    struct Sample {
        var at: UInt64
        var budget: Int64
        var grower: Int64
    }

    private let budget: BudgetGroup
    private var entries: [pollfd]
    private let lock = NSLock()
    private var stopping = false
    private var samples: [Sample] = []
    private var exits: [Int: UInt64] = [:]
    private let finished = DispatchSemaphore(value: 0)

    init(budget: BudgetGroup, pids: [pid_t]) throws {
        self.budget = budget
        entries = []
        for pid in pids {
            let fd = offstage_pidfd_open(pid)
            guard fd >= 0 else {
                for entry in entries { close(entry.fd) }
                throw SystemCallError("pidfd_open \(pid)")
            }
            entries.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0))
        }
        Thread.detachNewThread { [self] in run() }
    }

    private func run() {
        var local: [Sample] = []
        local.reserveCapacity(8_192)
        var localExits: [Int: UInt64] = [:]
        while !lock.withLock({ stopping }) {
            let ready = poll(&entries, nfds_t(entries.count), 2)
            let now = MonotonicClock.now()
            if ready > 0 {
                for index in entries.indices where entries[index].revents != 0 && entries[index].fd >= 0 {
                    localExits[index] = now
                    close(entries[index].fd)
                    entries[index].fd = -1
                }
            }
            let grower = budget.growerUsage()
            let usage = budget.usage()
            if budget.growerUsage() == grower { local.append(Sample(at: MonotonicClock.now(), budget: usage, grower: grower)) }
        }
        for entry in entries where entry.fd >= 0 { close(entry.fd) }
        lock.withLock {
            samples = local
            exits = localExits
        }
        finished.signal()
    }

    /// Stops the thread; the samples and each ended process's exit instant, by index.
    func stop() -> ([Sample], [Int: UInt64]) {
        lock.withLock { stopping = true }
        finished.wait()
        return lock.withLock { (samples, exits) }
    }
}

/// The bare chain, the baselines of the latency rounds: a thread of ours sleeps in poll on an eventfd; the benchmark
/// writes it (t0); the thread wakes (the bare wake-up), reads what the daemon reads per wake-up (the budget's usage and
/// `/proc/pressure/memory`: the reading alone), sends SIGKILL to a frozen process of our own holding as much memory
/// as an app (the grower helper with ``MemoryPressureBenchmark/heldMiB`` MiB, frozen by a cgroup v2 group of ours),
/// and waits on its pidfd until it is gone.
final class BareChain: @unchecked Sendable {
    struct Sample {
        var wake: UInt64
        var reading: UInt64
        var chain: UInt64
    }

    private let budget: BudgetGroup
    private let daemon: DaemonFixture
    private let kick: Int32
    private let stopper: Int32
    private let lock = NSLock()
    private var target: (pid: pid_t, pidfd: Int32)?
    private var started: UInt64 = 0
    private var result: Sample?
    private var failure: String?
    private let done = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    init(budget: BudgetGroup, daemon: DaemonFixture) throws {
        self.budget = budget
        self.daemon = daemon
        kick = offstage_eventfd()
        stopper = offstage_eventfd()
        guard kick >= 0, stopper >= 0 else { throw SystemCallError("eventfd") }
        Thread.detachNewThread { [self] in run() }
    }

    /// One sample, with a fresh frozen process.
    func sample() throws -> Sample {
        let held = MemoryPressureBenchmark.heldMiB
        let helper = try daemon.spawnHelper(["grow", "-", "\(held)", "\(held)", "0"], output: "bare-held.log")
        let raw = try RawFreezer(pid: helper.pid)
        defer { raw.tearDown { helper.stop(grace: 2) } }
        let deadline = MonotonicClock.now() + 10_000_000_000
        while (ProcReader.statusKilobytes(helper.pid, "VmRSS") ?? 0) < held * 1024 {
            guard MonotonicClock.now() < deadline else { throw BenchError("the bare chain's helper did not map \(held) MiB") }
            MonotonicClock.sleep(milliseconds: 2)
        }
        try raw.freeze()
        _ = try raw.observer.wait(frozen: true, timeoutSeconds: 5)
        let pidfd = offstage_pidfd_open(helper.pid)
        guard pidfd >= 0 else { throw SystemCallError("pidfd_open \(helper.pid)") }
        defer { close(pidfd) }
        lock.withLock {
            target = (helper.pid, pidfd)
            result = nil
            failure = nil
        }
        MonotonicClock.sleep(milliseconds: 20)
        var one: UInt64 = 1
        let start = MonotonicClock.now()
        lock.withLock { started = start }
        _ = write(kick, &one, 8)
        guard done.wait(timeout: .now() + 10) == .success else { throw BenchError("the bare chain did not finish in 10 s") }
        return try lock.withLock {
            if let failure { throw BenchError(failure) }
            guard let result else { throw BenchError("the bare chain gave no result") }
            return result
        }
    }

    private func run() {
        var entries = [pollfd(fd: kick, events: Int16(POLLIN), revents: 0), pollfd(fd: stopper, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 4096)
        let usagePath = budget.instance + "/memory.usage_in_bytes"
        while true {
            let ready = poll(&entries, 2, -1)
            let woken = MonotonicClock.now()
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            if entries[1].revents != 0 { break }
            guard entries[0].revents != 0 else { continue }
            var counter: UInt64 = 0
            _ = read(kick, &counter, 8)
            // What the daemon reads per wake-up: each file opened, read and closed.
            var readBytes = 0
            for path in [usagePath, "/proc/pressure/memory"] {
                let fd = open(path, O_RDONLY | O_CLOEXEC)
                if fd >= 0 {
                    readBytes += buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    close(fd)
                }
            }
            let readDone = MonotonicClock.now()
            let (target, start) = lock.withLock { (self.target, started) }
            guard let target, readBytes > 0 else {
                lock.withLock { failure = "the bare chain had no process, or read nothing" }
                done.signal()
                continue
            }
            kill(target.pid, SIGKILL)
            var entry = pollfd(fd: target.pidfd, events: Int16(POLLIN), revents: 0)
            while poll(&entry, 1, 10_000) < 0 && errno == EINTR {}
            let gone = MonotonicClock.now()
            lock.withLock {
                result = Sample(wake: woken - start, reading: readDone - woken, chain: gone - start)
            }
            done.signal()
        }
        finished.signal()
    }

    func tearDown() {
        var one: UInt64 = 1
        _ = write(stopper, &one, 8)
        finished.wait()
        close(kick)
        close(stopper)
    }
}
