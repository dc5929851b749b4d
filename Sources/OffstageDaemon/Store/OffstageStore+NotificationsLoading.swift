import Foundation
import GRDB
import OffstageCore

/// Reading the notification tables back at start-up (SPEC NT-2 across restarts, §11: 64,000 pending notifications
/// read back and restored in well under the 500 ms of a restart).
extension OffstageStore {
    /// Every notification row. The requests' JSON is most of the work with many (64,000 pending across 1,000 apps,
    /// SPEC §11): it is flat and read by hand (``NotificationRequestJSON``), on up to `threads` threads when there are
    /// enough rows.
    public func loadNotifications(
        threads: Int = ProcessInfo.processInfo.activeProcessorCount
    ) throws -> StoredNotifications {
        typealias PendingRow = (app: AppID, request: String, addedAt: Int64, due: Int64)
        typealias DeliveryRow = (
            app: AppID, due: Int64, record: String, route: String, deliveredAt: Int64, state: String, desktopID: Int64?
        )
        let (pendingRows, deliveryRows, badgeRows, categoryRows) = try database.read { db in
            // One AppID for each app, shared by its rows, instead of one string per row kept for the daemon's life.
            var apps: [String: AppID] = [:]
            func app(_ text: String) -> AppID {
                if let id = apps[text] { return id }
                let id = AppID(text)
                apps[text] = id
                return id
            }
            // By column index, not name: with 64,000 rows the lookups by name would cost more than the reading.
            let pending = try Row.fetchCursor(db, sql: "SELECT app, request, addedAt, due FROM notification_pending")
            var pendingRows: [PendingRow] = []
            while let row = try pending.next() { pendingRows.append((app(row[0]), row[1], row[2], row[3])) }
            let delivery = try Row.fetchCursor(
                db,
                sql: """
                    SELECT app, due, record, route, deliveredAt, desktopState, desktopID FROM notification_delivery
                    ORDER BY deliveredAt, app, identifier, due
                    """)
            var deliveryRows: [DeliveryRow] = []
            while let row = try delivery.next() {
                deliveryRows.append((app(row[0]), row[1], row[2], row[3], row[4], row[5], row[6]))
            }
            let badges = try Row.fetchAll(db, sql: "SELECT app, badge FROM notification_badge").map { (app($0[0]), $0[1] as Int) }
            let categories = try Row.fetchAll(db, sql: "SELECT app, categories FROM notification_category")
                .map { (app($0[0]), $0[1] as String) }
            return (pendingRows, deliveryRows, badges, categories)
        }
        var stored = StoredNotifications()
        stored.pending = try ParallelDecoding.map(pendingRows, threads: threads) { row in
            let request = try NotificationRequestJSON.decode(row.request).request
            let entry = PendingNotification(
                request: request, addedAt: Instant(nanosecondsSinceEpoch: row.addedAt),
                due: Instant(nanosecondsSinceEpoch: row.due))
            return (row.app, entry)
        }
        stored.deliveries = try ParallelDecoding.map(deliveryRows, threads: threads) { row in
            let (request, late) = try NotificationRequestJSON.decode(row.record)
            guard let route = NotificationRoute(rawValue: row.route) else {
                throw NotificationRequestJSON.Unreadable(reason: "route \(QuotedText.quote(row.route))")
            }
            let record = DeliveredNotification(
                app: row.app, request: request, due: Instant(nanosecondsSinceEpoch: row.due),
                deliveredAt: Instant(nanosecondsSinceEpoch: row.deliveredAt), late: late ?? false, route: route)
            return StoredDelivery(
                record: record, desktopState: DesktopState(rawValue: row.state) ?? .none,
                desktopID: row.desktopID.flatMap { UInt32(exactly: $0) })
        }
        for (app, badge) in badgeRows { stored.badges[app] = badge }
        for (app, text) in categoryRows {
            stored.categories[app] = try NotificationJSON.decode([NotificationCategory].self, text)
        }
        return stored
    }
}

/// The JSON of the rows that are few and small (an app's categories): Foundation's coders, one of each shared by every
/// call (both are safe to use from several threads). Requests, which are many, have ``NotificationRequestJSON``.
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
