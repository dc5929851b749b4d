import Foundation
import Glibc

/// A process a test starts and ends by its pid: started with posix_spawn, reaped with waitpid.
///
/// Not Foundation's `Process`: the test runner's threads block most signals and a child inherits that mask (so
/// gpsfake or pulseaudio started that way ignore SIGTERM), and on Linux its `waitUntilExit()` was seen to hang after
/// the child had exited. Here the child starts with an empty signal mask and default dispositions.
public final class SpawnedProcess: @unchecked Sendable {  // `exited` is only touched under the lock
    /// Why a process could not be started.
    public struct SpawnError: Error, CustomStringConvertible {
        /// The executable.
        public let path: String
        /// posix_spawn's error number.
        public let code: Int32
        public var description: String { "cannot start \(path): \(String(cString: strerror(code)))" }
    }

    /// The child's pid.
    public let pid: pid_t
    private let lock = NSLock()
    private var exited = false
    private var status: Int32 = 0

    /// Starts `path` with `arguments`, standard input from /dev/null, standard output to `output` and standard error to
    /// `errors` (the same file when nil), both appended to or, with `truncate`, emptied first.
    /// - Parameter environment: the child's environment; the test process's when nil.
    public init(
        _ path: String, _ arguments: [String], environment: [String: String]? = nil, output: String,
        errors: String? = nil, truncate: Bool = false
    ) throws {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let mode = O_WRONLY | O_CREAT | (truncate ? O_TRUNC : O_APPEND)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, mode, 0o644)
        if let errors {
            posix_spawn_file_actions_addopen(&actions, 2, errors, mode, 0o644)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, path, &actions, &attributes, argv, envp)
        guard result == 0 else { throw SpawnError(path: path, code: result) }
        pid = child
    }

    /// Whether the child has not exited yet (reaps it if it has).
    public var isRunning: Bool {
        lock.withLock {
            if exited { return false }
            exited = waitpid(pid, &status, WNOHANG) != 0
            return !exited
        }
    }

    /// Waits until the child has exited and reaps it.
    public func wait() {
        lock.withLock {
            guard !exited else { return }
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            exited = true
        }
    }

    /// Waits until the child has exited; its exit code, or 128 + the signal that ended it.
    public func exitCode() -> Int32 {
        wait()
        return lock.withLock { (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f) }
    }

    /// SIGTERM, up to `grace` seconds to exit, then SIGKILL; reaps the child.
    public func terminate(grace: Double = 5) {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        let deadline = Date().addingTimeInterval(grace)
        while isRunning, Date() < deadline { usleep(10_000) }
        if isRunning { kill(pid, SIGKILL) }
        wait()
    }

    /// The full path of `name` in PATH, or nil.
    public static func executable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
