import Glibc

/// Why `MachineConditionsWatcher` could not start: the thing that was wrong and the fix.
public enum MachineConditionsWatcherError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A netlink socket could not be opened or bound; `purpose` says which (device events or link and address
    /// changes).
    case cannotOpenNetlinkSocket(purpose: String, errno: Int32)
    /// The eventfd that wakes the watcher's thread for shutdown could not be created.
    case cannotCreateWakeUp(errno: Int32)
    /// The watcher's thread could not be started.
    case cannotStartThread(errno: Int32)

    /// The errno behind the error.
    public var errno: Int32 {
        switch self {
        case .cannotOpenNetlinkSocket(_, let code), .cannotCreateWakeUp(let code), .cannotStartThread(let code): code
        }
    }

    public var description: String {
        switch self {
        case .cannotOpenNetlinkSocket(let purpose, let code):
            return "cannot open the netlink socket for \(purpose): \(Self.text(code)); \(Self.fix(for: code))"
        case .cannotCreateWakeUp(let code):
            return "cannot create the eventfd that stops the machine-conditions watcher: \(Self.text(code)); "
                + Self.fix(for: code)
        case .cannotStartThread(let code):
            return "cannot start the machine-conditions watcher's thread: \(Self.text(code)); \(Self.fix(for: code))"
        }
    }

    private static func text(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    // The fix that usually applies to an errno seen here.
    private static func fix(for code: Int32) -> String {
        switch code {
        case EPROTONOSUPPORT, EAFNOSUPPORT, EINVAL:
            return "this kernel or sandbox does not offer that netlink family; "
                + "set battery, charging and network from the CLI instead of reading them from the machine"
        case EPERM, EACCES:
            return "a security policy (seccomp, SELinux, AppArmor) refuses it; allow netlink sockets for offstaged "
                + "or set the conditions from the CLI"
        case EMFILE, ENFILE:
            return "raise the open-file limit (ulimit -n)"
        case EAGAIN, ENOMEM:
            return "the system is out of memory or threads; free some and restart offstaged"
        default:
            return "see the system log for more"
        }
    }
}
