import Foundation
import OffstageDaemon
import OffstageProtocol

/// What must hold after every restart (SPEC §11 reliability, MAN-3, LC-4, LC-7, LC-8, SCH-10; notifications, pushes,
/// downloads and continued processing have their own: NotificationInvariants.swift, PushInvariants.swift,
/// TransferLoad.swift, ContinuedLoad.swift).
///
/// Facts the store keeps are checked at once: every acknowledged install, uninstall and setting is as acknowledged,
/// no app is listed twice, every request seen pending is still pending. Facts about processes are checked until they
/// hold, for as long as re-adoption may take (the reattach timeout and the termination grace): exactly one bundle
/// folder per installed app and nothing else, every process running an installed app's executable is that app's
/// tracked process, an app is frozen exactly when it is listed as suspended, and with multitasking off no app is in
/// the background.
enum CrashInvariants {
    /// How long process facts may take to settle after a restart.
    static let settleSeconds = 10.0

    static func isAlive(_ pid: Int32) -> Bool {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return false }
        return text[text.index(close, offsetBy: 2)] != "Z"
    }

    /// Pids of live processes whose executable lies under `folder` (also once that file is deleted).
    static func processesRunning(under folder: String) -> Set<Int32> {
        var pids: Set<Int32> = []
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(name), let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(name)/exe")
            else { continue }
            if exe.hasPrefix(folder + "/"), isAlive(pid) { pids.insert(pid) }
        }
        return pids
    }

    /// Whether the process's freezer says it is frozen (cgroup v2 or v1), or it is stopped by a signal.
    static func isFrozen(_ pid: Int32) -> Bool {
        let mounts = CgroupMounts.current()
        func path(_ mount: CgroupMounts.Mount?, _ cgroup: String) -> String? {
            guard let mount else { return nil }
            return mount.mountPoint + (mount.root == "/" ? cgroup : String(cgroup.dropFirst(mount.root.count)))
        }
        for line in ((try? String(contentsOfFile: "/proc/\(pid)/cgroup", encoding: .utf8)) ?? "").split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, parts[2].contains("offstage.") else { continue }
            if parts[0] == "0", let folder = path(mounts.unified, parts[2]),
                ((try? String(contentsOfFile: folder + "/cgroup.events", encoding: .utf8)) ?? "").contains("frozen 1")
            {
                return true
            }
            if parts[1] == "freezer", let folder = path(mounts.freezer, parts[2]),
                ((try? String(contentsOfFile: folder + "/freezer.state", encoding: .utf8)) ?? "").hasPrefix("FROZEN")
            {
                return true
            }
        }
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = text.lastIndex(of: ")")
        else { return false }
        return text[text.index(close, offsetBy: 2)] == "T"
    }
}

extension CrashRun {
    /// Checks every invariant against the restarted daemon, then takes its answers for what was uncertain.
    func checkAfterRestart() throws {
        // First, while what fell due during the kill has just been fired (or not).
        try checkNotifications(final: false)
        try checkPushes(final: false)
        try checkTransfers(final: false)
        try checkContinued(final: false)
        try checkUsage()
        let apps = try daemon.apps()
        let ids = apps.map(\.id)
        if Set(ids).count != ids.count { violation("an app is listed twice: \(ids)") }
        var observedSettings: [String: [String: Bool]] = [:]
        for app in HarnessApp.all {
            let listed = ids.contains(app.id)
            if !acknowledged.installation(app.id).allows(listed) {
                violation("\(app.id) is \(listed ? "" : "not ")installed, against what was acknowledged")
            }
            guard listed else { continue }
            let settings = try daemon.settings(app: app.id)
            observedSettings[app.id] = settings
            for (name, fact) in acknowledged.appSettings[app.id] ?? [:] {
                guard let value = settings[name] else {
                    violation("\(app.id) has no setting \(name)")
                    continue
                }
                if !fact.allows(value) { violation("\(app.id) setting \(name) is \(value), acknowledged \(fact)") }
            }
        }
        let device = try daemon.settings(app: nil)
        for (name, fact) in acknowledged.deviceSettings {
            guard let value = device[name] else {
                violation("the device has no setting \(name)")
                continue
            }
            if !fact.allows(value) { violation("device setting \(name) is \(value), acknowledged \(fact)") }
        }
        let tasks = try daemon.json(["tasks"], as: [ControlInterface.TaskMessage].self)
        let present = Set(tasks.filter { $0.state == "pending" || $0.state == "running" }.map { $0.app + "/" + $0.identifier })
        for request in acknowledged.pendingRequests.subtracting(present) {
            violation("request \(request), seen pending before the crash, is gone")
        }
        acknowledged.adopt(installedIDs: Set(ids), appSettings: observedSettings, device: device)
        try checkProcessesSettle(multitasking: device["multitasking"] ?? true)
    }

