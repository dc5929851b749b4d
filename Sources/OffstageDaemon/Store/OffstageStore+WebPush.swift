import Foundation
import GRDB
import OffstageCore

/// Web Push subscriptions in the store (SPEC NT-3, decision 0034): one per app, with the user agent's keys.
///
/// The device is the subscription's user agent: it keeps the P-256 private key and the auth secret that RFC 8291
/// messages are encrypted to, so its own gateway decrypts a message before answering 201 and stores the plaintext in
/// the inbox. A subscription ends (410 Gone) when its app unsubscribes or is uninstalled; the row stays as the
/// record of when.
extension OffstageStore {
    static let webPushMigration = "v4: web push subscriptions"

    static func createWebPushTables(_ db: Database) throws {
        try db.create(table: "webpush_subscription") { t in
            // The endpoint's last path segment: 32 random bytes, base64url.
            t.primaryKey("id", .text)
            t.column("app", .text).notNull()
            // The user agent's P-256 key-agreement private key (32 bytes) and the 16-byte auth secret.
            t.column("privateKey", .blob).notNull()
            t.column("authSecret", .blob).notNull()
            // The VAPID public key (65 bytes, uncompressed) the subscription is restricted to, or NULL.
            t.column("applicationServerKey", .blob)
            t.column("createdAt", .double).notNull()
            t.column("endedAt", .double)
        }
        try db.create(index: "webpush_subscription_app", on: "webpush_subscription", columns: ["app"])
    }

    /// A Web Push subscription, as stored.
    public struct WebPushSubscriptionRow: Sendable, Hashable {
        public var id: String
        public var app: AppID
        public var privateKey: Data
        public var authSecret: Data
        public var applicationServerKey: Data?
        public var createdAt: Instant
        public var endedAt: Instant?
    }

    /// The subscription with this id, live or ended; nil for one never made.
    public func webPushSubscription(id: String) throws -> WebPushSubscriptionRow? {
        try database.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM webpush_subscription WHERE id = ?", arguments: [id])
        }.map(Self.subscriptionRow)
    }

    /// The app's live subscription, if it has one.
    public func liveWebPushSubscription(of app: AppID) throws -> WebPushSubscriptionRow? {
        try database.read { db in try Self.liveSubscription(of: app, db) }
    }

    /// The id of every app's live subscription.
    public func liveWebPushSubscriptionIDs() throws -> [AppID: String] {
        try database.read { db in
            var ids: [AppID: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT app, id FROM webpush_subscription WHERE endedAt IS NULL") {
                ids[AppID(row["app"] as String)] = row["id"]
            }
            return ids
        }
    }

    /// The app's live subscription, or `candidate` stored as its new one when it has none (one transaction: two
    /// subscribes at once get the same subscription). The caller compares the result's application server key.
    public func subscribeWebPush(_ candidate: WebPushSubscriptionRow) throws -> WebPushSubscriptionRow {
        try write(.push) { db in
            if let live = try Self.liveSubscription(of: candidate.app, db) { return live }
            try db.execute(
                sql: """
                    INSERT INTO webpush_subscription (id, app, privateKey, authSecret, applicationServerKey, createdAt)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    candidate.id, candidate.app.rawValue, candidate.privateKey, candidate.authSecret,
                    candidate.applicationServerKey, candidate.createdAt.secondsSinceEpoch,
                ])
            return candidate
        }
    }

    /// Ends the app's live subscription (unsubscribed, or uninstalled); returns how many ended.
    @discardableResult
    public func endWebPushSubscriptions(of app: AppID, at now: Instant) throws -> Int {
        try write(.push) { db in
            try db.execute(
                sql: "UPDATE webpush_subscription SET endedAt = ? WHERE app = ? AND endedAt IS NULL",
                arguments: [now.secondsSinceEpoch, app.rawValue])
            return db.changesCount
        }
    }

    private static func liveSubscription(of app: AppID, _ db: Database) throws -> WebPushSubscriptionRow? {
        try Row.fetchOne(
            db, sql: "SELECT * FROM webpush_subscription WHERE app = ? AND endedAt IS NULL", arguments: [app.rawValue]
        ).map(subscriptionRow)
    }

    private static func subscriptionRow(_ row: Row) -> WebPushSubscriptionRow {
        WebPushSubscriptionRow(
            id: row["id"], app: AppID(row["app"] as String), privateKey: row["privateKey"], authSecret: row["authSecret"],
            applicationServerKey: row["applicationServerKey"], createdAt: Instant(secondsSinceEpoch: row["createdAt"]),
            endedAt: (row["endedAt"] as Double?).map { Instant(secondsSinceEpoch: $0) })
    }
}
