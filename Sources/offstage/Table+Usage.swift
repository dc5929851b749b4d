import Foundation
import OffstageCore
import OffstageProtocol

/// `offstage usage` (SPEC SET-3), laid out as the phones' usage screens: the heaviest app first, its switches beside
/// its figures.
extension Table {
    /// One app's figures over the window.
    struct AppUsage {
        var figures = UsageFigures()
        var metered: Int64 = 0
        var background: Int64 = 0
        var backgroundCPU: Int64 = 0
        var backgroundSeconds: Double = 0
        var peak: Int64?

        mutating func add(_ row: ControlInterface.UsageRow) {
            let figures = row.figures
            self.figures.add(figures)
            if row.metered { metered += figures.bytes }
            if !row.foreground {
                background += figures.bytes
                backgroundCPU += figures.cpuMicroseconds
                backgroundSeconds += figures.seconds
            }
        }

        /// Adds another app's, or another day's.
        mutating func add(_ other: AppUsage) {
            figures.add(other.figures)
            metered += other.metered
            background += other.background
            backgroundCPU += other.backgroundCPU
            backgroundSeconds += other.backgroundSeconds
            if let peak = other.peak { self.peak = max(self.peak ?? 0, peak) }
        }

        func cells(memoryNow: Int64?) -> [String] {
            [
                bytes(figures.bytes), bytes(metered), bytes(background), cpu(figures.cpuMicroseconds), cpu(backgroundCPU),
                duration(backgroundSeconds), String(figures.wakeUps), memoryNow.map(bytes) ?? "-", peak.map(bytes) ?? "-",
            ]
        }
    }

    static let usageColumns = ["DATA", "METERED", "BACKGROUND", "CPU", "BG CPU", "BG TIME", "WAKE-UPS", "MEMORY", "PEAK"]

    static func usage(_ reply: ControlInterface.UsageReply, sortedBy sort: UsageSort) -> String {
        var apps: [String: AppUsage] = [:]
        for app in reply.apps { apps[app.app] = AppUsage() }
        for row in reply.rows { apps[row.app, default: AppUsage()].add(row) }
        for memory in reply.memory { apps[memory.app, default: AppUsage()].peak = max(apps[memory.app]?.peak ?? 0, memory.peakBytes) }
        let now = Dictionary(reply.apps.map { ($0.app, $0) }, uniquingKeysWith: { first, _ in first })
        guard !apps.isEmpty else { return header(reply) + "\nno apps installed" }
        func weight(_ id: String) -> Double {
            let usage = apps[id] ?? AppUsage()
            switch sort {
            case .data: return Double(usage.figures.bytes)
            case .cpu: return Double(usage.figures.cpuMicroseconds)
            case .wakeups: return Double(usage.figures.wakeUps)
            case .memory: return Double(now[id]?.memoryBytes ?? usage.peak ?? 0)
            }
        }
        let order = apps.keys.sorted { weight($0) != weight($1) ? weight($0) > weight($1) : $0 < $1 }
        var rows = [["APP"] + usageColumns + ["SWITCHES"]]
        var total = AppUsage()
        var memoryTotal: Int64 = 0
        for id in order {
            let usage = apps[id] ?? AppUsage()
            rows.append([id] + usage.cells(memoryNow: now[id]?.memoryBytes) + [switches(now[id])])
            total.add(usage)
            memoryTotal += now[id]?.memoryBytes ?? 0
        }
        var totals = total.cells(memoryNow: memoryTotal)
        // A peak of the sum was never read: the peaks of different apps came at different times.
        totals[8] = "-"
        rows.append(["total"] + totals)
        return header(reply) + "\n" + layout(rows)
    }

    static func usageByDay(_ reply: ControlInterface.UsageReply) -> String {
        guard let app = reply.apps.first else { return header(reply) }
        var days: [String: AppUsage] = [:]
        for row in reply.rows where row.app == app.app { days[row.date ?? "window", default: AppUsage()].add(row) }
        for memory in reply.memory where memory.app == app.app { days[memory.date ?? "window", default: AppUsage()].peak = memory.peakBytes }
        // Day by day there is no memory now: only each day's peak.
        func dayCells(_ usage: AppUsage) -> [String] { usage.cells(memoryNow: nil).enumerated().filter { $0.offset != 7 }.map(\.element) }
        var rows = [["DATE"] + usageColumns.filter { $0 != "MEMORY" }]
        var total = AppUsage()
        for date in days.keys.sorted() {
            let usage = days[date] ?? AppUsage()
            rows.append([date] + dayCells(usage))
            total.add(usage)
        }
        var lines = [header(reply), "\(app.app) (\(app.state)): \(switches(app, all: true))"]
        if days.isEmpty {
            lines.append("nothing used in the window")
        } else {
            rows.append(["total"] + dayCells(total))
            lines.append(layout(rows))
        }
        lines.append("memory now: " + (app.memoryBytes.map(bytes) ?? "- (not running)"))
        return lines.joined(separator: "\n")
    }

    /// `usage from 2026-10-31 09:00 to 2026-11-29 10:12; bytes of the apps' own sockets counted`.
    static func header(_ reply: ControlInterface.UsageReply) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        let from = formatter.string(from: Date(timeIntervalSince1970: reply.from))
        let to = formatter.string(from: Date(timeIntervalSince1970: reply.to))
        let counted = reply.bytesCounted == "enforced"
            ? "bytes of the apps' own sockets counted"
            : "bytes of the apps' own sockets not counted (data controls advisory: see offstage status)"
        return "usage from \(from) to \(to); \(counted); \(reply.daysKept) days kept"
    }

    /// The switches that differ from the defaults (or all of them, for one app).
    static func switches(_ app: ControlInterface.UsageApp?, all: Bool = false) -> String {
        guard let app else { return "-" }
        let states: [(String, Bool, Bool)] = [
            ("background-data", app.backgroundData, true), ("unrestricted-data", app.unrestrictedData, false),
            ("background-activity", app.backgroundActivity, true), ("background-refresh", app.backgroundRefresh, true),
            ("kept-in-memory", app.keptInMemory, false),
        ]
        let shown = states.filter { all || $0.1 != $0.2 }.map { "\($0.0) \($0.1 ? "on" : "off")" }
        return shown.isEmpty ? "defaults" : shown.joined(separator: ", ")
    }

    /// `1.25 s`, `3 min 20 s`, `2 h 05 min`.
    static func cpu(_ microseconds: Int64) -> String { duration(Double(microseconds) / 1_000_000) }

    static func duration(_ seconds: Double) -> String {
        if seconds < 60 { return String(format: "%.2f s", seconds) }
        let whole = Int(seconds.rounded())
        if whole < 3_600 { return "\(whole / 60) min \(whole % 60) s" }
        return String(format: "%d h %02d min", whole / 3_600, whole % 3_600 / 60)
    }
}
