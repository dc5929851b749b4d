import Glibc

/// Why launching, freezing, killing or watching an app process failed: the thing that was wrong and the fix.
public enum ProcessControlError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A name cannot be used as a cgroup directory name.
    case invalidName(String, reason: String)
    /// A request is malformed (a spawn request, or a leader pid that cannot be an app's).
    case invalidRequest(String)
    /// `execve` of the executable failed; the child was reaped and nothing was left running.
    case cannotExecute(path: String, errno: Int32)
    /// A step of preparing the child before `execve` failed (joining a cgroup, opening output, changing directory).
    case cannotStart(path: String, step: String, errno: Int32)
    /// A system call failed on a file, process or descriptor.
    case systemCallFailed(call: String, target: String, errno: Int32)
    /// The app did not reach the frozen state in time; it was thawed again.
    case freezeTimedOut(app: String, kind: FreezerKind, timeout: Duration)
    /// A freezer kind cannot be used on this machine.
    case unavailable(kind: FreezerKind, reason: String)
    /// The app's group is frozen with processes inside, so a new process would stop before it could exec.
    case groupFrozen(app: String)
    /// No such process (or its pid now names another process).
    case noSuchProcess(pid: Int32)
    /// The exit watcher was shut down.
    case watcherStopped

    /// The errno behind the error, if there is one.
    public var errno: Int32? {
        switch self {
        case .cannotExecute(_, let code), .cannotStart(_, _, let code), .systemCallFailed(_, _, let code):
            return code
        default:
            return nil
        }
    }

    public var description: String {
        switch self {
        case .invalidName(let name, let reason):
            return "'\(name)' cannot name a cgroup: \(reason); use letters, digits, '-', '_' and '.' (not leading)"
        case .invalidRequest(let problem):
            return "invalid request: \(problem)"
        case .cannotExecute(let path, let code):
            return "cannot execute \(path): \(Self.text(code)); "
                + "check that it exists, is a regular file and is executable (chmod +x)"
        case .cannotStart(let path, let step, let code):
            return "cannot start \(path): \(step) failed: \(Self.text(code)); \(Self.fix(for: code))"
        case .systemCallFailed(let call, let target, let code):
            return "\(call) \(target) failed: \(Self.text(code)); \(Self.fix(for: code))"
        case .freezeTimedOut(let app, let kind, let timeout):
            return "app \(app) did not freeze within \(timeout) (\(kind.rawValue)) and was thawed again; "
                + "raise the freeze timeout or look for its processes stuck in state D (uninterruptible I/O)"
        case .unavailable(let kind, let reason):
            return "the \(kind.rawValue) freezer cannot be used: \(reason)"
        case .groupFrozen(let app):
            return "cannot start a process for \(app): its group is frozen with processes inside; thaw or kill it first"
        case .noSuchProcess(let pid):
            return "process \(pid) does not exist (it exited, or its pid was reused); nothing to do for it"
        case .watcherStopped:
            return "the exit watcher has been shut down; create a new ExitWatcher"
        }
    }

    /// The system's text for an errno value.
    static func text(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    // The fix that usually applies to an errno seen in this area.
    private static func fix(for code: Int32) -> String {
        switch code {
        case EACCES, EPERM:
            return "run offstaged as root or delegate the cgroup to its user"
        case EROFS:
            return "the cgroup file system is mounted read-only; mount it read-write or use the signalStop freezer"
        case ENOENT:
            return "check that the path exists (a cgroup may have been removed under the daemon)"
        case EBUSY:
            return "the cgroup still holds processes; kill them first"
        case ESRCH:
            return "the process already exited"
        case EMFILE, ENFILE:
            return "raise the open-file limit (ulimit -n)"
        default:
            return "see the system log for more"
        }
    }
}
