import Foundation
import OffstageBenchKit

/// A process the benchmark started (the daemon or a helper), which it ends by pid and reaps.
///
/// Spawned with every signal at its default and none blocked: an ignored or blocked signal would otherwise be
/// inherited across exec. The environment is the benchmark's without `LD_PRELOAD`, because the benchmark runner
/// preloads its malloc interposer into the benchmark process and the measured daemon must run as it ships.
final class ChildProcess: @unchecked Sendable {
    let pid: pid_t
    let name: String
    private(set) var exited = false
    /// The exit code once reaped (128 + the signal's number when a signal ended it).
    private(set) var exitCode: Int32?

    /// Starts `executable` with `arguments`; stdout and stderr go to `outputPath`.
    init(_ executable: String, _ arguments: [String], outputPath: String) throws {
        name = (executable as NSString).lastPathComponent
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t()
        sigfillset(&all)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)

        var environment = ProcessInfo.processInfo.environment
        environment["LD_PRELOAD"] = nil
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        guard result == 0 else { throw SystemCallError("posix_spawn \(executable)", code: result) }
        pid = child
    }

    /// Whether the process has not been reaped yet (reaps it if it has exited).
    var isRunning: Bool {
        guard !exited else { return false }
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == pid {
            exited = true
            // WIFEXITED / WEXITSTATUS, WTERMSIG spelled out: Glibc's macros do not import into Swift.
            exitCode = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        } else if result < 0 && errno == ECHILD {
            exited = true
        }
        return !exited
    }

    /// Sends `signal` if the process still runs.
    func signal(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// Waits up to `seconds` for the process to exit; true if it did.
    @discardableResult
    func wait(seconds: Double) -> Bool {
        let deadline = MonotonicClock.now() + UInt64(seconds * 1e9)
        while isRunning {
            if MonotonicClock.now() >= deadline { return false }
            MonotonicClock.sleep(milliseconds: 5)
        }
        return true
    }

    /// SIGTERM, then SIGKILL if it has not exited after `grace` seconds.
    func stop(grace: Double = 5) {
        signal(SIGTERM)
        if !wait(seconds: grace) {
            signal(SIGKILL)
            wait(seconds: 5)
        }
    }
}

/// What /proc says about a process: memory and context switches.
enum ProcReader {
    /// A field of /proc/PID/status in kB (VmRSS, VmHWM…), or nil.
    static func statusKilobytes(_ pid: pid_t, _ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces).split(separator: " ")[0])
        }
        return nil
    }

    /// Voluntary plus involuntary context switches of one thread (a wake-up ends in one or the other).
    static func contextSwitches(_ pid: pid_t, task: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else {
            return nil
        }
        var total = 0
        var found = false
        for line in text.split(separator: "\n")
        where line.hasPrefix("voluntary_ctxt_switches:") || line.hasPrefix("nonvoluntary_ctxt_switches:") {
            total += Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
            found = true
        }
        return found ? total : nil
    }

    /// Each thread's name and context switches, by thread id.
    static func threads(_ pid: pid_t) -> [String: (name: String, switches: Int)] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var result: [String: (String, Int)] = [:]
        for task in tasks {
            guard let switches = contextSwitches(pid, task: task) else { continue }
            let name = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
            result[task] = (name, switches)
        }
        return result
    }

    /// Whether `pid` is (still) a probe app or a helper: its name is checked so that a reused pid is never signalled.
    static func isBenchProcess(_ pid: pid_t) -> Bool {
        let name = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)
        return name?.hasPrefix("OffstageBench") == true
    }

    /// The state letter in /proc/PID/stat (R, S, T…).
    static func state(_ pid: pid_t) -> Character? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")"), text.index(close, offsetBy: 2) < text.endIndex
        else { return nil }
        return text[text.index(close, offsetBy: 2)]
    }

    /// The cgroup v2 path of a process ("0::/…" in /proc/PID/cgroup), relative to the cgroup2 mount.
    static func unifiedCgroup(_ pid: pid_t) -> String? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/cgroup", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("0::") { return String(line.dropFirst(3)) }
        return nil
    }

    /// The cgroup v1 freezer path of a process, relative to the freezer mount.
    static func freezerCgroup(_ pid: pid_t) -> String? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/cgroup", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            if parts.count == 3, parts[1].split(separator: ",").contains("freezer") { return String(parts[2]) }
        }
        return nil
    }

    /// Mount points of the cgroup2 file system and the v1 freezer hierarchy, from /proc/self/mountinfo.
    static func cgroupMounts() -> (unified: String?, freezer: String?) {
        guard let text = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return (nil, nil) }
        var unified: String?
        var freezer: String?
        for line in text.split(separator: "\n") {
            let halves = line.components(separatedBy: " - ")
            guard halves.count == 2 else { continue }
            let left = halves[0].split(separator: " ")
            let right = halves[1].split(separator: " ")
            guard left.count >= 5, right.count >= 3 else { continue }
            // Only mounts of the whole hierarchy (root "/"), so relative cgroup paths can be appended.
            guard left[3] == "/" else { continue }
            if right[0] == "cgroup2", unified == nil { unified = String(left[4]) }
            if right[0] == "cgroup", right[2].split(separator: ",").contains("freezer"), freezer == nil {
                freezer = String(left[4])
            }
        }
        return (unified, freezer)
    }
}
