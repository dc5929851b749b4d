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
            // The request as flat JSON (NotificationRequestJSON).
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
            // The delivered request as flat JSON, with its `late`; the other parts of the record are columns.
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

    // MARK: Writing

    /// Carries out what `action` asks of the tables, in one transaction. A `show` changes nothing here (the desktop
    /// state is recorded with ``recordDesktop(_:state:desktopID:)``). For a `fire`, returns whether its delivery row
    /// is new (false: the same firing was recorded before, or nothing was delivered).
    @discardableResult
    public func apply(_ action: NotificationAction) throws -> Bool {
        try write(.notification) { db in try Self.apply(action, in: db) }
    }

    /// Carries out several actions in one transaction, in order: all of them or, on an error, none. A time zone change
    /// that moves thousands of calendar triggers, or a burst of firings, is one write, not thousands. Returns, for each
    /// action, whether it was a `fire` whose delivery row is new.
    @discardableResult
    public func apply(_ actions: [NotificationAction]) throws -> [Bool] {
        guard actions.contains(where: \.changesRows) else { return Array(repeating: false, count: actions.count) }
        return try write(.notification) { db in
            try actions.map { action in try Self.apply(action, in: db) }
        }
    }

    /// What `action` changes, inside a transaction; for a `fire`, whether its delivery row is new.
    static func apply(_ action: NotificationAction, in db: Database) throws -> Bool {
        switch action {
        case .savePending(let app, let entry):
            try upsertPending(app, entry, request: NotificationRequestJSON.encode(entry.request), in: db)
        case .removePending(let app, let identifiers):
            let statement = try db.cachedStatement(sql: "DELETE FROM notification_pending WHERE app = ? AND identifier = ?")
            for identifier in identifiers { try statement.execute(arguments: [app.rawValue, identifier]) }
        case .fire(let key, let delivery, let next):
            return try fire(key, delivery: delivery, next: next, in: db)
        case .show:
            break
        case .updateDelivery(let record):
            try db.cachedStatement(
                sql: "UPDATE notification_delivery SET record = ?, route = ? WHERE app = ? AND identifier = ? AND due = ?"
            ).execute(
                arguments: [NotificationRequestJSON.encode(record.request, late: record.late), record.route.rawValue]
                    + arguments(record.key))
        case .removeDelivered(_, let keys):
            let statement = try db.cachedStatement(
                sql: "DELETE FROM notification_delivery WHERE app = ? AND identifier = ? AND due = ?")
            for key in keys { try statement.execute(arguments: arguments(key)) }
        case .saveBadge(let app, let badge):
            if let badge {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO notification_badge (app, badge) VALUES (?, ?)", arguments: [app.rawValue, badge])
            } else {
                try db.execute(sql: "DELETE FROM notification_badge WHERE app = ?", arguments: [app.rawValue])
            }
        case .saveCategories(let app, let categories):
            if categories.isEmpty {
                try db.execute(sql: "DELETE FROM notification_category WHERE app = ?", arguments: [app.rawValue])
            } else {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO notification_category (app, categories) VALUES (?, ?)",
                    arguments: [app.rawValue, try NotificationJSON.encode(categories)])
            }
        case .forgetApp(let app):
            try deleteNotifications(of: app, in: db)
        }
        return false
    }

    /// One firing: the delivery (ignored if its key is there already) and the request's next occurrence, or the
    /// request deleted. Returns whether the delivery row is new.
    private static func fire(
        _ key: DeliveryKey, delivery: DeliveredNotification?, next: PendingNotification?, in db: Database
    ) throws -> Bool {
        var inserted = false
        // A repeating request's delivery and next occurrence are the same request: its JSON is made once for both.
        var nextJSON: String?
        if let delivery {
            let deliveryJSON: String
            if let next, next.request == delivery.request {
                (deliveryJSON, nextJSON) = NotificationRequestJSON.encode(delivery.request, delivered: delivery.late)
            } else {
                deliveryJSON = NotificationRequestJSON.encode(delivery.request, late: delivery.late)
            }
            try db.cachedStatement(
                sql: """
                    INSERT OR IGNORE INTO notification_delivery
                      (app, identifier, due, record, route, deliveredAt, desktopState) VALUES (?, ?, ?, ?, ?, ?, ?)
                    """
            ).execute(
                arguments: arguments(key) + [
                    deliveryJSON, delivery.route.rawValue,
                    delivery.deliveredAt.nanosecondsSinceEpoch, DesktopState.pending.rawValue,
                ])
            inserted = db.changesCount > 0
        }
        if let next {
            try upsertPending(key.app, next, request: nextJSON ?? NotificationRequestJSON.encode(next.request), in: db)
        } else {
            // Only the occurrence that fired: a request replaced since (another due time) is not this one.
            try db.cachedStatement(sql: "DELETE FROM notification_pending WHERE app = ? AND identifier = ? AND due = ?")
                .execute(arguments: arguments(key))
        }
        return inserted
    }

    /// Records where deliveries stand with the desktop (and their ids there, while shown), in one transaction.
    public func recordDesktop(_ changes: [(DeliveryKey, DesktopState, desktopID: UInt32?)]) throws {
        guard !changes.isEmpty else { return }
        try write(.notification) { db in
            let statement = try db.cachedStatement(
                sql: "UPDATE notification_delivery SET desktopState = ?, desktopID = ? WHERE app = ? AND identifier = ? AND due = ?")
            for (key, state, desktopID) in changes {
                try statement.execute(arguments: [state.rawValue, desktopID.map { Int64($0) }] + Self.arguments(key))
            }
        }
    }

    /// Records where one delivery stands with the desktop (and its id there, while shown).
    public func recordDesktop(_ key: DeliveryKey, state: DesktopState, desktopID: UInt32?) throws {
        try recordDesktop([(key, state, desktopID)])
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

extension NotificationAction {
    /// Whether carrying it out changes a row (a `show` changes none: the desktop state is recorded on its own).
    var changesRows: Bool {
        if case .show = self { return false }
        return true
    }
}
