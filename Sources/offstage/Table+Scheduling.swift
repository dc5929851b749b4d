import Foundation
import OffstageProtocol

/// Plain-text layouts of device conditions and scheduled work.
extension Table {
    static func device(_ reply: ControlInterface.DeviceReply) -> String {
        let conditions = reply.conditions
        let machine = reply.machine
        let overrides = reply.overrides
        func source(_ overridden: Bool, _ machine: String?) -> String {
            overridden ? "set by hand" : machine.map { "machine: \($0)" } ?? "machine cannot tell: default"
        }
        return layout([
            ["battery", "\(conditions.batteryLevel) %", source(overrides.batteryLevel != nil, machine.batteryLevel.map { "\($0) %" })],
            ["charging", conditions.charging ? "on" : "off", source(overrides.charging != nil, machine.charging.map { $0 ? "on" : "off" })],
            ["network", conditions.network, source(overrides.network != nil, machine.network)],
            ["idle", conditions.idle ? "on" : "off", overrides.idle != nil ? "set by hand" : "idle once locked long enough"],
            ["memory-pressure", conditions.memoryPressure, source(overrides.memoryPressure != nil, machine.memoryPressure)],
            ["thermal", conditions.thermalState, source(overrides.thermalState != nil, machine.thermalState)],
            ["low-power", conditions.lowPowerMode ? "on" : "off", "setting"],
            ["time-zone", reply.timeZone, "the machine's, or set by hand"],
        ])
    }

    static func tasks(_ tasks: [ControlInterface.TaskMessage]) -> String {
        guard !tasks.isEmpty else { return "no pending or running background work" }
        var rows = [["APP", "IDENTIFIER", "KIND", "STATE", "WHEN / WHY"]]
        for task in tasks {
            rows.append([task.app, task.identifier, task.kind, task.state, task.summary])
        }
        return layout(rows)
    }

    static func explain(_ reply: ControlInterface.ExplainReply, app: String) -> String {
        var lines: [String] = reply.modeHolds.map { "mode \($0)" }
        if let because = reply.suspendedBecause { lines.append("suspended: \(because)") }
        guard !reply.tasks.isEmpty || !reply.transfers.isEmpty else {
            return (lines + ["\(app) has no pending or running background work"]).joined(separator: "\n")
        }
        for task in reply.tasks {
            var head = "\(task.identifier) (\(task.kind), \(task.state))"
            if let earliest = task.earliestBegin { head += ", not before \(time(earliest))" }
            lines.append(head)
            if task.holds.isEmpty {
                if let planned = task.plannedAt {
                    lines.append("  planned for \(time(planned)): \(task.plannedReason ?? "")")
                } else {
                    lines.append("  \(task.summary)")
                }
            } else {
                for hold in task.holds { lines.append("  waiting [\(hold.controller)]: \(hold.reason)") }
            }
        }
        for transfer in reply.transfers {
            lines.append("transfer \(transfer.id) (\(transfer.kind) \(cell(transfer.url, limit: 120)), session \(cell(transfer.session)), \(transfer.state))")
            if transfer.holds.isEmpty {
                lines.append("  \(cell(transfer.summary, limit: 400))")
            } else {
                for hold in transfer.holds { lines.append("  waiting [\(hold.controller)]: \(cell(hold.reason, limit: 400))") }
            }
        }
        let c = reply.conditions
        lines.append(
            "device: battery \(c.batteryLevel) %, \(c.charging ? "charging" : "on battery"), network \(c.network), "
                + "\(c.idle ? "idle" : "in use")\(c.lowPowerMode ? ", low power mode" : "")"
                + (c.memoryPressure != "normal" ? ", memory pressure \(c.memoryPressure)" : "")
                + (c.thermalState != "nominal" ? ", thermal state \(c.thermalState)" : ""))
        return lines.joined(separator: "\n")
    }

    /// A local date and time for people.
    static func time(_ seconds: Double) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter.string(from: Date(timeIntervalSince1970: seconds))
    }
}
