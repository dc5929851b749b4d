/// The mechanism that freezes an app's process tree, best first.
public enum FreezerKind: String, Sendable, Codable, CaseIterable {
    /// cgroup v2 `cgroup.freeze`, confirmed by `frozen 1` in `cgroup.events`; kill via `cgroup.kill`.
    case cgroupV2
    /// cgroup v1 `freezer.state`.
    case cgroupV1
    /// SIGSTOP/SIGCONT to the app's process group and descendants: works anywhere, but the app's parent sees the
    /// stop and a process that leaves the group and tree escapes.
    case signalStop
}
