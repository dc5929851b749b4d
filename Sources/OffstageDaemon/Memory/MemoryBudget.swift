import Glibc
import OffstageCore

/// The app memory budget (SPEC MEM-1): one limit on the group that holds every app's memory group, so that a device's
/// memory can be given to the apps on a bigger machine, and real pressure made in a test. Memory pressure then follows
/// how full the budget is: a warning from ``warningBytes``, critical from ``criticalBytes`` (the settings'
/// `budgetWarning` and `budgetCritical` percentages), whichever the machine's own reading says. The kernel ends a
/// process only if the apps reach the limit itself before the daemon has ended one: the thresholds are below it so
/// that the daemon's order decides who goes, not the kernel's.
///
/// The usage counted is the group's (`memory.usage_in_bytes`, `memory.current`): the apps' memory and the page cache
/// charged to them, which the kernel reclaims before it would end anything.
struct MemoryBudget: Sendable, Hashable {
    /// The limit written on the group of every app.
    let limitBytes: Int64
    /// From here memory pressure is a warning.
    let warningBytes: Int64
    /// From here memory pressure is critical.
    let criticalBytes: Int64
    /// The group's usage file.
    let usagePath: String

    /// The budget of `limitBytes` with the thresholds at the percentages given.
    init(limitBytes: Int64, warningPercent: Double, criticalPercent: Double, usagePath: String) {
        self.limitBytes = limitBytes
        warningBytes = Int64((Double(limitBytes) * warningPercent / 100).rounded())
        criticalBytes = Int64((Double(limitBytes) * criticalPercent / 100).rounded())
        self.usagePath = usagePath
    }

    /// The level a usage gives.
    func level(usage: Int64) -> MemoryPressure {
        if usage >= criticalBytes { return .critical }
        if usage >= warningBytes { return .warning }
        return .normal
    }

    /// The apps' usage now; nil when the file cannot be read.
    func usageBytes(_ syscalls: Syscalls = .live) -> Int64? {
        (try? syscalls.readFile(usagePath))?.split(whereSeparator: \.isWhitespace).first.flatMap { Int64($0) }
    }

    /// The level now; nil when the usage cannot be read.
    func read(_ syscalls: Syscalls = .live) -> MemoryPressure? {
        usageBytes(syscalls).map(level(usage:))
    }

    /// For people: `320 MB (warning from 224 MB, critical from 272 MB) at PATH`.
    var description: String {
        "\(Self.megabytes(limitBytes)) MB (warning from \(Self.megabytes(warningBytes)) MB, critical from "
            + "\(Self.megabytes(criticalBytes)) MB) on \(usagePath)"
    }

    static func megabytes(_ bytes: Int64) -> Int64 { (bytes + (1 << 19)) >> 20 }
}

extension MemoryCgroups {
    /// Writes the app memory budget (nil: none, removing a previous daemon's) on the group of every app, and returns it
    /// with the thresholds given. On cgroup v1 the parent's limit covers its children only with `memory.use_hierarchy`,
    /// which is turned on while the group has none.
    func applyBudget(megabytes: Int?, warningPercent: Double, criticalPercent: Double) throws -> MemoryBudget? {
        let instance = hierarchy.instancePath
        guard let megabytes else {
            try syscalls.writeFile(CgroupHierarchy.join(instance, limitFile), version == .cgroupV1 ? "-1" : "max")
            return nil
        }
        if version == .cgroupV1 {
            let hierarchical = CgroupHierarchy.join(instance, "memory.use_hierarchy")
            if (try? syscalls.readFile(hierarchical))?.split(whereSeparator: \.isWhitespace).first != "1" {
                do {
                    try syscalls.writeFile(hierarchical, "1")
                } catch {
                    throw BudgetError(
                        reason: "\(hierarchical) is 0 and cannot be set: the limit would not cover the apps' groups "
                            + "(\(error)); stop the apps of a previous daemon, or turn use_hierarchy on at the root")
                }
            }
        }
        let bytes = Int64(megabytes) << 20
        try syscalls.writeFile(CgroupHierarchy.join(instance, limitFile), String(bytes))
        return MemoryBudget(
            limitBytes: bytes, warningPercent: warningPercent, criticalPercent: criticalPercent,
            usagePath: CgroupHierarchy.join(instance, usageFile))
    }

    /// Why the budget cannot be applied.
    struct BudgetError: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    /// An eventfd the kernel signals whenever the apps' usage crosses one of the budget's thresholds, up or down
    /// (cgroup v1's `cgroup.event_control` with `memory.usage_in_bytes`); the caller closes it, which also ends the
    /// registration. On cgroup2, which has no usage thresholds, a PSI trigger on the group's `memory.pressure` (the
    /// apps' stalls as they near the limit) stands in for it.
    func budgetWakeUp(_ budget: MemoryBudget) throws -> PressureWakeUp {
        let instance = hierarchy.instancePath
        guard version == .cgroupV1 else {
            return try PressureWakeUp.psiTrigger(
                path: CgroupHierarchy.join(instance, "memory.pressure"), percent: 10, floor: .warning, syscalls: syscalls)
        }
        let eventfd = try syscalls.eventfdCreate()
        do {
            let usage = try syscalls.open(budget.usagePath, O_RDONLY)
            defer { syscalls.close(usage) }
            for threshold in [budget.warningBytes, budget.criticalBytes] {
                try syscalls.writeFile(CgroupHierarchy.join(instance, "cgroup.event_control"), "\(eventfd) \(usage) \(threshold)")
            }
        } catch {
            syscalls.close(eventfd)
            throw error
        }
        return PressureWakeUp(fd: eventfd, kind: .counter, source: "usage thresholds on \(budget.usagePath)")
    }
}
