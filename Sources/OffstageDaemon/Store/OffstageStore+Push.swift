import Foundation
import GRDB
import OffstageCore

/// Push in the store (SPEC NT-3..5): the provider keys app servers sign with, the device tokens issued to apps, and
/// the device's inbox, one row per push from its acceptance to its record.
///
/// An inbox row is written before the gateway answers 200 (nothing acknowledged is lost across a kill -9), marked
/// `held` while it waits for its app's budget, `handed` once its handler was called (a restart never calls it again),
/// and `done` with its outcome. Done rows are kept as the record, the newest ``pushRecordCapacity``.
extension OffstageStore {
    static let pushMigration = "v3: push keys, tokens, inbox"
    /// The inbox looked up by app and acceptance instant (each push's is unique within its app).
    static let pushAcceptedAtMigration = "v5: push inbox by app and acceptance"

    /// Done inbox rows kept as records; older ones are deleted.
    static let pushRecordCapacity = 10_000
    /// How many pushes finish between two counts of the records: counting them on every finish walked up to 11,000
    /// index entries per push under load. The records stay under the capacity plus a tenth plus this many.
    static let pushRecordTrimInterval = 256

    static func createPushTables(_ db: Database) throws {
        try db.create(table: "push_key") { t in
            t.primaryKey("id", .text)
            t.column("teamId", .text).notNull()
            t.column("publicKey", .text).notNull()
            // A JSON array of app ids, or NULL for every app.
            t.column("topics", .text)
            t.column("addedAt", .double).notNull()
        }
        try db.create(table: "push_token") { t in
            t.primaryKey("token", .text)
            t.column("app", .text).notNull()
            t.column("issuedAt", .double).notNull()
            t.column("revokedAt", .double)
        }
        try db.create(index: "push_token_app", on: "push_token", columns: ["app"])
        try db.create(table: "push_inbox") { t in
            t.primaryKey("id", .text)
            t.column("app", .text).notNull()
            // The whole push as JSON (type, priority, collapse id, expiration, aps, payload).
            t.column("push", .text).notNull()
            t.column("acceptedAt", .integer).notNull()
            t.column("state", .text).notNull()
            t.column("outcome", .text)
            t.column("detail", .text)
            t.column("finishedAt", .integer)
        }
        try db.create(index: "push_inbox_state", on: "push_inbox", columns: ["state", "acceptedAt"])
    }

    // MARK: Provider keys

    /// A registered provider key.
    public struct PushKeyRow: Sendable, Hashable {
        public var id: String
        public var teamID: String
        public var publicKeyPEM: String
        public var topics: [String]?
        public var addedAt: Instant
    }

