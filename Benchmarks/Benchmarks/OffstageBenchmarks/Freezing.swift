import Foundation
import OffstageBenchKit

/// When a freeze or thaw was first seen.
struct Observation {
    /// CLOCK_MONOTONIC, ns.
    var at: UInt64
    /// True when a kernel notification (POLLPRI on cgroup.events) woke the observer; false when the state was
    /// found by re-reading (after the 1 ms safety timeout, or by polling where there is no notification).
    var notified: Bool
    /// True when the state was already reached at the first look (the figure is then an upper bound).
    var alreadyThere: Bool
}

/// Watches whether a process is frozen, in whatever way the daemon's freezer freezes it.
protocol FreezeObserver: AnyObject {
    /// Reads the current state, so that the next wait is woken only by later changes.
    func sync()
    /// Waits until the process is frozen (or thawed) and says when that was first seen.
    func wait(frozen: Bool, timeoutSeconds: Double) throws -> Observation
    /// How the observer learns of changes, for the report.
    var method: String { get }
}

/// cgroup v2: `cgroup.events` says `frozen 1` once every task of the group is frozen, and a change of that file
/// wakes `poll(POLLPRI)` at once (kernfs). The kernel sends at most one such notification per cgroup file every
/// 10 ms (CGROUP_FILE_NOTIFY_MIN_INTV; 3 jiffies, so up to 16 ms at HZ=250), so the benchmarks leave 30 ms
/// between two changes of the same cgroup; a poll timeout of 1 ms re-reads the file in case one is missed, and
/// such late sightings are counted.
final class CgroupEventsObserver: FreezeObserver {
    let fd: Int32
    let path: String
    var method: String { "poll(POLLPRI) on \(path)" }
    private var buffer = [UInt8](repeating: 0, count: 256)

    init(directory: String) throws {
        path = directory + "/cgroup.events"
        fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemCallError("open \(path)") }
    }

    deinit { close(fd) }

    /// Whether the file says `frozen 1` now.
    func frozenNow() -> Bool {
        lseek(fd, 0, SEEK_SET)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return false }
        let needle = Array("frozen 1".utf8)
        guard count >= needle.count else { return false }
        for start in 0...(count - needle.count) where buffer[start] == needle[0] {
            if Array(buffer[start..<(start + needle.count)]) == needle { return true }
        }
        return false
    }

    func sync() { _ = frozenNow() }

    func wait(frozen want: Bool, timeoutSeconds: Double) throws -> Observation {
        if frozenNow() == want { return Observation(at: MonotonicClock.now(), notified: false, alreadyThere: true) }
        let deadline = MonotonicClock.now() + UInt64(timeoutSeconds * 1e9)
        while true {
            var descriptor = pollfd(fd: fd, events: Int16(POLLPRI), revents: 0)
            let ready = poll(&descriptor, 1, 1)
            let woken = MonotonicClock.now()
            if frozenNow() == want {
                let notified = ready > 0 && descriptor.revents & Int16(POLLPRI) != 0
                return Observation(at: notified ? woken : MonotonicClock.now(), notified: notified, alreadyThere: false)
            }
            if MonotonicClock.now() > deadline {
                throw BenchError("\(path) did not say frozen \(want ? 1 : 0) within \(timeoutSeconds) s")
            }
        }
    }
}

/// The cgroup v1 freezer and SIGSTOP have no change notification: the state is re-read every 20 µs, which is the
/// resolution of figures taken this way.
final class PollingObserver: FreezeObserver {
    let method: String
    let isFrozen: () -> Bool

    init(method: String, isFrozen: @escaping () -> Bool) {
        self.method = method
        self.isFrozen = isFrozen
    }

    func sync() {}

    func wait(frozen want: Bool, timeoutSeconds: Double) throws -> Observation {
        if isFrozen() == want { return Observation(at: MonotonicClock.now(), notified: false, alreadyThere: true) }
        let deadline = MonotonicClock.now() + UInt64(timeoutSeconds * 1e9)
        while true {
            MonotonicClock.sleep(nanoseconds: 20_000)
            if isFrozen() == want { return Observation(at: MonotonicClock.now(), notified: false, alreadyThere: false) }
            if MonotonicClock.now() > deadline { throw BenchError("\(method): no change within \(timeoutSeconds) s") }
        }
    }
}

