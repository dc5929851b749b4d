import Foundation
import GRDB
import OffstageCore

/// The transfer journal (SPEC TR-6): one row per task from its creation until its app acknowledged its event, one per
/// session, and how often each app was launched for its transfers. A task's row is written before the app's call
/// returns, at every checkpoint (its bytes and validator), and before its file is handed over, so a kill -9 of the
/// daemon at any point loses no task and no finished file.
extension OffstageStore {
    static let transferMigration = "v6: transfer tasks, sessions, relaunches"
    static let transferResponseBodyMigration = "v7: transfer upload response bodies"

    static func createTransferTables(_ db: Database) throws {
        try db.create(table: "transfer_task") { t in
            t.primaryKey("id", .integer)
            t.column("app", .text).notNull()
            t.column("session", .text).notNull()
            t.column("state", .text).notNull()
            t.column("bytesDone", .integer).notNull()
            // The whole task as JSON (request, validator, retry, failure …).
            t.column("task", .text).notNull()
        }
        try db.create(index: "transfer_task_app", on: "transfer_task", columns: ["app", "session"])
        try db.create(table: "transfer_session") { t in
            t.column("app", .text).notNull()
            t.column("identifier", .text).notNull()
            t.column("session", .text).notNull()
            t.primaryKey(["app", "identifier"])
        }
        try db.create(table: "transfer_relaunch") { t in
            t.primaryKey("app", .text)
            t.column("count", .integer).notNull()
            t.column("lastAt", .integer)
        }
    }

    /// A completed upload's response body (decision 0041), as bytes in a column of its own rather than base64 in the
    /// task's JSON, written with the task's row that says it completed.
    static func addTransferResponseBodies(_ db: Database) throws {
        try db.alter(table: "transfer_task") { t in
            t.add(column: "responseBody", .blob)
            t.add(column: "responseBodyTruncated", .boolean).notNull().defaults(to: false)
        }
    }

    /// What the journal holds.
    public struct TransferJournal: Sendable {
        public var tasks: [TransferTask] = []
        public var sessions: [TransferSession] = []
        public var relaunches: [AppID: TransferRelaunches] = [:]
    }

    /// Writes what the transfer queue decided, in order, in one transaction. Starting, stopping and handing over are
    /// the shell's: they are skipped here.
    public func apply(_ actions: [TransferAction]) throws {
        let encoder = JSONEncoder()
        try write(.transfer) { db in
            for action in actions {
                switch action {
                case .save(let task):
                    var json = task
                    json.responseBody = nil
                    try db.execute(
                        sql: """
                            INSERT OR REPLACE INTO transfer_task (id, app, session, state, bytesDone, task, responseBody, responseBodyTruncated)
                            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                            """,
                        arguments: [
                            Int64(bitPattern: task.id), task.app.rawValue, task.session, task.state.rawValue, task.bytesDone,
                            String(decoding: try encoder.encode(json), as: UTF8.self), task.responseBody?.data,
                            task.responseBody?.truncated ?? false,
                        ])
                case .delete(let task):
                    try db.execute(sql: "DELETE FROM transfer_task WHERE id = ?", arguments: [Int64(bitPattern: task.id)])
                case .saveSession(let session):
                    try db.execute(
                        sql: "INSERT OR REPLACE INTO transfer_session (app, identifier, session) VALUES (?, ?, ?)",
                        arguments: [
                            session.key.app.rawValue, session.key.identifier, String(decoding: try encoder.encode(session), as: UTF8.self),
                        ])
                case .deleteSession(let key):
                    try db.execute(
                        sql: "DELETE FROM transfer_session WHERE app = ? AND identifier = ?", arguments: [key.app.rawValue, key.identifier])
                case .saveRelaunches(let app, let record):
                    if record.count == 0 {
                        try db.execute(sql: "DELETE FROM transfer_relaunch WHERE app = ?", arguments: [app.rawValue])
                    } else {
                        try db.execute(
                            sql: "INSERT OR REPLACE INTO transfer_relaunch (app, count, lastAt) VALUES (?, ?, ?)",
                            arguments: [app.rawValue, record.count, record.lastAt?.nanosecondsSinceEpoch])
                    }
                case .start, .stop, .handOver:
                    break
                }
            }
        }
    }

    /// Reads the journal back. A row that does not decode (written by a newer version, or damaged) is skipped and
    /// named in `unreadable`, not fatal: the other transfers go on.
    public func loadTransfers() throws -> (journal: TransferJournal, unreadable: [String]) {
        let decoder = JSONDecoder()
        return try database.read { db in
            var journal = TransferJournal()
            var unreadable: [String] = []
            for row in try Row.fetchAll(db, sql: "SELECT id, task, responseBody, responseBodyTruncated FROM transfer_task ORDER BY id") {
                let text: String = row["task"]
                if var task = try? decoder.decode(TransferTask.self, from: Data(text.utf8)) {
                    let body: Data? = row["responseBody"]
                    task.responseBody = body.map { TransferResponseBody($0, truncated: row["responseBodyTruncated"]) }
                    journal.tasks.append(task)
                } else {
                    unreadable.append("transfer task \(row["id"] as Int64)")
                }
            }
            for row in try Row.fetchAll(db, sql: "SELECT app, identifier, session FROM transfer_session ORDER BY app, identifier") {
                let text: String = row["session"]
                if let session = try? decoder.decode(TransferSession.self, from: Data(text.utf8)) {
                    journal.sessions.append(session)
                } else {
                    unreadable.append("transfer session \(row["app"] as String)/\(row["identifier"] as String)")
                }
            }
            for row in try Row.fetchAll(db, sql: "SELECT app, count, lastAt FROM transfer_relaunch") {
                let lastAt: Int64? = row["lastAt"]
                journal.relaunches[AppID(row["app"] as String)] = TransferRelaunches(
                    count: row["count"], lastAt: lastAt.map { Instant(nanosecondsSinceEpoch: $0) })
            }
            return (journal, unreadable)
        }
    }
}
