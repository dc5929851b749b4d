import OffstageCore

/// The daemon restarts while the machine runs on (SPEC LC-8): what its store keeps comes back, the app processes
/// live on and are adopted, and they attach again.
extension Simulation {
    /// The daemon stops and starts again, as `offstaged` restarted by its supervisor does: a new core reads back what
    /// the store keeps — every app's durable state, the device's state (the app in front stays in front if its process
    /// lives; an interruption does not survive), notifications, held pushes, the transfer journal — and adopts the
    /// processes still running (thawed, each given until the reattach timeout to attach again). What the old daemon
    /// watched for them (handed-off sockets, accessory sessions) went with it; registered accessories are watched
    /// again, and VoIP apps not running are launched, as at boot.
    public mutating func restartDaemon() {
        let survivors = processes.values.sorted { $0.pid < $1.pid }.map { (app: $0.app, pid: $0.pid) }
        var device = core.device
        device.interruption = nil
        if let front = device.foregroundApp, !survivors.contains(where: { $0.app == front }) { device.foregroundApp = nil }
        let notifications = core.notifications
        for pid in processes.keys {
            processes[pid]?.attached = false
            processes[pid]?.frozen = false
        }
        queue.removeAll { if case .transferAttemptEnds = $0 { true } else { false } }
        readBackStore(device: device)
        core.restoreNotifications(notifications)
        perform(core.adopt(survivors, at: now))
        // Scripted processes attach again at once with what their SDK knows; external ones when their code says so
        // (``externalReattached(_:report:)``).
        for process in processes.values.sorted(by: { $0.pid < $1.pid }) where !externalApps.contains(process.app) {
            let report = AttachReport(
                launchCompleted: process.launchCompleted, state: process.state,
                openTasks: process.openTasks.sorted { $0.key < $1.key }.map { .init(id: $0.key, name: $0.value) })
            processes[process.pid]?.attached = true
            do throws(CoreError) {
                perform(try core.attached(process.app, pid: process.pid, report: report, at: now))
            } catch {
                errors.append(error)
            }
        }
        perform(core.recover(at: now))
        restoreHeldPushes(heldPushes.values.sorted { $0.id < $1.id })
        perform(core.watchAccessories(at: now))
        perform(core.launchAtBoot(at: now))
    }

    /// A new core, on `device`, reads back what the daemon's store keeps of the old one: every app's durable state,
    /// and the transfer journal (running tasks wait again, to resume from their checkpoints). What the old shell
    /// watched (handed-off descriptors, accessories) and its transfer attempts go with it.
    mutating func readBackStore(device: DeviceState) {
        var restarted = OffstageCore(configuration: core.configuration, device: device, numberSeed: core.upcomingNumber)
        for (_, entry) in core.apps.sorted(by: { $0.key < $1.key }) { restarted.restore(entry.app, durable: entry.durable) }
        core = restarted
        sockets = [:]
        accessorySessions = [:]
        accessoryWatches = [:]
        transferAttempts = [:]
        perform(
            core.restoreTransfers(
                tasks: transferJournal.values.sorted { $0.id < $1.id },
                sessions: transferSessionJournal.values.sorted { $0.key < $1.key }, relaunches: transferRelaunchJournal))
    }

    /// The external app's process `pid`, adopted by a restarted daemon, attached again with what its SDK reports
    /// (did-finish-launching ran, the state it believes it is in, its open background tasks).
    public mutating func externalReattached(_ pid: Int32, report: AttachReport) throws(CoreError) {
        guard let process = processes[pid], externalApps.contains(process.app) else {
            throw CoreError(.appNotRunning, "no external app runs as pid \(pid)", fix: "attach the pid the launch gave")
        }
        processes[pid]?.attached = true
        perform(try core.attached(process.app, pid: pid, report: report, at: now))
    }
}
