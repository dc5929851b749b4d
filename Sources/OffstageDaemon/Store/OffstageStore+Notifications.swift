import Foundation
import GRDB
import OffstageCore

/// The local notifications' own tables (SPEC NT-1, NT-2): one row per pending request, one per delivery, one per
/// app's badge and categories — not the per-app JSON blob, so a firing writes two small rows instead of an app's
/// whole state.
///
/// A delivery's primary key is its ``DeliveryKey`` (app, identifier, due): the firing's idempotency key. A firing
/// inserts its delivery and moves or deletes its pending request in one transaction, so after a crash at any point a
/// notification was either delivered and no longer pending, or still pending and not delivered: once, not twice.
extension OffstageStore {
    /// The name of the migration that makes the tables.
    static let notificationsMigration = "v2: notifications"

    /// Where a delivery stands with the desktop's notification service.
    public enum DesktopState: String, Hashable, Sendable, CaseIterable {
        /// Not handed to a desktop yet: the daemon shows it when the core asks (at the firing, or after a restart).
        case pending
        /// Handed to the desktop (the desktop's id once it answered): never shown again, even after a restart.
        case shown
        /// Not shown and never to be: there was no desktop, it was turned off, or the desktop refused it.
        case none
    }

    /// One delivery row.
    public struct StoredDelivery: Hashable, Sendable {
        /// The delivery.
        public var record: DeliveredNotification
        /// Where it stands with the desktop.
        public var desktopState: DesktopState
        /// The desktop's id for it while it is on the desktop.
        public var desktopID: UInt32?

        /// Creates a row.
        public init(record: DeliveredNotification, desktopState: DesktopState, desktopID: UInt32? = nil) {
            self.record = record
            self.desktopState = desktopState
            self.desktopID = desktopID
        }
    }

    /// Everything the notification tables hold, as read back at start-up.
    public struct StoredNotifications: Sendable {
        /// Pending requests, by app.
        public var pending: [(AppID, PendingNotification)] = []
        /// Deliveries, oldest first.
        public var deliveries: [StoredDelivery] = []
        /// Badges.
        public var badges: [AppID: Int] = [:]
        /// Categories.
        public var categories: [AppID: [NotificationCategory]] = [:]
    }

    static func createNotificationTables(_ db: Database) throws {
        try db.create(table: "notification_pending") { t in
            t.column("app", .text).notNull()
            t.column("identifier", .text).notNull()
            t.column("request", .text).notNull()
            // Instants are integer nanoseconds since the epoch: exact, so a due time read back names the same firing.
            t.column("addedAt", .integer).notNull()
            t.column("due", .integer).notNull()
            t.primaryKey(["app", "identifier"])
        }
        try db.create(index: "notification_pending_due", on: "notification_pending", columns: ["due"])
        try db.create(table: "notification_delivery") { t in
            t.column("app", .text).notNull()
            t.column("identifier", .text).notNull()
            t.column("due", .integer).notNull()
            t.column("record", .text).notNull()
            t.column("route", .text).notNull()
            t.column("deliveredAt", .integer).notNull()
            t.column("desktopState", .text).notNull().defaults(to: DesktopState.pending.rawValue)
                .check { ["pending", "shown", "none"].contains($0) }
            t.column("desktopID", .integer)
            t.primaryKey(["app", "identifier", "due"])
        }
        try db.create(table: "notification_badge") { t in
            t.primaryKey("app", .text)
            t.column("badge", .integer).notNull()
        }
        try db.create(table: "notification_category") { t in
            t.primaryKey("app", .text)
            t.column("categories", .text).notNull()
        }
    }

    // MARK: Reading

