import Foundation
import GRDB
import OffstageCore

/// Reading the notification tables back at start-up (SPEC NT-2 across restarts, §11: 64,000 pending notifications
/// read back and restored in well under the 500 ms of a restart).
extension OffstageStore {
    /// Every notification row. The requests' JSON is most of the work with many (64,000 pending across 1,000 apps,
    /// SPEC §11): it is flat and read by hand (``NotificationRequestJSON``), on up to `threads` threads when there are
    /// enough rows, ``decodingBatch`` rows at a time as they are read. So the rows' text is never all held at once:
    /// 64,000 requests are about 20 MB of JSON, which freed after the requests were made would stay with the daemon,
    /// between them.
    public func loadNotifications(
        threads: Int = ProcessInfo.processInfo.activeProcessorCount
    ) throws -> StoredNotifications {
        typealias PendingRow = (app: AppID, request: String, addedAt: Int64, due: Int64)
        typealias DeliveryRow = (
            app: AppID, due: Int64, record: String, route: String, deliveredAt: Int64, state: String, desktopID: Int64?
        )
        return try database.read { db in
            var stored = StoredNotifications()
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
            stored.pending = try Self.decodeInBatches(pending, threads: threads) { row -> PendingRow in
                (app(row[0]), row[1], row[2], row[3])
            } decode: { row in
                let request = try NotificationRequestJSON.decode(row.request).request
                let entry = PendingNotification(
                    request: request, addedAt: Instant(nanosecondsSinceEpoch: row.addedAt),
                    due: Instant(nanosecondsSinceEpoch: row.due))
                return (row.app, entry)
            }
            let delivery = try Row.fetchCursor(
                db,
                sql: """
                    SELECT app, due, record, route, deliveredAt, desktopState, desktopID FROM notification_delivery
                    ORDER BY deliveredAt, app, identifier, due
                    """)
            stored.deliveries = try Self.decodeInBatches(delivery, threads: threads) { row -> DeliveryRow in
                (app(row[0]), row[1], row[2], row[3], row[4], row[5], row[6])
            } decode: { row in
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
            for row in try Row.fetchAll(db, sql: "SELECT app, badge FROM notification_badge") {
                stored.badges[app(row[0])] = row[1]
            }
            for row in try Row.fetchAll(db, sql: "SELECT app, categories FROM notification_category") {
                stored.categories[app(row[0])] = try NotificationJSON.decode([NotificationCategory].self, row[1])
            }
            return stored
        }
    }

    /// Rows decoded together, on several threads: enough to keep the threads busy, few enough that their text is small.
    static let decodingBatch = 4_096

    /// Every row of `cursor`, taken out by `take` (on this thread) and decoded by `decode` a batch at a time (on up to
    /// `threads` threads), in order.
    private static func decodeInBatches<Taken: Sendable, Decoded: Sendable>(
        _ cursor: RowCursor, threads: Int, take: (Row) throws -> Taken,
        decode: @escaping @Sendable (Taken) throws -> Decoded
    ) throws -> [Decoded] {
        var decoded: [Decoded] = []
        var batch: [Taken] = []
        batch.reserveCapacity(decodingBatch)
        while let row = try cursor.next() {
            batch.append(try take(row))
            if batch.count == decodingBatch {
                decoded += try ParallelDecoding.map(batch, threads: threads, decode)
                batch.removeAll(keepingCapacity: true)
            }
        }
        decoded += try ParallelDecoding.map(batch, threads: threads, decode)
        return decoded
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
