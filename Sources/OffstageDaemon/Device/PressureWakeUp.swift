import Glibc
import OffstageCore

/// A descriptor the kernel makes ready when memory pressure may have changed (SPEC MEM-1). The machine's watcher waits
/// on it beside its netlink sockets, so that memory is read when the kernel says so rather than at an interval: an idle
/// device is never woken to read it.
///
/// - A **PSI trigger** (`some 200000 2000000` written to a `memory.pressure` file): ready (POLLPRI) when tasks stalled
///   for memory longer than the threshold within the window, at most once per window. The window is 2 s because the
///   kernel takes multiples of 2 s from a process without CAP_SYS_RESOURCE, as the daemon may be.
/// - A **counter** (an eventfd): readable when the kernel signalled it, for example when the apps' usage crossed one of
///   the app memory budget's thresholds (``MemoryCgroups/budgetWakeUp(_:)``).
public struct PressureWakeUp: Sendable, Hashable {
    /// What makes the descriptor ready, and what that says.
    enum Kind: Sendable, Hashable {
        /// A PSI trigger fired: the stalls of its window reached its threshold, so the reading is at least `floor`
        /// whatever a lagging average says.
        case psiTrigger(floor: MemoryPressure)
        /// An eventfd was signalled: its count is read and dropped.
        case counter
    }

    /// The descriptor; the watcher closes it when it stops.
    let fd: Int32
    let kind: Kind
    /// Where it comes from, for people.
    let source: String

    /// The PSI window: the shortest the kernel allows without CAP_SYS_RESOURCE.
    static let psiWindowMicroseconds = 2_000_000

    /// A PSI trigger on `path` that fires when tasks waited for memory `percent` of a window (`full` for the share in
    /// which every task waited).
    static func psiTrigger(
        path: String, percent: Double, full: Bool = false, floor: MemoryPressure, syscalls: Syscalls = .live
    ) throws -> PressureWakeUp {
        // The kernel refuses a threshold of 0 or above the window.
        let threshold = min(Self.psiWindowMicroseconds, max(1, Int((percent / 100 * Double(Self.psiWindowMicroseconds)).rounded())))
        let fd = try syscalls.open(path, O_RDWR | O_NONBLOCK)
        let line = "\(full ? "full" : "some") \(threshold) \(Self.psiWindowMicroseconds)"
        do {
            try syscalls.write(fd, path: path, line)
        } catch {
            syscalls.close(fd)
            throw error
        }
        return PressureWakeUp(fd: fd, kind: .psiTrigger(floor: floor), source: "PSI triggers on \(path)")
    }

    /// The machine's triggers at the settings' thresholds (warning and critical stalls of some tasks, critical stalls of
    /// all), on `/proc/pressure/memory` or else on the cgroup2 root's `memory.pressure` (the root group's pressure is the
    /// machine's); with why there are none where the kernel takes no trigger on either.
    static func machine(
        _ settings: MachinePressureSettings, psiPath: String?, mounts: CgroupMounts, syscalls: Syscalls = .live
    ) -> (wakeUps: [PressureWakeUp], problem: String?) {
        var candidates: [String] = []
        if let psiPath { candidates.append(psiPath) }
        if let unified = mounts.unified { candidates.append(CgroupHierarchy.join(unified.mountPoint, "memory.pressure")) }
        var problems: [String] = []
        for path in candidates {
            var made: [PressureWakeUp] = []
            do {
                if settings.psiSomeWarning > 0 {
                    made.append(try psiTrigger(path: path, percent: settings.psiSomeWarning, floor: .warning, syscalls: syscalls))
                }
                if settings.psiSomeCritical > 0 {
                    made.append(try psiTrigger(path: path, percent: settings.psiSomeCritical, floor: .critical, syscalls: syscalls))
                }
                if settings.psiFullCritical > 0 {
                    made.append(
                        try psiTrigger(path: path, percent: settings.psiFullCritical, full: true, floor: .critical, syscalls: syscalls))
                }
                return (made, nil)
            } catch {
                made.forEach { syscalls.close($0.fd) }
                problems.append("\(error)")
            }
        }
        if candidates.isEmpty { problems.append("no PSI file (no /proc/pressure/memory, no cgroup2 mount)") }
        return ([], problems.joined(separator: "; "))
    }

    /// The events the watcher waits for.
    var pollEvents: Int16 {
        switch kind {
        case .psiTrigger: Int16(POLLPRI)
        case .counter: Int16(POLLIN)
        }
    }
}