enum FreezeObservers {
    /// An observer of the app process `pid`, which the daemon freezes with `freezer` (as `offstage status` says).
    static func forApp(pid: pid_t, freezer: String) throws -> any FreezeObserver {
        let mounts = ProcReader.cgroupMounts()
        switch freezer {
        case "cgroupV2":
            guard let mount = mounts.unified, let group = ProcReader.unifiedCgroup(pid) else {
                throw BenchError("cannot find the cgroup2 group of pid \(pid)")
            }
            return try CgroupEventsObserver(directory: mount + group)
        case "cgroupV1":
            guard let mount = mounts.freezer, let group = ProcReader.freezerCgroup(pid) else {
                throw BenchError("cannot find the freezer cgroup of pid \(pid)")
            }
            let path = mount + group + "/freezer.state"
            return PollingObserver(method: "re-reading \(path) every 20 µs") {
                (try? String(contentsOfFile: path, encoding: .utf8))?.hasPrefix("FROZEN") == true
            }
        default:
            return PollingObserver(method: "re-reading /proc/\(pid)/stat every 20 µs") { ProcReader.state(pid) == "T" }
        }
    }
}

/// The baselines' process: the echo helper, blocked in recv like an idle app, in a group of its own that
/// ``RawFreezer`` freezes and thaws, with a connection to it.
final class EchoBaseline {
    let helper: ChildProcess
    let connection: Int32
    let raw: RawFreezer

    init(in daemon: DaemonFixture) throws {
        let path = daemon.root + "/raw.sock"
        helper = try daemon.spawnHelper(["echo", path], output: "raw.log")
        try SDKCallBenchmark.waitForSocket(path)
        connection = try UnixSocket.connect(path: path)
        raw = try RawFreezer(pid: helper.pid)
    }

    /// Closes the connection, thaws and ends the helper, removes its group.
    func tearDown() {
        close(connection)
        raw.tearDown { helper.stop(grace: 2) }
    }
}

/// The raw-freeze baseline: freezes and thaws one process directly, as the daemon's freezer would but with nothing
/// else around it. It uses a cgroup v2 group of its own, `offstage-bench-<pid>`, when it can create one, and SIGSTOP
/// otherwise.
final class RawFreezer {
    let pid: pid_t
    let directory: String?
    let observer: any FreezeObserver
    var kind: String { directory == nil ? "SIGSTOP/SIGCONT" : "cgroup v2 (\(directory!))" }

    init(pid: pid_t) throws {
        self.pid = pid
        if let mount = ProcReader.cgroupMounts().unified {
            Self.removeStale(in: mount)
            let directory = mount + "/offstage-bench-\(getpid())"
            if mkdir(directory, 0o755) == 0 || errno == EEXIST,
                (try? Self.write(directory + "/cgroup.procs", "\(pid)")) != nil
            {
                self.directory = directory
                observer = try CgroupEventsObserver(directory: directory)
                return
            }
            rmdir(directory)
        }
        directory = nil
        observer = PollingObserver(method: "re-reading /proc/\(pid)/stat every 20 µs") { ProcReader.state(pid) == "T" }
    }

    /// Asks for the freeze (one write to cgroup.freeze, as the daemon does; or SIGSTOP).
    func freeze() throws {
        if let directory { try Self.write(directory + "/cgroup.freeze", "1") } else { kill(pid, SIGSTOP) }
    }

    /// Thaws (one write to cgroup.freeze; or SIGCONT).
    func thaw() throws {
        if let directory { try Self.write(directory + "/cgroup.freeze", "0") } else { kill(pid, SIGCONT) }
    }

    /// Thaws, ends the process with `stop` and removes the group.
    func tearDown(stop: () -> Void) {
        try? thaw()
        stop()
        guard let directory else { return }
        // The group can be removed once the kernel has let go of the dead process, which may take a moment.
        for _ in 0..<200 {
            if rmdir(directory) == 0 || errno == ENOENT { return }
            MonotonicClock.sleep(milliseconds: 10)
        }
        print("warning: could not remove \(directory): \(String(cString: strerror(errno)))")
    }

    /// Removes groups left by an interrupted earlier run (its benchmark process is gone): thaws them, ends the
    /// helper processes still inside (checked by name, so nothing else is ever signalled) and removes them.
    static func removeStale(in mount: String) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: mount)) ?? []
        for name in names where name.hasPrefix("offstage-bench-") {
            guard let owner = Int32(name.dropFirst("offstage-bench-".count)), kill(owner, 0) != 0 else { continue }
            let directory = mount + "/" + name
            try? write(directory + "/cgroup.freeze", "0")
            let members = (try? String(contentsOfFile: directory + "/cgroup.procs", encoding: .utf8)) ?? ""
            for member in members.split(separator: "\n").compactMap({ Int32($0) }) where ProcReader.isBenchProcess(member) {
                kill(member, SIGKILL)
            }
            for _ in 0..<100 where rmdir(directory) != 0 && errno == EBUSY { MonotonicClock.sleep(milliseconds: 10) }
        }
    }

    /// One write(2) with the whole text, as cgroup control files require.
    static func write(_ path: String, _ text: String) throws {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemCallError("open \(path)") }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw SystemCallError("write \(path)") }
    }
}
