import Foundation
import OffstageProtocol
import OffstageCore

/// Plain-text layouts for people.
enum Table {
    static func apps(_ apps: [ControlInterface.App]) -> String {
        guard !apps.isEmpty else { return "no apps installed" }
        var rows = [["ID", "STATE", "PID", "MEMORY", "BAND", "TASKS", "REMAINING", "MODES", "LAST EXIT"]]
        for app in apps {
            let remaining = app.backgroundTimeRemaining.map { String(format: "%.1f s", $0) } ?? "-"
            var state = app.state
            if app.terminating != nil { state += " (terminating)" }
            if app.forceQuit { state += " (force-quit)" }
            rows.append([
                app.id, state, app.pid.map(String.init) ?? "-", app.memoryBytes.map(bytes) ?? "-", band(app), String(app.backgroundTasks), remaining,
                app.activeModes.isEmpty ? "-" : app.activeModes.joined(separator: ","), app.lastTermination ?? "-",
            ])
        }
        let continued = apps.flatMap { app in app.continuedTasks.map { "  \(app.id) \(continuedLine($0))" } }
        guard !continued.isEmpty else { return layout(rows) }
        return layout(rows) + "\ncontinued processing:\n" + continued.joined(separator: "\n")
    }

    /// `suspended #1`: the app's band for memory and its place in the order apps are ended when memory stays short
    /// (SPEC MEM-1), `kept` when the user keeps it in memory; `-` when it does not run.
    static func band(_ app: ControlInterface.App) -> String {
        guard let band = app.memoryBand else { return "-" }
        return band + (app.memoryEndingRank.map { " #\($0)" } ?? "") + (app.keptInMemory && band != "foreground" ? " kept" : "")
    }

    /// `com.example.export.1 'Exporting photos' 42 % (21 of 50), running`.
    static func continuedLine(_ task: ControlInterface.ContinuedTaskMessage) -> String {
        let done = ContinuedProgress.description(completed: task.completed, total: task.total)
        let subtitle = task.subtitle.isEmpty ? "" : " — \(QuotedText.quote(task.subtitle))"
        return "\(task.identifier) \(QuotedText.quote(task.title))\(subtitle) \(done), \(task.state)"
            + (task.endedBecause.map { ": \($0)" } ?? "")
    }

    static func settings(_ settings: [ControlInterface.Setting]) -> String {
        layout(settings.map { [$0.name, $0.value ? "on" : "off", $0.summary] })
    }

    static func logLine(_ entry: ControlInterface.LogLine) -> String {
        let date = Date(timeIntervalSince1970: entry.at)
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss.SSS"
        let app = entry.app.map { " " + $0 } ?? ""
        return "\(formatter.string(from: date))\(app)  \(entry.kind): \(entry.message)"
    }

    static func layout(_ rows: [[String]]) -> String {
        guard let columns = rows.map(\.count).max() else { return "" }
        var widths = Array(repeating: 0, count: columns)
        for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index] + 2, withPad: " ", startingAt: 0)
            }.joined()
        }.joined(separator: "\n")
    }
}
