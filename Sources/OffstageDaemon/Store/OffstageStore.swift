import Foundation
import GRDB
import OffstageCore
import Synchronization

/// The daemon's durable state in SQLite (WAL, one writer, named migrations): installed apps and their settings,
/// the device state, the processes it started (to re-adopt them after a crash), and a bounded event log.
///
/// Writes are synchronous and small, made from the daemon's event loop in the order the core's actions come,
/// so "persist, then act" holds: an action that depends on a write runs only after the write committed.
/// WAL with `synchronous=NORMAL` survives a crash or `kill -9` of the daemon (not a power loss of the last
/// commits, which a phone OS tolerates for these records).
public final class OffstageStore: Sendable {
    let database: DatabasePool
    /// Rows of the event log kept; older rows are deleted.
    public let eventLogCapacity: Int
    /// Where each write transaction's duration goes (`offstage_store_write_seconds`); nil records nothing.
    let metrics: DaemonMetrics?
    /// Pushes finished since the push records were last counted for trimming.
    let pushesFinishedSinceTrim = Atomic<Int>(0)
    /// How much history of scheduled work is kept (SPEC SCH-8).
    public let historyBounds: HistoryBounds
    /// When history rows were last pruned by age.
    let historyAgePrunedAt = Mutex<Instant?>(nil)
    /// History rows per app and table, once counted; nil until then (and after anything deleted rows wholesale).
    let historyRowCounts = Mutex<[HistoryCountKey: Int]?>(nil)

    /// Opens (creating if needed) the store at `path` and runs pending migrations. With `metrics`, every write
    /// transaction is timed.
    public init(
        path: String, eventLogCapacity: Int = 100_000, historyBounds: HistoryBounds = .init(), metrics: DaemonMetrics? = nil
    ) throws {
        self.metrics = metrics
        self.historyBounds = historyBounds
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        configuration.label = "offstage.store"
        // Another connection's write (a daemon that is still going down, a tool reading the store) makes this one wait
        // for it a while instead of failing with "database is locked".
        configuration.busyMode = .timeout(5)
        // Read connections stay open once made (`releaseMemory` then frees their caches only): closing one disposes of
        // its dispatch queue, which starts libdispatch's worker pool, whose monitor wakes the daemon every second for
        // the rest of its life (§11: an idle daemon wakes 0 times).
        configuration.persistentReadOnlyConnections = true
        database = try DatabasePool(path: path, configuration: configuration)
        self.eventLogCapacity = max(100, eventLogCapacity)
        try Self.migrator.migrate(database)
    }

    /// Frees SQLite's page caches, the read connections' too (they stay open): after the start-up has read the whole
    /// store back.
    public func releaseMemory() {
        database.releaseMemory()
    }

