import Foundation
import GRDB
import OffstageCore
import Synchronization

/// The history of scheduled work (SPEC SCH-8, decision 0044): one row per stretch a request waited for the same
/// reasons, one per run. Records come open and again closed: a row is written when it opens and brought up to date
/// when it closes. Times are nanoseconds since the epoch, so totals are exact.
///
/// Bounded: closed rows older than ``HistoryBounds/maximumAge`` go, and an app with more than
/// ``HistoryBounds/rowsPerApp`` rows in a table loses its oldest closed ones, so a busy app cannot grow the store
/// without bound.
extension OffstageStore {
    static let historyMigration = "v8: history of scheduled work"

    /// How much history is kept.
    public struct HistoryBounds: Hashable, Sendable {
        /// Seconds a closed record is kept. Default 7 days.
        public var maximumAge: Double
        /// Rows kept per app in each of the two tables (waits and runs). Default 5,000.
        public var rowsPerApp: Int

        /// Creates bounds.
        public init(maximumAge: Double = 7 * 86_400, rowsPerApp: Int = 5_000) {
            self.maximumAge = maximumAge
            self.rowsPerApp = max(10, rowsPerApp)
        }

        /// How often rows older than the maximum age are looked for, in seconds of record time.
        static let agePruneInterval: Double = 3_600
    }

    /// What the history tables hold for one app.
    public struct StoredHistory: Sendable {
        public var waits: [WaitRecord] = []
        public var runs: [RunRecord] = []
    }

