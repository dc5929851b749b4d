import OffstageProtocol

/// What each app used (SPEC SET-3) after every restart: what `offstage usage` showed before a kill -9 is still there
/// after it (a query writes what was counted, and a write is never undone: a restart may lose only what was counted
/// since the last write, never a figure already shown), and no usage is kept for an app that is not installed.
extension CrashRun {
    /// A row's place: app, day, foreground or background, metered or not.
    static func usageKey(_ row: ControlInterface.UsageRow) -> String {
        "\(row.app) \(row.date ?? "window") \(row.foreground ? "foreground" : "background") \(row.metered ? "metered" : "unmetered")"
    }

    /// An uninstall (acknowledged or not) may delete the app's usage: what was seen of it is forgotten.
    func forgetUsage(of app: String) {
        usageSeen = usageSeen.filter { !$0.key.hasPrefix(app + " ") }
    }

    func checkUsage() throws {
        // A window that does not move during the run: the day before the run began, on.
        let reply = try daemon.json(["usage", "--since", usageSince], as: ControlInterface.UsageReply.self)
        let installed = Set(reply.apps.map(\.app))
        var now: [String: ControlInterface.UsageRow] = [:]
        for row in reply.rows {
            if !installed.contains(row.app) { violation("usage is kept for \(row.app), which is not installed") }
            now[Self.usageKey(row)] = row
        }
        for (key, before) in usageSeen.sorted(by: { $0.key < $1.key }) where installed.contains(before.app) {
            guard let after = now[key] else {
                violation("the usage of \(key) shown before the crash is gone")
                continue
            }
            let pairs: [(String, Double, Double)] = [
                ("bytes received", Double(before.received), Double(after.received)),
                ("bytes sent", Double(before.sent), Double(after.sent)),
                ("transfer bytes", Double(before.transferReceived + before.transferSent), Double(after.transferReceived + after.transferSent)),
                ("CPU", before.cpuSeconds, after.cpuSeconds),
                ("runtime", before.seconds, after.seconds),
                ("wake-ups", Double(before.wakeUps), Double(after.wakeUps)),
            ]
            for (what, was, is_) in pairs where is_ < was - 1e-6 {
                violation("the \(what) of \(key) went down from \(was) to \(is_) across the crash")
            }
        }
        usageSeen = now
        report.usageRows = now.count
        report.usageChecks += 1
    }
}
