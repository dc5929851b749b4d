import Foundation
import GRDB
import OffstageCore
import OffstagePush

/// What a device tells a remote gateway about its apps (decision 0035): every token and Web Push subscription it has
/// issued, live and ended, with the ending time, so the gateway routes to live ones and answers `Unregistered` or 410
/// for ended ones. The gateway never sees a subscription's keys.
extension OffstageStore {
    /// Every token and subscription of the store, oldest first.
    public func deviceRegistrations() throws -> DeviceRegistrations {
        try database.read { db in
            let tokens = try Row.fetchAll(db, sql: "SELECT token, app, revokedAt FROM push_token ORDER BY issuedAt").map { row in
                DeviceRegistrations.Token(
                    token: row["token"], app: row["app"], revokedAtMillis: (row["revokedAt"] as Double?).map(Self.millis))
            }
            let subscriptions = try Row.fetchAll(
                db, sql: "SELECT id, app, applicationServerKey, endedAt FROM webpush_subscription ORDER BY createdAt"
            ).map { row in
                DeviceRegistrations.Subscription(
                    id: row["id"], app: row["app"], applicationServerKey: (row["applicationServerKey"] as Data?).map(Base64URL.encode),
                    endedAtMillis: (row["endedAt"] as Double?).map(Self.millis))
            }
            return DeviceRegistrations(tokens: tokens, subscriptions: subscriptions)
        }
    }

    private static func millis(_ seconds: Double) -> Int64 { Int64((seconds * 1000).rounded()) }
}