    static func createHistoryTables(_ db: Database) throws {
        try db.create(table: "task_wait") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("app", .text).notNull()
            t.column("identifier", .text).notNull()
            t.column("kind", .text).notNull()
            t.column("startedAt", .integer).notNull()
            t.column("endedAt", .integer)
            // The reasons' stable names, comma-separated.
            t.column("reasons", .text).notNull()
            t.column("interrupted", .boolean).notNull().defaults(to: false)
            t.uniqueKey(["app", "identifier", "startedAt"])
        }
        try db.create(table: "task_run") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("app", .text).notNull()
            t.column("identifier", .text).notNull()
            t.column("kind", .text).notNull()
            t.column("run", .integer).notNull()
            t.column("startedAt", .integer).notNull()
            t.column("endedAt", .integer)
            t.column("forced", .boolean).notNull()
            t.column("start", .text).notNull()
            t.column("outcome", .text)
            t.column("result", .text)
            t.column("expiry", .text)
            t.column("detail", .text)
            t.uniqueKey(["app", "run", "startedAt"])
        }
        // Pruning by age, finding open rows and the newest end at start-up go by the end, not through every row.
        try db.create(index: "task_wait_endedAt", on: "task_wait", columns: ["endedAt"])
        try db.create(index: "task_run_endedAt", on: "task_run", columns: ["endedAt"])
    }

    /// Writes history records in order, in one transaction, then keeps the tables within their bounds. `now` is the
    /// daemon's clock, against which the maximum age is measured.
    public func appendHistory(_ records: [HistoryRecord], at now: Instant) throws {
        guard !records.isEmpty else { return }
        let bounds = historyBounds
        do {
            try appendHistory(records, now, bounds)
        } catch {
            // The transaction rolled back: the counts kept may be wrong; they are read again next time.
            historyRowCounts.withLock { $0 = nil }
            throw error
        }
    }

    private func appendHistory(_ records: [HistoryRecord], _ now: Instant, _ bounds: HistoryBounds) throws {
        try write(.history) { db in
            var counts = try historyCounts(db)
            for record in records {
                switch record {
                case .wait(let wait): try Self.write(wait, db, &counts)
                case .run(let run): try Self.write(run, db, &counts)
                }
            }
            let pruneAge = historyAgePrunedAt.withLock { last in
                guard last.map({ (now - $0).inSeconds >= HistoryBounds.agePruneInterval || now < $0 }) ?? true else {
                    return false
                }
                last = now
                return true
            }
            if pruneAge {
                let cutoff = (now - .seconds(double: bounds.maximumAge)).nanosecondsSinceEpoch
                try db.execute(sql: "DELETE FROM task_wait WHERE endedAt IS NOT NULL AND endedAt < ?", arguments: [cutoff])
                try db.execute(sql: "DELETE FROM task_run WHERE endedAt IS NOT NULL AND endedAt < ?", arguments: [cutoff])
                counts = try Self.countHistory(db)
            }
            for (key, count) in counts where count > bounds.rowsPerApp {
                // Down to nine tenths of the cap, so that the delete runs once per tenth of it, not on every insert.
                let excess = count - bounds.rowsPerApp + bounds.rowsPerApp / 10
                try db.execute(
                    sql: """
                        DELETE FROM \(key.table) WHERE id IN
                          (SELECT id FROM \(key.table) WHERE app = ? AND endedAt IS NOT NULL ORDER BY id LIMIT ?)
                        """,
                    arguments: [key.app, excess])
                counts[key] = count - db.changesCount
            }
            historyRowCounts.withLock { $0 = counts }
        }
    }

    /// The history of `app` that overlaps `[from, to]`: stretches and runs that end at or after `from` (or are open)
    /// and start at or before `to`.
    public func history(of app: AppID, from: Instant, to: Instant) throws -> StoredHistory {
        let (start, end) = (from.nanosecondsSinceEpoch, to.nanosecondsSinceEpoch)
        return try database.read { db in
            var stored = StoredHistory()
            let condition = "app = ? AND startedAt <= ? AND (endedAt IS NULL OR endedAt >= ?) ORDER BY startedAt, id"
            stored.waits = try Row.fetchAll(db, sql: "SELECT * FROM task_wait WHERE \(condition)", arguments: [app.rawValue, end, start])
                .compactMap(Self.wait(from:))
            stored.runs = try Row.fetchAll(db, sql: "SELECT * FROM task_run WHERE \(condition)", arguments: [app.rawValue, end, start])
                .compactMap(Self.run(from:))
            return stored
        }
    }

    /// After a restart: records the previous daemon left open (it stopped without closing them: a crash, a kill, a
    /// power loss) are closed at the last moment it is known to have been alive, its newest event-log entry or
    /// history record; the time after is not counted. Open runs end as stopped with the daemon. Returns how many
    /// were closed.
    @discardableResult
    public func closeInterruptedHistory() throws -> Int {
        try write(.history) { db in
            let lastEvent = try Double.fetchOne(db, sql: "SELECT at FROM event ORDER BY id DESC LIMIT 1")
                .map { Instant(secondsSinceEpoch: $0) }
            // Each part is read from the index on the end (open rows are few).
            let lastRecord = try Int64.fetchOne(
                db,
                sql: """
                    SELECT MAX(t) FROM (
                      SELECT MAX(endedAt) AS t FROM task_wait
                      UNION ALL SELECT MAX(startedAt) FROM task_wait WHERE endedAt IS NULL
                      UNION ALL SELECT MAX(endedAt) FROM task_run
                      UNION ALL SELECT MAX(startedAt) FROM task_run WHERE endedAt IS NULL)
                    """)
            let alive = max(lastEvent?.nanosecondsSinceEpoch ?? 0, lastRecord ?? 0)
            try db.execute(
                sql: "UPDATE task_wait SET endedAt = MAX(startedAt, ?), interrupted = 1 WHERE endedAt IS NULL",
                arguments: [alive])
            var closed = db.changesCount
            try db.execute(
                sql: """
                    UPDATE task_run SET endedAt = MAX(startedAt, ?), outcome = ?,
                      detail = 'the daemon stopped while it ran; closed when it started again' WHERE endedAt IS NULL
                    """,
                arguments: [alive, RunOutcome.daemonStopped.rawValue])
            closed += db.changesCount
            return closed
        }
    }

    // MARK: Rows

    struct HistoryCountKey: Hashable, Sendable {
        var table: String
        var app: String
    }

    /// The rows per app and table, read once and then kept up to date by the writes.
    func historyCounts(_ db: Database) throws -> [HistoryCountKey: Int] {
        if let counts = historyRowCounts.withLock({ $0 }) { return counts }
        return try Self.countHistory(db)
    }

    static func countHistory(_ db: Database) throws -> [HistoryCountKey: Int] {
        var counts: [HistoryCountKey: Int] = [:]
        for table in ["task_wait", "task_run"] {
            for row in try Row.fetchAll(db, sql: "SELECT app, COUNT(*) AS n FROM \(table) GROUP BY app") {
                counts[HistoryCountKey(table: table, app: row["app"])] = row["n"]
            }
        }
        return counts
    }

    static func write(_ wait: WaitRecord, _ db: Database, _ counts: inout [HistoryCountKey: Int]) throws {
        let key = HistoryCountKey(table: "task_wait", app: wait.app.rawValue)
        let start = wait.startedAt.nanosecondsSinceEpoch
        let end = wait.endedAt?.nanosecondsSinceEpoch
        let identity: StatementArguments = [wait.app.rawValue, wait.identifier, start]
        if end == start {
            // A stretch that lasted no time (it changed again at the same instant) is not history.
            try db.cachedStatement(sql: "DELETE FROM task_wait WHERE app = ? AND identifier = ? AND startedAt = ?").execute(arguments: identity)
            counts[key, default: 0] -= db.changesCount
            return
        }
        let reasons = wait.reasons.map(\.rawValue).joined(separator: ",")
        // Cached statements: at start-up every pending request opens a wait (10,000 at the §11 scale).
        try db.cachedStatement(
            sql: "UPDATE task_wait SET endedAt = ?, reasons = ?, kind = ?, interrupted = ? WHERE app = ? AND identifier = ? AND startedAt = ?"
        ).execute(arguments: [end, reasons, wait.kind.rawValue, wait.interrupted] + identity)
        guard db.changesCount == 0 else { return }
        try db.cachedStatement(
            sql: "INSERT INTO task_wait (app, identifier, startedAt, endedAt, reasons, kind, interrupted) VALUES (?, ?, ?, ?, ?, ?, ?)"
        ).execute(arguments: identity + [end, reasons, wait.kind.rawValue, wait.interrupted])
        counts[key, default: 0] += 1
    }

    static func write(_ run: RunRecord, _ db: Database, _ counts: inout [HistoryCountKey: Int]) throws {
        let identity: StatementArguments = [run.app.rawValue, Int64(bitPattern: run.run), run.startedAt.nanosecondsSinceEpoch]
        let fields: StatementArguments = [
            run.identifier, run.kind.rawValue, run.endedAt?.nanosecondsSinceEpoch, run.forced, run.start.rawValue,
            run.outcome?.rawValue, run.result?.rawValue, run.expiry?.rawValue, run.detail,
        ]
        try db.cachedStatement(
            sql: """
                UPDATE task_run SET identifier = ?, kind = ?, endedAt = ?, forced = ?, start = ?, outcome = ?, result = ?,
                  expiry = ?, detail = ? WHERE app = ? AND run = ? AND startedAt = ?
                """
        ).execute(arguments: fields + identity)
        guard db.changesCount == 0 else { return }
        try db.cachedStatement(
            sql: """
                INSERT INTO task_run (identifier, kind, endedAt, forced, start, outcome, result, expiry, detail, app, run, startedAt)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: fields + identity)
        counts[HistoryCountKey(table: "task_run", app: run.app.rawValue), default: 0] += 1
    }

    /// A row of `task_wait`; nil for one this version cannot read (a kind or reason it does not know).
    static func wait(from row: Row) -> WaitRecord? {
        guard let kind = TaskKind(rawValue: row["kind"]) else { return nil }
        let names = (row["reasons"] as String).split(separator: ",").map(String.init)
        let reasons = names.compactMap(WaitReason.init(rawValue:))
        guard reasons.count == names.count else { return nil }
        return WaitRecord(
            app: AppID(row["app"]), identifier: row["identifier"], kind: kind,
            startedAt: Instant(nanosecondsSinceEpoch: row["startedAt"]),
            endedAt: (row["endedAt"] as Int64?).map { Instant(nanosecondsSinceEpoch: $0) }, reasons: reasons,
            interrupted: row["interrupted"])
    }

    /// A row of `task_run`; nil for one this version cannot read.
    static func run(from row: Row) -> RunRecord? {
        guard let kind = TaskKind(rawValue: row["kind"]), let start = RunStart(rawValue: row["start"]) else { return nil }
        var run = RunRecord(
            app: AppID(row["app"]), identifier: row["identifier"], kind: kind, run: UInt64(bitPattern: row["run"] as Int64),
            startedAt: Instant(nanosecondsSinceEpoch: row["startedAt"]), forced: row["forced"], start: start)
        run.endedAt = (row["endedAt"] as Int64?).map { Instant(nanosecondsSinceEpoch: $0) }
        run.outcome = (row["outcome"] as String?).flatMap(RunOutcome.init(rawValue:))
        run.result = (row["result"] as String?).flatMap(TaskResult.init(rawValue:))
        run.expiry = (row["expiry"] as String?).flatMap(RunExpiry.init(rawValue:))
        run.detail = row["detail"]
        return run
    }
}