    /// Runs `body` in a write transaction, timed on the monotonic clock as a write of `kind`.
    func write<Result>(_ kind: StoreWrite, _ body: (Database) throws -> Result) throws -> Result {
        guard let metrics else { return try database.write(body) }
        let start = DaemonMetrics.monotonicNanoseconds()
        defer { metrics.storeWrote(kind, nanoseconds: DaemonMetrics.monotonicNanoseconds() - start) }
        return try database.write(body)
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: apps, device, processes, events, meta") { db in
            try db.create(table: "app") { t in
                t.primaryKey("id", .text)
                t.column("manifest", .text).notNull()
                t.column("bundlePath", .text).notNull()
                t.column("installedAt", .double).notNull()
                t.column("settings", .text).notNull()
                t.column("durable", .text).notNull()
                t.column("sourceExecutable", .text)
            }
            try db.create(table: "device") { t in
                t.primaryKey("id", .integer).check { $0 == 1 }
                t.column("state", .text).notNull()
            }
            try db.create(table: "process") { t in
                t.primaryKey("appID", .text)
                t.column("pid", .integer).notNull()
                t.column("startTime", .integer).notNull()
                t.column("startedAt", .double).notNull()
            }
            try db.create(table: "event") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("at", .double).notNull()
                t.column("app", .text)
                t.column("kind", .text).notNull()
                t.column("message", .text).notNull()
                t.column("state", .text)
            }
            try db.create(index: "event_app", on: "event", columns: ["app", "id"])
            try db.create(table: "meta") { t in
                t.primaryKey("key", .text)
                t.column("value", .text).notNull()
            }
        }
        migrator.registerMigration(notificationsMigration, migrate: createNotificationTables)
        migrator.registerMigration(pushMigration, migrate: createPushTables)
        migrator.registerMigration(webPushMigration, migrate: createWebPushTables)
        migrator.registerMigration(pushAcceptedAtMigration) { db in
            try db.create(index: "push_inbox_app_acceptedAt", on: "push_inbox", columns: ["app", "acceptedAt"])
        }
        migrator.registerMigration(transferMigration, migrate: createTransferTables)
        migrator.registerMigration(transferResponseBodyMigration, migrate: addTransferResponseBodies)
        migrator.registerMigration(historyMigration, migrate: createHistoryTables)
        migrator.registerMigration(usageMigration, migrate: createUsageTables)
        migrator.registerMigration("process ending") { db in
            try db.alter(table: "process") { t in t.add(column: "ending", .text) }
        }
        return migrator
    }

    // MARK: Apps

    /// One row of the app table, as stored.
    struct AppRow: Sendable {
        var manifest: String
        var bundlePath: String
        var installedAt: Double
        var settings: String
        var durable: String
        var sourceExecutable: String?

        func decoded() throws -> (InstalledApp, AppDurableState) {
            let app = InstalledApp(
                manifest: try decode(Manifest.self, manifest), bundlePath: bundlePath,
                installedAt: Instant(secondsSinceEpoch: installedAt), settings: try decode(AppSettings.self, settings),
                sourceExecutable: sourceExecutable)
            return (app, try decode(AppDurableState.self, durable))
        }
    }

    /// Every installed app with its durable state, sorted by id.
    ///
    /// Decoding the JSON is most of a daemon's start with many apps (about 120 µs an app with ten requests), so rows
    /// are decoded on up to `threads` threads at once when there are enough of them to be worth it.
    public func loadApps(threads: Int = ProcessInfo.processInfo.activeProcessorCount) throws -> [(InstalledApp, AppDurableState)] {
        let rows = try database.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM app ORDER BY id").map { row in
                AppRow(
                    manifest: row["manifest"], bundlePath: row["bundlePath"], installedAt: row["installedAt"],
                    settings: row["settings"], durable: row["durable"], sourceExecutable: row["sourceExecutable"])
            }
        }
        return try ParallelDecoding.map(rows, threads: threads) { try $0.decoded() }
    }

    /// Saves several apps and, if given, the device state in one transaction (the state an input changed).
    ///
    /// - Parameter endedProcesses: Processes whose exit this state records, forgotten in the same transaction: a daemon
    ///   killed between the two would otherwise lose the record of the exit (SPEC LC-8, MEM-1) — the process's row gone,
    ///   the app's last exit not written.
    public func save(
        apps: [(InstalledApp, AppDurableState)], device: DeviceState?, endedProcesses: [(app: AppID, pid: Int32)] = []
    ) throws {
        guard !apps.isEmpty || device != nil || !endedProcesses.isEmpty else { return }
        let rows = try apps.map { app, durable in
            [
                app.id.rawValue, try encode(app.manifest), app.bundlePath, app.installedAt.secondsSinceEpoch,
                try encode(app.settings), try encode(durable), app.sourceExecutable,
            ] as StatementArguments
        }
        let deviceText = try device.map { try encode($0) }
        try write(.state) { db in
            let statement = try db.cachedStatement(
                sql: """
                    INSERT INTO app (id, manifest, bundlePath, installedAt, settings, durable, sourceExecutable)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(id) DO UPDATE SET manifest = excluded.manifest, bundlePath = excluded.bundlePath,
                      installedAt = excluded.installedAt, settings = excluded.settings, durable = excluded.durable,
                      sourceExecutable = excluded.sourceExecutable
                    """)
            for arguments in rows { try statement.execute(arguments: arguments) }
            for (app, pid) in endedProcesses {
                try db.execute(sql: "DELETE FROM process WHERE appID = ? AND pid = ?", arguments: [app.rawValue, pid])
            }
            if let deviceText {
                try db.cachedStatement(sql: "INSERT OR REPLACE INTO device (id, state) VALUES (1, ?)")
                    .execute(arguments: [deviceText])
            }
        }
    }

    /// Removes an app and every row that belongs to it.
    public func deleteApp(_ id: AppID) throws {
        try write(.uninstall) { db in
            try db.execute(sql: "DELETE FROM app WHERE id = ?", arguments: [id.rawValue])
            try db.execute(sql: "DELETE FROM process WHERE appID = ?", arguments: [id.rawValue])
            try Self.deleteNotifications(of: id, in: db)
            try db.execute(sql: "DELETE FROM task_wait WHERE app = ?", arguments: [id.rawValue])
            try db.execute(sql: "DELETE FROM task_run WHERE app = ?", arguments: [id.rawValue])
        }
        historyRowCounts.withLock { counts in
            counts?[HistoryCountKey(table: "task_wait", app: id.rawValue)] = nil
            counts?[HistoryCountKey(table: "task_run", app: id.rawValue)] = nil
        }
    }

    // MARK: Device

    /// The device state saved last, if any.
    public func loadDevice() throws -> DeviceState? {
        try database.read { db in
            guard let text = try String.fetchOne(db, sql: "SELECT state FROM device WHERE id = 1") else { return nil }
            return try decode(DeviceState.self, text)
        }
    }


    // MARK: Processes

    /// A process the daemon started, kept so a restarted daemon can find it (SPEC LC-8).
    public struct ProcessRecord: Hashable, Sendable {
        /// The app.
        public var app: AppID
        /// Its pid.
        public var pid: Int32
        /// The kernel's start time of the process (guards against a reused pid).
        public var startTime: UInt64
        /// When it was started.
        public var startedAt: Instant
        /// Why the daemon sent it SIGKILL, written before the signal (``OffstageStore/setProcessEnding(of:pid:_:)``):
        /// a daemon killed before it saw the exit leaves the reason to the next (SPEC MEM-1, LC-8).
        public var ending: TerminationReason?

        /// Creates a record.
        public init(app: AppID, pid: Int32, startTime: UInt64, startedAt: Instant, ending: TerminationReason? = nil) {
            self.app = app
            self.pid = pid
            self.startTime = startTime
            self.startedAt = startedAt
            self.ending = ending
        }
    }

    /// Every recorded process.
    public func loadProcesses() throws -> [ProcessRecord] {
        try database.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM process ORDER BY appID").map { row in
                ProcessRecord(
                    app: AppID(row["appID"]), pid: row["pid"], startTime: UInt64(row["startTime"] as Int64),
                    startedAt: Instant(secondsSinceEpoch: row["startedAt"]),
                    // A reason this version cannot read is left out: the process is then only known to be gone.
                    ending: (row["ending"] as String?).flatMap { try? decode(TerminationReason.self, $0) })
            }
        }
    }

    /// Records a started process.
    public func saveProcess(_ record: ProcessRecord) throws {
        try write(.process) { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO process (appID, pid, startTime, startedAt) VALUES (?, ?, ?, ?)",
                arguments: [record.app.rawValue, record.pid, Int64(record.startTime), record.startedAt.secondsSinceEpoch])
        }
    }

    /// Writes why the daemon is about to send the process SIGKILL, before it does; nil clears it (the process was found
    /// alive by a restarted daemon, which decides afresh).
    public func setProcessEnding(of app: AppID, pid: Int32, _ reason: TerminationReason?) throws {
        let text = try reason.map { try encode($0) }
        try write(.process) { db in
            try db.execute(
                sql: "UPDATE process SET ending = ? WHERE appID = ? AND pid = ?", arguments: [text, app.rawValue, pid])
        }
    }

    // MARK: Event log

    /// Appends entries in one transaction and trims the log to its capacity; returns the ids given.
    @discardableResult
    public func appendLog(_ entries: [LogEntry]) throws -> [Int64] {
        guard !entries.isEmpty else { return [] }
        let capacity = Int64(eventLogCapacity)
        return try write(.log) { db in
            var ids: [Int64] = []
            ids.reserveCapacity(entries.count)
            let statement = try db.cachedStatement(
                sql: "INSERT INTO event (at, app, kind, message, state) VALUES (?, ?, ?, ?, ?)")
            for entry in entries {
                try statement.execute(arguments: [
                    entry.at.secondsSinceEpoch, entry.app?.rawValue, entry.kind.rawValue, entry.message,
                    entry.state?.rawValue,
                ])
                ids.append(db.lastInsertedRowID)
            }
            // Trim in steps so the delete runs once per thousand rows, not on every insert.
            if let last = ids.last, last % 1000 < Int64(entries.count), last > capacity {
                try db.execute(sql: "DELETE FROM event WHERE id <= ?", arguments: [last - capacity])
            }
            return ids
        }
    }

    /// Log entries with id greater than `after`, oldest first; the last `limit` if given.
    public func readLog(app: AppID? = nil, after: Int64 = 0, limit: Int? = nil) throws -> [(Int64, LogEntry)] {
        try database.read { db in
            var sql = "SELECT * FROM event WHERE id > ?"
            var arguments: StatementArguments = [after]
            if let app {
                sql += " AND app = ?"
                arguments += [app.rawValue]
            }
            if let limit {
                sql = "SELECT * FROM (\(sql) ORDER BY id DESC LIMIT ?) ORDER BY id"
                arguments += [limit]
            } else {
                sql += " ORDER BY id"
            }
            return try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in
                let kind = LogEntry.Kind(rawValue: row["kind"]) ?? .warning
                let state = (row["state"] as String?).flatMap(ApplicationState.init(rawValue:))
                let entry = LogEntry(
                    at: Instant(secondsSinceEpoch: row["at"]), app: (row["app"] as String?).map { AppID($0) },
                    kind: kind, message: row["message"], state: state)
                return (row["id"] as Int64, entry)
            }
        }
    }

    // MARK: Meta

    /// A small named value (for example the next number seed).
    public func meta(_ key: String) throws -> String? {
        try database.read { db in try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = ?", arguments: [key]) }
    }

    /// Sets a small named value.
    public func setMeta(_ key: String, _ value: String) throws {
        try write(.meta) { db in
            try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", arguments: [key, value])
        }
    }
}

