import Glibc

/// A child process started with posix_spawn and a clean signal mask and dispositions.
///
/// Not Foundation's `Process`: the test runner's threads block most signals, a child inherits that mask, and
/// gpsfake started that way ignores SIGTERM, so it could never be stopped politely.
final class SpawnedProcess: @unchecked Sendable {
    /// The child's pid.
    let pid: pid_t
    // Only touched by the test's own thread, in `isRunning` and `terminate()`.
    private var exited = false

    /// Starts `path` with `arguments`, stdout and stderr appended to `output`.
    init(_ path: String, _ arguments: [String], output: String) throws {
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
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, path, &actions, &attributes, argv, environ)
        guard rc == 0 else { throw SpawnError(code: rc) }
        pid = child
    }

    /// The errno of a failed posix_spawn.
    struct SpawnError: Error { let code: Int32 }

    /// Whether the child has not exited yet (reaps it if it has).
    var isRunning: Bool {
        if exited { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { exited = true }
        return !exited
    }

    /// SIGTERM, up to 5 s to exit, then SIGKILL; reaps the child.
    func terminate() {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        for _ in 0..<50 where isRunning { usleep(100_000) }
        if isRunning {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
            exited = true
        }
    }
}
