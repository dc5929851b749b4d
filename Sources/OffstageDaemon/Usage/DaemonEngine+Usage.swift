import NIOCore
import OffstageCore
import OffstageProtocol

/// What each app used (SPEC SET-3): the core's usage changes go to the recorder with where each app's counters are;
/// `io.offstage.Control.Usage` reads them back.
extension DaemonEngine {
    /// Hands the core's change to the recorder, with each app's group and main process as they are now.
    func recordUsage(_ change: UsageChange) {
        var sources: [AppID: UsageRecorder.Source] = [:]
        for id in change.contexts.keys {
            guard let group = groups[id] else { continue }
            sources[id] = UsageRecorder.Source(group: group, leader: core.apps[id]?.process?.pid)
        }
        usage.record(change, sources: sources)
    }

    /// `io.offstage.Control.ListApps`: the apps as the core has them now, with the memory of those that run at its
    /// latest reading (SPEC SET-3).
    func listApps(_ responder: VarlinkResponder) {
        let memory = usage.latestMemory()
        responder.reply(ControlInterface.AppsReply(apps: core.statuses(at: now).map { status in
            ControlInterface.App(status, memoryBytes: status.pid == nil ? nil : memory[status.id])
        }))
    }
}

extension DaemonEngine {
    /// `io.offstage.Control.Usage`: the core checks the query and says where it starts; the recorder reads the running
    /// apps' counters and the store, off the loop; the reply is made on the loop with each app's switches.
    func usageReport(_ parameters: ControlInterface.UsageParameters, responder: VarlinkResponder) throws(VarlinkError) {
        let id = try parameters.app.map { text throws(VarlinkError) in try appID(text) }
        let now = now
        let since = try parameters.since.map { seconds throws(VarlinkError) in
            try VarlinkError.checking { () throws(NumberOutOfRange) in
                try CheckedNumber.instant(secondsSinceEpoch: seconds, field: "since")
            }
        }
        let window = try query { () throws(CoreError) in try core.usageWindow(id, since: since, at: now) }
        let usage = usage
        eventLoop.makeFutureWithTask { try await usage.usage(of: id, fromDay: window.firstDay, at: now) }
            .whenComplete { [self] result in
                switch result {
                case .success(let stored):
                    responder.reply(usageReply(stored, app: id, from: window.from, to: now))
                case .failure(let error):
                    responder.fail(failed("cannot read the usage: \(error)", fix: "check the state folder \(paths.root)"))
                }
            }
    }

    private func usageReply(_ stored: OffstageStore.StoredUsage, app: AppID?, from: Instant, to now: Instant) -> ControlInterface.UsageReply {
        let today = core.localDay(now)
        // Every app comes summed over the window (a thousand apps over a month stay a small reply); one app by day.
        let shown = stored
        let ids = app.map { [$0] } ?? core.apps.keys.sorted()
        let apps = ids.compactMap { id -> ControlInterface.UsageApp? in
            guard let entry = core.apps[id] else { return nil }
            let memory = entry.process == nil ? nil : stored.memory[UsageDay(app: id, day: today)]?.last
            return ControlInterface.UsageApp(id, entry.app.settings, state: entry.state, memoryBytes: memory)
        }
        return ControlInterface.UsageReply(
            from: from.secondsSinceEpoch, to: now.secondsSinceEpoch, daysKept: usage.settings.daysKept,
            bytesCounted: network.status.state == "advisory" ? "advisory" : "enforced",
            rows: shown.figures.sorted { $0.key < $1.key }.map { ControlInterface.UsageRow($0.key, $0.value, summed: app == nil) },
            memory: shown.memory.sorted { $0.key < $1.key }.map { ControlInterface.UsageMemory($0.key, $0.value, summed: app == nil) },
            apps: apps)
    }
}