    /// Adds a key, replacing one with its id.
    public func addPushKey(_ key: PushKeyRow) throws {
        let topics = try key.topics.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        try write(.push) { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO push_key (id, teamId, publicKey, topics, addedAt) VALUES (?, ?, ?, ?, ?)",
                arguments: [key.id, key.teamID, key.publicKeyPEM, topics, key.addedAt.secondsSinceEpoch])
        }
    }

    /// Removes a key; false when there was none with that id.
    public func removePushKey(id: String) throws -> Bool {
        try write(.push) { db in
            try db.execute(sql: "DELETE FROM push_key WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    /// The key with this id.
    public func pushKey(id: String) throws -> PushKeyRow? {
        try database.read { db in try Row.fetchOne(db, sql: "SELECT * FROM push_key WHERE id = ?", arguments: [id]) }
            .map(Self.keyRow)
    }

    /// Every key, by id.
    public func pushKeys() throws -> [PushKeyRow] {
        try database.read { db in try Row.fetchAll(db, sql: "SELECT * FROM push_key ORDER BY id") }.map(Self.keyRow)
    }

    private static func keyRow(_ row: Row) -> PushKeyRow {
        let topics = (row["topics"] as String?).flatMap { try? JSONDecoder().decode([String].self, from: Data($0.utf8)) }
        return PushKeyRow(
            id: row["id"], teamID: row["teamId"], publicKeyPEM: row["publicKey"], topics: topics,
            addedAt: Instant(secondsSinceEpoch: row["addedAt"]))
    }

    // MARK: Device tokens

    /// What a token names: the app, and when it was revoked (nil while it is live); nil for a token never issued.
    public func pushToken(_ token: String) throws -> (app: AppID, revokedAt: Instant?)? {
        try database.read { db in
            try Row.fetchOne(db, sql: "SELECT app, revokedAt FROM push_token WHERE token = ?", arguments: [token])
        }.map { row in (AppID(row["app"] as String), (row["revokedAt"] as Double?).map { Instant(secondsSinceEpoch: $0) }) }
    }

    /// The app's live token, if it has one.
    public func liveToken(of app: AppID) throws -> String? {
        try database.read { db in
            try String.fetchOne(
                db, sql: "SELECT token FROM push_token WHERE app = ? AND revokedAt IS NULL", arguments: [app.rawValue])
        }
    }

    /// The live token of every app that has one.
    public func liveTokens() throws -> [AppID: String] {
        try database.read { db in
            var tokens: [AppID: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT app, token FROM push_token WHERE revokedAt IS NULL") {
                tokens[AppID(row["app"] as String)] = row["token"]
            }
            return tokens
        }
    }

    /// The app's live token, issuing `candidate` when it has none (one transaction: two registrations at once get
    /// the same token).
    public func issueToken(to app: AppID, candidate: String, at now: Instant) throws -> String {
        try write(.push) { db in
            if let live = try String.fetchOne(
                db, sql: "SELECT token FROM push_token WHERE app = ? AND revokedAt IS NULL", arguments: [app.rawValue])
            {
                return live
            }
            try db.execute(
                sql: "INSERT INTO push_token (token, app, issuedAt) VALUES (?, ?, ?)",
                arguments: [candidate, app.rawValue, now.secondsSinceEpoch])
            return candidate
        }
    }

    /// Revokes the app's live token (unregistered, or uninstalled); returns how many were revoked.
    @discardableResult
    public func revokeTokens(of app: AppID, at now: Instant) throws -> Int {
        try write(.push) { db in
            try db.execute(
                sql: "UPDATE push_token SET revokedAt = ? WHERE app = ? AND revokedAt IS NULL",
                arguments: [now.secondsSinceEpoch, app.rawValue])
            return db.changesCount
        }
    }

    // MARK: The inbox

    /// Stores an accepted push and returns it as stored; nil when a push with its `apns-id` is already there (a
    /// provider's retry, or the device link sending it again): it is not handed in again.
    ///
    /// Its acceptance instant is taken as the stored push keeps it (seconds in a `Double`, to a fraction of a
    /// microsecond), and made unique among the app's pushes, a microsecond earlier than another's when they would
    /// share one (the device link carries milliseconds): an alert push is shown as the delivery of
    /// (app, collapse id, accepted at), which two pushes must not share, and one handed in again after a restart must
    /// name the same delivery as before. The push returned is the one a restart reads back.
    public func acceptPush(_ push: RemotePush) throws -> RemotePush? {
        try write(.push) { db in
            if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM push_inbox WHERE id = ?)", arguments: [push.id]) == true {
                return nil
            }
            var stored = push
            stored.acceptedAt = Self.asStored(push.acceptedAt)
            while try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM push_inbox WHERE app = ? AND acceptedAt = ?)",
                arguments: [push.app.rawValue, stored.acceptedAt.nanosecondsSinceEpoch]) == true
            {
                stored.acceptedAt = Self.asStored(stored.acceptedAt - .microseconds(1))
            }
            let json = String(decoding: try JSONEncoder().encode(stored), as: UTF8.self)
            try db.execute(
                sql: "INSERT INTO push_inbox (id, app, push, acceptedAt, state) VALUES (?, ?, ?, ?, 'accepted')",
                arguments: [stored.id, stored.app.rawValue, json, stored.acceptedAt.nanosecondsSinceEpoch])
            return stored
        }
    }

    /// `instant` as a stored push's JSON gives it back (after one round trip the value no longer changes).
    static func asStored(_ instant: Instant) -> Instant { Instant(secondsSinceEpoch: instant.secondsSinceEpoch) }

    /// Records what the inbox decided, in one transaction.
    public func apply(_ actions: [PushAction], at now: Instant) throws {
        guard !actions.isEmpty else { return }
        let finished = actions.count { if case .finish = $0 { true } else { false } }
        let count = pushesFinishedSinceTrim.add(finished, ordering: .relaxed).newValue >= Self.pushRecordTrimInterval
        if count { pushesFinishedSinceTrim.store(0, ordering: .relaxed) }
        try write(.push) { db in
            for action in actions {
                switch action {
                case .hold(let push):
                    try db.execute(
                        sql: "UPDATE push_inbox SET state = 'held' WHERE id = ? AND state <> 'done'", arguments: [push.id])
                case .finish(let id, _, let outcome):
                    try db.execute(
                        sql: "UPDATE push_inbox SET state = 'done', outcome = ?, detail = ?, finishedAt = ? WHERE id = ?",
                        arguments: [outcome.name, outcome.detail, now.nanosecondsSinceEpoch, id])
                }
            }
            if count { try Self.trimPushRecords(db) }
        }
    }

    /// The push's handler is being called: a restart from now on records it cut off instead of calling it again.
    public func markPushHanded(_ id: String) throws {
        try write(.push) { db in
            try db.execute(sql: "UPDATE push_inbox SET state = 'handed' WHERE id = ? AND state <> 'done'", arguments: [id])
        }
    }

    /// Pushes not done with, read back at start: those to hand in again, those held over budget, and those whose
    /// handler was running when the daemon stopped.
    public func loadPushInbox() throws -> (accepted: [RemotePush], held: [RemotePush], handed: [RemotePush]) {
        try database.read { db in
            var result: (accepted: [RemotePush], held: [RemotePush], handed: [RemotePush]) = ([], [], [])
            let rows = try Row.fetchAll(
                db, sql: "SELECT push, state FROM push_inbox WHERE state <> 'done' ORDER BY acceptedAt, id")
            for row in rows {
                let push = try JSONDecoder().decode(RemotePush.self, from: Data((row["push"] as String).utf8))
                switch row["state"] as String {
                case "held": result.held.append(push)
                case "handed": result.handed.append(push)
                default: result.accepted.append(push)
                }
            }
            return result
        }
    }

    /// A push as the inbox keeps it.
    public struct PushRecord: Sendable, Hashable {
        public var push: RemotePush
        public var state: String
        public var outcome: String?
        public var detail: String?
        public var finishedAt: Instant?
    }

    /// The newest inbox rows, of one app or all, newest first.
    public func pushRecords(app: AppID?, limit: Int) throws -> [PushRecord] {
        try database.read { db in
            let filter = app == nil ? "" : "WHERE app = ?"
            let rows = try Row.fetchAll(
                db, sql: "SELECT * FROM push_inbox \(filter) ORDER BY acceptedAt DESC, id DESC LIMIT ?",
                arguments: StatementArguments((app.map { [$0.rawValue] } ?? []) + [max(0, limit)]))
            return try rows.map { row in
                PushRecord(
                    push: try JSONDecoder().decode(RemotePush.self, from: Data((row["push"] as String).utf8)),
                    state: row["state"], outcome: row["outcome"], detail: row["detail"],
                    finishedAt: (row["finishedAt"] as Int64?).map { Instant(nanosecondsSinceEpoch: $0) })
            }
        }
    }

    /// How many pushes are stored and not done with, and how many of them are held.
    public func pushCounts() throws -> (stored: Int, held: Int) {
        try database.read { db in
            let stored = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM push_inbox WHERE state <> 'done'") ?? 0
            let held = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM push_inbox WHERE state = 'held'") ?? 0
            return (stored, held)
        }
    }

    /// Deletes the oldest done rows past the capacity.
    private static func trimPushRecords(_ db: Database) throws {
        let done = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM push_inbox WHERE state = 'done'") ?? 0
        guard done > pushRecordCapacity + pushRecordCapacity / 10 else { return }
        try db.execute(
            sql: """
                DELETE FROM push_inbox WHERE id IN (
                  SELECT id FROM push_inbox WHERE state = 'done' ORDER BY finishedAt LIMIT ?)
                """,
            arguments: [done - pushRecordCapacity])
    }
}
