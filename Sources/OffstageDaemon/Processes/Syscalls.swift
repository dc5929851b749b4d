import COffstageSystem
import Glibc

#if canImport(OffstageCore)
    // Inside the daemon, exits are reported with the core's `ExitStatus`; a standalone build of this layer uses its own
    // (ExitStatus.swift), which has the same cases.
    import OffstageCore
#endif

/// The only door from the process layer to the kernel: every system call goes through here, so a test can
/// record the calls and force any of them to fail (swift-system's mocking pattern, injected per value).
///
/// Failures are thrown as `ProcessControlError.systemCallFailed` naming the call and its target.
struct Syscalls: Sendable {
    /// The real thing, with nothing recorded.
    static let live = Syscalls(interceptor: nil)

    /// Records and fails calls in tests; nil in production.
    let interceptor: SyscallInterceptor?

    init(interceptor: SyscallInterceptor?) {
        self.interceptor = interceptor
    }

    /// What waitid reported about one process.
    struct Waited: Sendable, Hashable {
        let pid: Int32
        let status: ExitStatus
    }

    // MARK: - Files

    func open(_ path: String, _ flags: Int32, mode: mode_t = 0o644) throws -> Int32 {
        try enter("open", path)
        while true {
            let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return fd }
            if Glibc.errno != EINTR { throw failure("open", path) }
        }
    }

    func close(_ fd: Int32) {
        // Retrying close after EINTR could close a reused descriptor on Linux; the fd is gone either way.
        _ = Glibc.close(fd)
    }

    /// Reads an open file from its start to its end; `path` names it in errors and records.
    func readAll(_ fd: Int32, path: String) throws -> String {
        if let replaced = interceptor?.interceptRead(path) {
            switch replaced {
            case .success(let text): return text
            case .failure(let error):
                throw ProcessControlError.systemCallFailed(call: "read", target: path, errno: error.code)
            }
        }
        if lseek(fd, 0, SEEK_SET) < 0 { throw failure("lseek", path) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                bytes.append(contentsOf: chunk[0..<count])
            } else if count == 0 {
                return String(decoding: bytes, as: UTF8.self)
            } else if Glibc.errno != EINTR {
                throw failure("read", path)
            }
        }
    }

    func readFile(_ path: String) throws -> String {
        let fd = try open(path, O_RDONLY)
        defer { close(fd) }
        return try readAll(fd, path: path)
    }

    /// Writes `text` with one write call, as cgroup control files require.
    func writeFile(_ path: String, _ text: String) throws {
        let fd = try open(path, O_WRONLY)
        defer { close(fd) }
        try write(fd, path: path, text)
    }

    func write(_ fd: Int32, path: String, _ text: String) throws {
        try enter("write", path, text)
        var bytes = Array(text.utf8)
        while true {
            let count = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if count == bytes.count { return }
            if count >= 0 {
                bytes.removeFirst(count)
            } else if Glibc.errno != EINTR {
                throw failure("write", path)
            }
        }
    }

    func mkdir(_ path: String, mode: mode_t = 0o755) throws {
        try enter("mkdir", path)
        if Glibc.mkdir(path, mode) != 0 { throw failure("mkdir", path) }
    }

    func rmdir(_ path: String) throws {
        try enter("rmdir", path)
        if Glibc.rmdir(path) != 0 { throw failure("rmdir", path) }
    }

    func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    func fileExists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    func readlink(_ path: String) throws -> String {
        try enter("readlink", path)
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = buffer.withUnsafeMutableBufferPointer { Glibc.readlink(path, $0.baseAddress!, $0.count - 1) }
        if count < 0 { throw failure("readlink", path) }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The names in a directory, without `.` and `..`.
    func listDirectory(_ path: String) throws -> [String] {
        try enter("opendir", path)
        guard let directory = opendir(path) else { throw failure("opendir", path) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) { tuple in
                tuple.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: tuple.pointee)) {
                    String(cString: $0)
                }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Waits up to `timeout` for a change notification (POLLPRI) on a kernfs file; returns the revents.
    func pollPriority(_ fd: Int32, path: String, timeout: Duration) throws -> Int16 {
        try enter("poll", path, "\(timeout)")
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        let revents = offstage_poll_priority(fd, nanoseconds)
        if revents < 0 { throw failure("poll", path) }
        return Int16(truncatingIfNeeded: revents)
    }

    func sleep(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && Glibc.errno == EINTR {
            request = remaining
        }
    }

    // MARK: - Processes

    func kill(_ pid: Int32, _ signal: Int32) throws {
        // 0, -1 and -getpgrp() would reach the daemon itself or every process on the machine: never wanted here.
        guard pid != 0, pid != -1, pid != Int32.min, pid != -getpgrp(), pid != getpid() else {
            throw ProcessControlError.noSuchProcess(pid: pid)
        }
        try enter("kill", "\(pid)", "\(signal)")
        if Glibc.kill(pid, signal) != 0 { throw failure("kill", pid < 0 ? "process group \(-pid)" : "process \(pid)") }
    }

    func pidfdOpen(_ pid: Int32) throws -> Int32 {
        try enter("pidfd_open", "\(pid)")
        let fd = offstage_pidfd_open(pid)
        if fd < 0 { throw failure("pidfd_open", "process \(pid)") }
        return fd
    }

    /// Reaps the child behind `pidfd`; nil when nothing is waitable yet (with WNOHANG).
    func waitPidfd(_ pidfd: Int32, options: Int32) throws -> Waited? {
        try enter("waitid", "pidfd \(pidfd)")
        var result = offstage_wait_result()
        if offstage_waitid_pidfd(pidfd, options, &result) != 0 { throw failure("waitid", "pidfd \(pidfd)") }
        return Self.decode(result)
    }

    func waitPid(_ pid: Int32, options: Int32) throws -> Waited? {
        try enter("waitid", "process \(pid)")
        var result = offstage_wait_result()
        if offstage_waitid_pid(pid, options, &result) != 0 { throw failure("waitid", "process \(pid)") }
        return Self.decode(result)
    }

    func waitAny(options: Int32) throws -> Waited? {
        try enter("waitid", "any child")
        var result = offstage_wait_result()
        if offstage_waitid_all(options, &result) != 0 { throw failure("waitid", "any child") }
        return Self.decode(result)
    }

    /// The kernel id of the calling thread (a name in `/proc/self/task`).
    func currentThreadID() -> Int32 {
        offstage_gettid()
    }

    /// The daemon's own pid.
    func currentProcessID() -> Int32 {
        getpid()
    }

    func forkExitingChild() throws -> Int32 {
        try enter("fork", "exiting child")
        let pid = offstage_fork_exiting_child()
        if pid < 0 { throw failure("fork", "exiting child") }
        return pid
    }

    /// Forks and execs; see `offstage_spawn` for what the child does before exec.
    func spawn(
        path: String,
        argv: [String],
        environment: [String],
        directory: String?,
        outputFD: Int32,
        cgroupProcsFDs: [Int32]
    ) throws -> Int32 {
        try enter("spawn", path, argv.joined(separator: " "))
        let cArgv = Self.cStringArray(argv)
        let cEnvironment = Self.cStringArray(environment)
        defer {
            Self.free(cArgv)
            Self.free(cEnvironment)
        }
        var pid: pid_t = 0
        var failed = offstage_spawn_failure()
        let rc = cgroupProcsFDs.withUnsafeBufferPointer { fds in
            cArgv.withUnsafeBufferPointer { argvPointer in
                cEnvironment.withUnsafeBufferPointer { envPointer in
                    offstage_spawn(
                        path,
                        argvPointer.baseAddress,
                        envPointer.baseAddress,
                        directory,
                        outputFD,
                        fds.baseAddress,
                        Int32(fds.count),
                        &pid,
                        &failed
                    )
                }
            }
        }
        if rc == 0 { return pid }
        interceptor.map { _ = $0.intercept("spawn-failed", path, "step \(failed.step) child \(failed.child)") }
        let step = offstage_spawn_step(rawValue: UInt32(failed.step))
        switch step {
        case OFFSTAGE_SPAWN_STEP_EXEC:
            throw ProcessControlError.cannotExecute(path: path, errno: failed.error)
        case OFFSTAGE_SPAWN_STEP_JOIN_CGROUP:
            throw ProcessControlError.cannotStart(path: path, step: "joining its cgroup", errno: failed.error)
        case OFFSTAGE_SPAWN_STEP_PROCESS_GROUP:
            throw ProcessControlError.cannotStart(path: path, step: "creating its process group", errno: failed.error)
        case OFFSTAGE_SPAWN_STEP_STDIN:
            throw ProcessControlError.cannotStart(path: path, step: "opening /dev/null", errno: failed.error)
        case OFFSTAGE_SPAWN_STEP_OUTPUT:
            throw ProcessControlError.cannotStart(path: path, step: "redirecting its output", errno: failed.error)
        case OFFSTAGE_SPAWN_STEP_CHDIR:
            throw ProcessControlError.cannotStart(
                path: path, step: "changing to directory \(directory ?? "")", errno: failed.error)
        case OFFSTAGE_SPAWN_STEP_FORK:
            throw ProcessControlError.cannotStart(path: path, step: "fork", errno: failed.error)
        default:
            throw ProcessControlError.cannotStart(path: path, step: "creating the status pipe", errno: failed.error)
        }
    }

    // MARK: - epoll and eventfd

    func epollCreate() throws -> Int32 {
        try enter("epoll_create", "")
        let fd = offstage_epoll_create()
        if fd < 0 { throw failure("epoll_create", "") }
        return fd
    }

    func epollAdd(_ epoll: Int32, _ fd: Int32, token: UInt64) throws {
        try enter("epoll_ctl", "add \(fd)")
        if offstage_epoll_add(epoll, fd, token) != 0 { throw failure("epoll_ctl", "add \(fd)") }
    }

    func epollRemove(_ epoll: Int32, _ fd: Int32) {
        _ = offstage_epoll_remove(epoll, fd)
    }

    /// Blocks until at least one registered fd is ready; returns their tokens (empty after EINTR).
    func epollWait(_ epoll: Int32) throws -> [UInt64] {
        var tokens = [UInt64](repeating: 0, count: 32)
        let count = tokens.withUnsafeMutableBufferPointer {
            offstage_epoll_wait(epoll, $0.baseAddress, Int32($0.count), -1)
        }
        if count < 0 {
            if Glibc.errno == EINTR { return [] }
            throw failure("epoll_wait", "")
        }
        return Array(tokens[0..<Int(count)])
    }

    func eventfdCreate() throws -> Int32 {
        try enter("eventfd", "")
        let fd = offstage_eventfd()
        if fd < 0 { throw failure("eventfd", "") }
        return fd
    }

    func eventfdSignal(_ fd: Int32) {
        var one: UInt64 = 1
        _ = Glibc.write(fd, &one, MemoryLayout<UInt64>.size)
    }

    func eventfdDrain(_ fd: Int32) {
        var value: UInt64 = 0
        _ = Glibc.read(fd, &value, MemoryLayout<UInt64>.size)
    }

    // MARK: - Helpers

    private func enter(_ call: String, _ target: @autoclosure () -> String, _ detail: @autoclosure () -> String = "")
        throws
    {
        guard let interceptor else { return }
        if let code = interceptor.intercept(call, target(), detail()) {
            throw ProcessControlError.systemCallFailed(call: call, target: target(), errno: code)
        }
    }

    private func failure(_ call: String, _ target: String) -> ProcessControlError {
        .systemCallFailed(call: call, target: target, errno: Glibc.errno)
    }

    private static func decode(_ result: offstage_wait_result) -> Waited? {
        guard result.pid != 0 else { return nil }
        var copy = result
        if offstage_wait_result_exited(&copy) != 0 {
            return Waited(pid: result.pid, status: .exited(result.status))
        }
        if offstage_wait_result_signaled(&copy) != 0 {
            return Waited(pid: result.pid, status: .signaled(result.status))
        }
        return Waited(pid: result.pid, status: .unknown)
    }

    private static func cStringArray(_ strings: [String]) -> [UnsafeMutablePointer<CChar>?] {
        strings.map { strdup($0) } + [nil]
    }

    private static func free(_ array: [UnsafeMutablePointer<CChar>?]) {
        for pointer in array { Glibc.free(pointer) }
    }
}