    /// Every notification row. The requests' JSON is most of the work with many (64,000 pending across 1,000 apps,
    /// SPEC §11), so rows are decoded on up to `threads` threads when there are enough of them.
    public func loadNotifications(
        threads: Int = ProcessInfo.processInfo.activeProcessorCount
    ) throws -> StoredNotifications {
        typealias PendingRow = (app: String, request: String, addedAt: Int64, due: Int64)
        typealias DeliveryRow = (record: String, due: Int64, deliveredAt: Int64, state: String, desktopID: Int64?)
        let (pendingRows, deliveryRows, badgeRows, categoryRows) = try database.read { db in
            // By column index, not name: with 64,000 rows the lookups by name would cost more than the reading.
            let pending = try Row.fetchCursor(db, sql: "SELECT app, request, addedAt, due FROM notification_pending")
            var pendingRows: [PendingRow] = []
            while let row = try pending.next() { pendingRows.append((row[0], row[1], row[2], row[3])) }
            let delivery = try Row.fetchCursor(
                db,
                sql: """
                    SELECT record, due, deliveredAt, desktopState, desktopID FROM notification_delivery
                    ORDER BY deliveredAt, app, identifier, due
                    """)
            var deliveryRows: [DeliveryRow] = []
            while let row = try delivery.next() { deliveryRows.append((row[0], row[1], row[2], row[3], row[4])) }
            let badges = try Row.fetchAll(db, sql: "SELECT app, badge FROM notification_badge").map { ($0[0] as String, $0[1] as Int) }
            let categories = try Row.fetchAll(db, sql: "SELECT app, categories FROM notification_category")
                .map { ($0[0] as String, $0[1] as String) }
            return (pendingRows, deliveryRows, badges, categories)
        }
        var stored = StoredNotifications()
        stored.pending = try ParallelDecoding.map(pendingRows, threads: threads) { row in
            let request = try NotificationJSON.decode(NotificationRequest.self, row.request)
            return (
                AppID(row.app),
                PendingNotification(
                    request: request, addedAt: Instant(nanosecondsSinceEpoch: row.addedAt),
                    due: Instant(nanosecondsSinceEpoch: row.due))
            )
        }
        stored.deliveries = try deliveryRows.map { row in
            var record = try NotificationJSON.decode(DeliveredNotification.self, row.record)
            // The JSON has instants as seconds in a double (a quarter of a microsecond apart at today's dates); the
            // columns are exact, and the key must be the one the row was stored under.
            record.due = Instant(nanosecondsSinceEpoch: row.due)
            record.deliveredAt = Instant(nanosecondsSinceEpoch: row.deliveredAt)
            return StoredDelivery(
                record: record, desktopState: DesktopState(rawValue: row.state) ?? .none,
                desktopID: row.desktopID.flatMap { UInt32(exactly: $0) })
        }
        for (app, badge) in badgeRows { stored.badges[AppID(app)] = badge }
        for (app, text) in categoryRows {
            stored.categories[AppID(app)] = try NotificationJSON.decode([NotificationCategory].self, text)
        }
        return stored
    }

    // MARK: Writing

    /// Carries out what `action` asks of the tables, in one transaction. A `show` changes nothing here (the desktop
    /// state is recorded with ``recordDesktop(_:state:desktopID:)``). For a `fire`, returns whether its delivery row
    /// is new (false: the same firing was recorded before, or nothing was delivered).
    @discardableResult
    public func apply(_ action: NotificationAction) throws -> Bool {
        switch action {
        case .savePending(let app, let entry):
            let request = try NotificationJSON.encode(entry.request)
            try write(.notification) { db in try Self.upsertPending(app, entry, request: request, in: db) }
        case .removePending(let app, let identifiers):
            try write(.notification) { db in
                let statement = try db.cachedStatement(
                    sql: "DELETE FROM notification_pending WHERE app = ? AND identifier = ?")
                for identifier in identifiers { try statement.execute(arguments: [app.rawValue, identifier]) }
            }
        case .fire(let key, let delivery, let next):
            return try fire(key, delivery: delivery, next: next)
        case .show:
            break
        case .updateDelivery(let record):
            let text = try NotificationJSON.encode(record)
            try write(.notification) { db in
                try db.execute(
                    sql: """
                        UPDATE notification_delivery SET record = ?, route = ?
                        WHERE app = ? AND identifier = ? AND due = ?
                        """,
                    arguments: [text, record.route.rawValue] + Self.arguments(record.key))
            }
        case .removeDelivered(_, let keys):
            try write(.notification) { db in
                let statement = try db.cachedStatement(
                    sql: "DELETE FROM notification_delivery WHERE app = ? AND identifier = ? AND due = ?")
                for key in keys { try statement.execute(arguments: Self.arguments(key)) }
            }
        case .saveBadge(let app, let badge):
            try write(.notification) { db in
                if let badge {
                    try db.execute(
                        sql: "INSERT OR REPLACE INTO notification_badge (app, badge) VALUES (?, ?)",
                        arguments: [app.rawValue, badge])
                } else {
                    try db.execute(sql: "DELETE FROM notification_badge WHERE app = ?", arguments: [app.rawValue])
                }
            }
        case .saveCategories(let app, let categories):
            let text = try NotificationJSON.encode(categories)
            try write(.notification) { db in
                if categories.isEmpty {
                    try db.execute(sql: "DELETE FROM notification_category WHERE app = ?", arguments: [app.rawValue])
                } else {
                    try db.execute(
                        sql: "INSERT OR REPLACE INTO notification_category (app, categories) VALUES (?, ?)",
                        arguments: [app.rawValue, text])
                }
            }
        case .forgetApp(let app):
            try write(.notification) { db in try Self.deleteNotifications(of: app, in: db) }
        }
        return false
    }

