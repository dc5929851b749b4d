import Logging
import NIOCore
import OffstageCore

/// The daemon's memory service (SPEC MEM-2): each app's group under the kernel's memory controller where one can be
/// used — its manifest's limit written there before the process starts, and the group's count of out-of-memory kills
/// telling a limit kill from any other SIGKILL — or, where none can, the limits watched by the daemon, which reads each
/// limited app's memory while it runs. It decides nothing: the core ends an app the daemon reads over its limit.
///
/// Used on the engine's loop only; the groups (``cgroups``) are read from any thread.
final class AppMemory: @unchecked Sendable {
    /// The apps' groups under the memory controller; nil where the daemon watches the limits itself.
    let cgroups: MemoryCgroups?
    /// Why the daemon watches the limits itself; nil when the kernel enforces them.
    let watchedBecause: String?
    private let logger: Logger
    /// The kernel's count of out-of-memory kills in each app's group when its process was launched or adopted.
    private var killsBefore: [AppID: Int] = [:]
    /// Apps whose group could not be given their limit: watched by the daemon like every app where there is no
    /// controller.
    private(set) var watchedAnyway: Set<AppID> = []
    /// The daemon's reading of watched apps' memory, while one runs.
    var watch: RepeatedTask?
    /// The limit last written to each app's group (nil: none), to write it again only when the one in force changes.
    var writtenLimits: [AppID: Int64?] = [:]
    /// Reads memory without a controller: the PSS of the app's processes.
    let reader = AppResourceReader()
    /// The app memory budget in force (SPEC MEM-1), if one is set and could be written.
    let budget: MemoryBudget?
    /// Why the budget set in the configuration is not in force.
    let budgetProblem: String?

    /// Uses the memory controller when `useController` is set and one can be used here, with the app memory budget
    /// given (nil: none; a budget a previous daemon left is removed).
    init(instanceName: String, useController: Bool, budgetMB: Int? = nil, pressure: MachinePressureSettings = .init(), logger: Logger) {
        self.logger = logger
        guard useController else {
            (cgroups, watchedBecause) = (nil, "turned off in the configuration (memoryController)")
            (budget, budgetProblem) = (nil, budgetMB.map { _ in "no memory controller is used (memoryController is false)" })
            return
        }
        let cgroups: MemoryCgroups
        switch MemoryCgroups.make(instanceName: instanceName, mounts: .current()) {
        case .success(let made):
            (self.cgroups, watchedBecause, cgroups) = (made, nil, made)
        case .failure(let why):
            (self.cgroups, watchedBecause) = (nil, why.reason)
            (budget, budgetProblem) = (nil, budgetMB.map { _ in "no memory controller can be used (\(why.reason))" })
            return
        }
        do {
            budget = try cgroups.applyBudget(
                megabytes: budgetMB, warningPercent: pressure.budgetWarning, criticalPercent: pressure.budgetCritical)
            budgetProblem = nil
        } catch {
            budget = nil
            budgetProblem = budgetMB.map { _ in "\(error)" }
        }
    }

    /// Uses the groups given (tests make them with a syscall interceptor).
    init(cgroups: MemoryCgroups, logger: Logger) {
        (self.cgroups, watchedBecause, self.logger) = (cgroups, nil, logger)
        (budget, budgetProblem) = (nil, nil)
    }

    /// Watched by the daemon, for the reason given (a daemon started without the service, in tests).
    init(watchedBecause reason: String, logger: Logger) {
        (cgroups, watchedBecause, self.logger) = (nil, reason, logger)
        (budget, budgetProblem) = (nil, nil)
    }

    /// The app memory budget for people: its size and thresholds, why it is not in force, or `none`.
    var budgetDetail: String {
        if let budget { return budget.description }
        if let budgetProblem { return "not in force: \(budgetProblem)" }
        return "none"
    }

    /// `enforced` (by the kernel) or `watched` (by the daemon), for `offstage status`.
    var limitsState: String { cgroups == nil ? "watched" : "enforced" }

    /// Where the limits are enforced, or why they are watched and how often.
    func limitsDetail(watchInterval: Double) -> String {
        if let cgroups { return "by the kernel's memory controller, \(cgroups.location)" }
        return "by the daemon, which reads each running limited app's memory every \(watchInterval.formatted) s and ends it over its limit: "
            + "no memory controller is used (\(watchedBecause ?? "none"))"
    }

    /// Before a launch: the app's group with the limit given (none for nil); returns the `cgroup.procs` files its
    /// process joins. A group that cannot be made or limited leaves the app watched by the daemon, and says why.
    func prepareLaunch(_ id: AppID, limitBytes: Int64?) -> [String] {
        guard let cgroups else { return [] }
        do {
            let procs = try cgroups.prepare(app: id.rawValue, limitBytes: limitBytes)
            writtenLimits[id] = limitBytes
            killsBefore[id] = cgroups.outOfMemoryKills(app: id.rawValue) ?? 0
            watchedAnyway.remove(id)
            return [procs]
        } catch {
            if limitBytes != nil { watchedAnyway.insert(id) }
            logger.warning(
                "cannot give the app its memory group; its limit is watched by the daemon",
                metadata: ["offstage.app": "\(id)", "offstage.error": "\(error)"])
            return []
        }
    }

    /// A process of the previous daemon was adopted: kills counted from now on are its.
    func adopted(_ id: AppID) {
        guard let cgroups else { return }
        killsBefore[id] = cgroups.outOfMemoryKills(app: id.rawValue) ?? 0
    }

    /// Whether the kernel ended a process of the app for memory since it was launched or adopted (counted once).
    func endedForMemory(_ id: AppID) -> Bool {
        guard let cgroups, let kills = cgroups.outOfMemoryKills(app: id.rawValue) else { return false }
        defer { killsBefore[id] = kills }
        return kills > (killsBefore[id] ?? 0)
    }

    /// Whether the daemon must read the app's memory against its limit: where the kernel does not enforce it.
    func watches(_ id: AppID) -> Bool { cgroups == nil || watchedAnyway.contains(id) }

    /// The app is uninstalled: its group goes (if empty).
    func forget(_ id: AppID) {
        killsBefore[id] = nil
        writtenLimits[id] = nil
        watchedAnyway.remove(id)
        cgroups?.remove(app: id.rawValue)
    }

    /// Removes every empty group of this daemon, then its directory.
    func removeAll() {
        cgroups?.removeAll()
    }
}