private func encode<Value: Encodable>(_ value: Value) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}

private func decode<Value: Decodable>(_ type: Value.Type, _ text: String) throws -> Value {
    try JSONDecoder().decode(type, from: Data(text.utf8))
}

/// Decoding the store's rows on several threads at start-up: plain threads that end when done (not the global
/// dispatch queues, which would leave libdispatch's once-a-second monitor running for the daemon's life).
enum ParallelDecoding {
    /// Rows per thread below which a thread is not worth starting.
    static let minimumChunk = 64

    /// `transform` of every element, in order, computed on up to `threads` threads (the calling one included). The
    /// first error thrown is rethrown once every thread has finished.
    static func map<Element: Sendable, Result: Sendable>(
        _ elements: [Element], threads: Int, _ transform: @escaping @Sendable (Element) throws -> Result
    ) throws -> [Result] {
        let count = min(max(1, threads), max(1, elements.count / minimumChunk))
        guard count > 1 else { return try elements.map(transform) }
        let chunk = (elements.count + count - 1) / count
        let slices = stride(from: 0, to: elements.count, by: chunk).map { Array(elements[$0..<min($0 + chunk, elements.count)]) }
        let outcomes = Mutex<[Int: Swift.Result<[Result], any Error>]>([:])
        let finished = NSCondition()
        for index in 1..<slices.count {
            let slice = slices[index]
            let thread = Thread {
                let outcome = Swift.Result { try slice.map(transform) }
                outcomes.withLock { $0[index] = outcome }
                finished.lock()
                finished.broadcast()
                finished.unlock()
            }
            thread.name = "offstage-load"
            thread.start()
        }
        let first = Swift.Result { try slices[0].map(transform) }
        outcomes.withLock { $0[0] = first }
        finished.lock()
        while outcomes.withLock({ $0.count }) < slices.count { finished.wait() }
        finished.unlock()
        let all = outcomes.withLock { $0 }
        var results: [Result] = []
        results.reserveCapacity(elements.count)
        for index in 0..<slices.count { results += try all[index]!.get() }
        return results
    }
}