    /// One firing, in one transaction: the delivery (ignored if its key is there already) and the request's next
    /// occurrence, or the request deleted. Returns whether the delivery row is new.
    func fire(_ key: DeliveryKey, delivery: DeliveredNotification?, next: PendingNotification?) throws -> Bool {
        let record = try delivery.map { try NotificationJSON.encode($0) }
        let request = try next.map { try NotificationJSON.encode($0.request) }
        return try write(.notification) { db in
            var inserted = false
            if let delivery, let record {
                try db.cachedStatement(
                    sql: """
                        INSERT OR IGNORE INTO notification_delivery
                          (app, identifier, due, record, route, deliveredAt, desktopState) VALUES (?, ?, ?, ?, ?, ?, ?)
                        """
                ).execute(
                    arguments: Self.arguments(key) + [
                        record, delivery.route.rawValue, delivery.deliveredAt.nanosecondsSinceEpoch,
                        DesktopState.pending.rawValue,
                    ])
                inserted = db.changesCount > 0
            }
            if let next, let request {
                try Self.upsertPending(key.app, next, request: request, in: db)
            } else {
                // Only the occurrence that fired: a request replaced since (another due time) is not this one.
                try db.cachedStatement(sql: "DELETE FROM notification_pending WHERE app = ? AND identifier = ? AND due = ?")
                    .execute(arguments: Self.arguments(key))
            }
            return inserted
        }
    }

    /// Records where a delivery stands with the desktop (and its id there, while it is shown).
    public func recordDesktop(_ key: DeliveryKey, state: DesktopState, desktopID: UInt32?) throws {
        try write(.notification) { db in
            try db.cachedStatement(
                sql: """
                    UPDATE notification_delivery SET desktopState = ?, desktopID = ?
                    WHERE app = ? AND identifier = ? AND due = ?
                    """
            ).execute(arguments: [state.rawValue, desktopID.map { Int64($0) }] + Self.arguments(key))
        }
    }

    /// Deletes every notification row of the app (uninstall, SPEC MAN-3).
    static func deleteNotifications(of app: AppID, in db: Database) throws {
        for table in ["notification_pending", "notification_delivery", "notification_badge", "notification_category"] {
            try db.execute(sql: "DELETE FROM \(table) WHERE app = ?", arguments: [app.rawValue])
        }
    }

    static func upsertPending(_ app: AppID, _ entry: PendingNotification, request: String, in db: Database) throws {
        try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO notification_pending (app, identifier, request, addedAt, due) VALUES (?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            app.rawValue, entry.identifier, request, entry.addedAt.nanosecondsSinceEpoch, entry.due.nanosecondsSinceEpoch,
        ])
    }

    private static func arguments(_ key: DeliveryKey) -> StatementArguments {
        [key.app.rawValue, key.identifier, key.due.nanosecondsSinceEpoch]
    }
}

/// The JSON of the notification rows: Foundation's coders, one of each shared by every call (both are safe to use
/// from several threads, which the start-up's parallel decoding does).
enum NotificationJSON {
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()
    private static let decoder = JSONDecoder()

    static func encode(_ value: some Encodable) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func decode<Value: Decodable>(_ type: Value.Type, _ text: String) throws -> Value {
        try decoder.decode(type, from: Data(text.utf8))
    }
}
