import GRDB
import OffstageCore

/// What each app used, per day (SPEC SET-3, decision 0052): one row per app, day, foreground or background and
/// metered or not, whose figures only grow (each write adds), and one row of memory per app and day. Bounded: days
/// older than the days kept go at every write, and an app's rows go when it is uninstalled.
extension OffstageStore {
    static let usageMigration = "v9: usage per app and day"

    /// What the usage tables hold.
    public struct StoredUsage: Sendable, Equatable {
        public var figures: [UsageKey: UsageFigures] = [:]
        public var memory: [UsageDay: MemoryFigures] = [:]
    }

    static func createUsageTables(_ db: Database) throws {
        try db.create(table: "usage", options: .withoutRowID) { t in
            t.column("app", .text).notNull()
            t.column("day", .integer).notNull()
            t.column("foreground", .boolean).notNull()
            t.column("metered", .boolean).notNull()
            t.column("received", .integer).notNull()
            t.column("sent", .integer).notNull()
            t.column("transferReceived", .integer).notNull()
            t.column("transferSent", .integer).notNull()
            t.column("cpuMicroseconds", .integer).notNull()
            t.column("seconds", .double).notNull()
            t.column("wakeUps", .integer).notNull()
            t.primaryKey(["app", "day", "foreground", "metered"])
        }
        try db.create(index: "usage_day", on: "usage", columns: ["day"])
        try db.create(table: "usage_memory", options: .withoutRowID) { t in
            t.column("app", .text).notNull()
            t.column("day", .integer).notNull()
            t.column("last", .integer).notNull()
            t.column("peak", .integer).notNull()
            t.primaryKey(["app", "day"])
        }
        try db.create(index: "usage_memory_day", on: "usage_memory", columns: ["day"])
    }

    /// Adds figures and memory readings, and deletes the days before `firstDayKept`, in one transaction.
    public func addUsage(_ figures: [UsageKey: UsageFigures], memory: [UsageDay: MemoryFigures], firstDayKept: Int64) throws {
        try write(.usage) { db in
            for (key, add) in figures.sorted(by: { $0.key < $1.key }) where key.day >= firstDayKept {
                try db.execute(
                    sql: """
                        INSERT INTO usage (app, day, foreground, metered, received, sent, transferReceived, transferSent,
                            cpuMicroseconds, seconds, wakeUps) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        ON CONFLICT (app, day, foreground, metered) DO UPDATE SET
                            received = received + excluded.received, sent = sent + excluded.sent,
                            transferReceived = transferReceived + excluded.transferReceived,
                            transferSent = transferSent + excluded.transferSent,
                            cpuMicroseconds = cpuMicroseconds + excluded.cpuMicroseconds,
                            seconds = seconds + excluded.seconds, wakeUps = wakeUps + excluded.wakeUps
                        """,
                    arguments: [
                        key.app.rawValue, key.day, key.foreground, key.metered, add.received, add.sent, add.transferReceived,
                        add.transferSent, add.cpuMicroseconds, add.seconds, add.wakeUps,
                    ])
            }
            for (key, reading) in memory.sorted(by: { $0.key < $1.key }) where key.day >= firstDayKept {
                try db.execute(
                    sql: """
                        INSERT INTO usage_memory (app, day, last, peak) VALUES (?, ?, ?, ?)
                        ON CONFLICT (app, day) DO UPDATE SET last = excluded.last, peak = max(peak, excluded.peak)
                        """,
                    arguments: [key.app.rawValue, key.day, reading.last, reading.peak])
            }
            try db.execute(sql: "DELETE FROM usage WHERE day < ?", arguments: [firstDayKept])
            try db.execute(sql: "DELETE FROM usage_memory WHERE day < ?", arguments: [firstDayKept])
        }
    }

    /// The usage of one app (or every app) from `firstDay` on.
    public func usage(of app: AppID?, fromDay firstDay: Int64) throws -> StoredUsage {
        try database.read { db in
            var stored = StoredUsage()
            let filter = app == nil ? "" : " AND app = ?"
            var arguments: StatementArguments = [firstDay]
            if let app { arguments += [app.rawValue] }
            for row in try Row.fetchAll(db, sql: "SELECT * FROM usage WHERE day >= ?" + filter, arguments: arguments) {
                if let (key, figures) = Self.figures(row) { stored.figures[key] = figures }
            }
            for row in try Row.fetchAll(db, sql: "SELECT * FROM usage_memory WHERE day >= ?" + filter, arguments: arguments) {
                if let (key, memory) = Self.memory(row) { stored.memory[key] = memory }
            }
            return stored
        }
    }

    /// Every app's usage from `firstDay` on, summed by SQLite over the days: one figure per app, in front or not and
    /// metered or not (keyed by its latest day), and one memory per app (the last reading of its latest day, the peak
    /// of all). A thousand apps over a month are 124,000 rows: they are never brought into the daemon one by one.
    public func usageSummed(fromDay firstDay: Int64) throws -> StoredUsage {
        try database.read { db in
            var stored = StoredUsage()
            let figures = try Row.fetchCursor(
                db,
                sql: """
                    SELECT app, foreground, metered, MAX(day) AS day, SUM(received) AS received, SUM(sent) AS sent,
                        SUM(transferReceived) AS transferReceived, SUM(transferSent) AS transferSent,
                        SUM(cpuMicroseconds) AS cpuMicroseconds, SUM(seconds) AS seconds, SUM(wakeUps) AS wakeUps
                    FROM usage WHERE day >= ? GROUP BY app, foreground, metered
                    """,
                arguments: [firstDay])
            while let row = try figures.next() {
                if let (key, figures) = Self.figures(row) { stored.figures[key] = figures }
            }
            let memory = try Row.fetchCursor(
                db,
                sql: """
                    SELECT m.app AS app, m.day AS day, m.last AS last, p.peak AS peak FROM usage_memory m
                    JOIN (SELECT app, MAX(day) AS day, MAX(peak) AS peak FROM usage_memory WHERE day >= ? GROUP BY app) p
                    ON m.app = p.app AND m.day = p.day
                    """,
                arguments: [firstDay])
            while let row = try memory.next() {
                if let (key, memory) = Self.memory(row) { stored.memory[key] = memory }
            }
            return stored
        }
    }

    /// A row of `usage` (or of its sums, with the same column names); nil for an app id no longer valid.
    static func figures(_ row: Row) -> (UsageKey, UsageFigures)? {
        guard let id = AppID.validated(row["app"]) else { return nil }
        let key = UsageKey(app: id, day: row["day"], foreground: row["foreground"], metered: row["metered"])
        return (key, UsageFigures(
            received: row["received"], sent: row["sent"], transferReceived: row["transferReceived"],
            transferSent: row["transferSent"], cpuMicroseconds: row["cpuMicroseconds"], seconds: row["seconds"],
            wakeUps: row["wakeUps"]))
    }

    /// A row of `usage_memory` (or of its summary, with the same column names).
    static func memory(_ row: Row) -> (UsageDay, MemoryFigures)? {
        guard let id = AppID.validated(row["app"]) else { return nil }
        return (UsageDay(app: id, day: row["day"]), MemoryFigures(last: row["last"], peak: row["peak"]))
    }

    /// Deletes an uninstalled app's usage.
    public func deleteUsage(of app: AppID) throws {
        try write(.usage) { db in
            try db.execute(sql: "DELETE FROM usage WHERE app = ?", arguments: [app.rawValue])
            try db.execute(sql: "DELETE FROM usage_memory WHERE app = ?", arguments: [app.rawValue])
        }
    }
}
