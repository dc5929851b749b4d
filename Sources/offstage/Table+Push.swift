import Foundation
import OffstageProtocol

/// Plain-text layouts of the push gateway.
extension Table {
    /// The gateway, the counts, each app's token, Web Push endpoint, held push and budget, then the records, newest first.
    static func pushStatus(_ reply: PushControlInterface.StatusReply, app: String?) -> String {
        let gateway = reply.gateway
        var sections: [String] = []
        if gateway.address.isEmpty {
            sections.append("gateway: off (the daemon runs without one: no app can register)")
        } else {
            let how = [gateway.tls ? "TLS" : "h2c", gateway.embedded ? "embedded" : "offstage-push"].joined(separator: ", ")
            sections.append("gateway: \(gateway.address) (\(how))")
            if let error = gateway.linkError { sections[0] += "\nlink down: \(error)" }
        }
        sections[0] +=
            "\ndevices connected: \(reply.connectedDevices); pushes stored: \(reply.stored), held over budget: \(reply.held)"
        if reply.apps.isEmpty {
            sections.append(app.map { "\($0) has not registered for remote notifications" } ?? "no app has registered")
        } else {
            var rows = [["APP", "TOKEN", "WEB PUSH ENDPOINT", "HELD", "BUDGET"]]
            for entry in reply.apps {
                rows.append([
                    entry.app, entry.token ?? "(not registered)", entry.webPushEndpoint ?? "-", entry.held ?? "-",
                    "\(entry.budget) wakes",
                ])
            }
            sections.append(layout(rows))
        }
        if reply.records.isEmpty {
            sections.append("no pushes\(app.map { " for \($0)" } ?? "")")
        } else {
            var rows = [["APNS-ID", "APP", "TYPE", "PRIORITY", "COLLAPSE", "ACCEPTED", "STATE", "OUTCOME"]]
            for record in reply.records {
                var outcome = record.outcome ?? "-"
                if let detail = record.detail, !detail.isEmpty { outcome += ": " + cell(detail, limit: 60) }
                rows.append([
                    record.id, record.app, record.type, String(record.priority), record.collapseId.map { cell($0) } ?? "-",
                    time(record.acceptedAt), record.state, outcome,
                ])
            }
            sections.append("pushes (\(reply.records.count), newest first):\n" + layout(rows))
        }
        return sections.joined(separator: "\n\n")
    }

    /// The provider keys.
    static func pushKeys(_ keys: [PushControlInterface.KeyMessage]) -> String {
        guard !keys.isEmpty else {
            return "no provider keys; add one with `offstage push-keys add --team-id TEAM --generate FILE`"
        }
        var rows = [["ID", "TEAM", "APPS", "ADDED"]]
        for key in keys {
            rows.append([key.id, key.teamId, key.topics?.joined(separator: ",") ?? "all", time(key.addedAt)])
        }
        return layout(rows)
    }
}