    /// Waits until every process fact holds, or reports the last one that did not.
    func checkProcessesSettle(multitasking: Bool) throws {
        let deadline = Date().addingTimeInterval(CrashInvariants.settleSeconds)
        var problem: String?
        repeat {
            problem = try processProblem(multitasking: multitasking)
            if problem == nil { return }
            usleep(50_000)
        } while Date() < deadline
        if let problem { violation(problem) }
    }

    /// The first process fact that does not hold now, or nil.
    func processProblem(multitasking: Bool) throws -> String? {
        let apps = try daemon.apps()
        let pids = Set(apps.compactMap(\.pid))
        seenPids.formUnion(pids)
        let bundles = daemon.state + "/bundles"
        let folders = ((try? FileManager.default.contentsOfDirectory(atPath: bundles)) ?? []).sorted()
        let expected = apps.map(\.id).sorted()
        let owners = folders.map { $0.split(separator: "@").first.map(String.init) ?? $0 }.sorted()
        if owners != expected || folders.contains(where: { !$0.contains("@") }) {
            return "bundle folders \(folders) do not match the installed apps \(expected)"
        }
        let untracked = CrashInvariants.processesRunning(under: bundles).subtracting(pids)
        if !untracked.isEmpty { return "processes \(untracked.sorted()) run an installed app's executable but no app tracks them" }
        for app in apps {
            guard let pid = app.pid else { continue }
            if !CrashInvariants.isAlive(pid) { return "\(app.id) is listed with pid \(pid), which is gone" }
            let frozen = CrashInvariants.isFrozen(pid)
            if frozen != (app.state == "suspended") { return "\(app.id) is \(app.state) but its process is \(frozen ? "" : "not ")frozen" }
            if !multitasking, app.state == "background" || app.state == "suspended" {
                return "\(app.id) is \(app.state) with multitasking off"
            }
        }
        return nil
    }
}

/// The figures of a run.
struct CrashReport {
    var seed: UInt64 = 0
    var crashes = 0
    var midCallKills = 0
    var operations = 0
    var acknowledged = 0
    var uncertain = 0
    var recoveries: [Double] = []
    var violations: [String] = []
    var seconds = 0.0
    var notifications = NotificationFigures()
    var pushes = PushFigures()
    var transfers = TransferFigures()
    var continued = ContinuedFigures()
    /// Usage rows compared across the last restart (SPEC SET-3).
    var usageRows = 0
    var usageChecks = 0

    var summary: String {
        let sorted = recoveries.sorted()
        func quantile(_ q: Double) -> Double { sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * q))] }
        let milliseconds = { (value: Double) in String(format: "%.1f", value * 1000) }
        let overTarget = sorted.filter { $0 > 0.5 }.count
        return """
            crash harness: seed \(seed), \(crashes) kill -9 (\(midCallKills) in the middle of a call), \(operations) operations \
            (\(acknowledged) acknowledged, \(uncertain) cut off), \(String(format: "%.0f", seconds)) s
            recovery (spawn to first answer): p50 \(milliseconds(quantile(0.5))) ms, p99 \(milliseconds(quantile(0.99))) ms, \
            max \(milliseconds(sorted.last ?? 0)) ms; \(overTarget) of \(sorted.count) over the 500 ms target
            \(notifications.summary)
            \(pushes.summary)
            \(transfers.summary)
            \(continued.summary)
            usage: \(usageChecks) restarts compared, \(usageRows) rows at the last
            violations: \(violations.count)\(violations.isEmpty ? "" : "\n  " + violations.joined(separator: "\n  "))
            """
    }
}
