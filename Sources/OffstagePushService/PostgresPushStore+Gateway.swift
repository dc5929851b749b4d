import Foundation
import OffstagePush
import PostgresNIO

/// The front doors' ports: provider keys, tokens, subscriptions, and accepting a push into the device's stored
/// pushes (decision 0036).
extension PostgresPushStore: PushGatewayBackend, WebPushBackend {
    /// The provider key `id`, or nil.
    public func providerKey(id: String) async throws -> ProviderKey? {
        let rows = try await client.query(
            "SELECT team_id, public_key_pem, topics FROM provider_key WHERE id = \(id)", logger: logger)
        for try await (team, pem, topics) in rows.decode((String, String, [String]?).self) {
            return ProviderKey(id: id, teamID: team, publicKeyPEM: pem, allowedTopics: topics.map(Set.init))
        }
        return nil
    }

    /// What device token `token` names.
    public func lookUp(token: String) async throws -> TokenLookup {
        let rows = try await client.query(
            "SELECT device, app, revoked_at FROM device_token WHERE token = \(token)", logger: logger)
        for try await (device, app, revokedAt) in rows.decode((String, String, Date?).self) {
            if let revokedAt { return .revoked(at: revokedAt) }
            return .active(app: app, device: device)
        }
        return .unknown
    }

    /// What subscription `id` names; without the user agent's keys (the device decrypts).
    public func lookUp(subscription id: String) async throws -> WebPushSubscriptionLookup {
        let rows = try await client.query(
            "SELECT device, app, application_server_key, ended_at FROM webpush_subscription WHERE id = \(id)",
            logger: logger)
        for try await (device, app, key, endedAt) in rows.decode((String, String, Data?, Date?).self) {
            if let endedAt { return .gone(at: endedAt) }
            return .active(WebPushSubscription(id: id, app: app, device: device, applicationServerKey: key, userAgentKeys: nil))
        }
        return .unknown
    }

    /// Stores `push` for its device in one transaction, and wakes the node holding the device's pull when it
    /// commits.
    ///
    /// - A retry with the same `apns-id` for the device is `.stored` again, and stored once.
    /// - A token or subscription revoked meanwhile is refused `Unregistered` with its time.
    /// - `attemptOnce` for a device not connected is not stored: a record says so, and the answer is `.stored`
    ///   (as APNs answers 200 for a push it could not deliver at once).
    /// - Older stored pushes with the push's collapse id for the same app are deleted with a record.
    public func accept(_ push: AcceptedPush) async throws -> Acceptance {
        try await transaction { connection in
            try await self.lockDevice(push.device, on: connection)
            if let refusal = try await self.refusal(for: push, on: connection) { return Acceptance.refused(refusal) }
            let retry = try await connection.query(
                "SELECT 1 FROM stored_push WHERE device = \(push.device) AND apns_id = \(push.apnsID)", logger: self.logger
            ).collect().count > 0
            if retry { return .stored }
            let window = Self.seconds(self.configuration.connectedWindow)
            if push.attemptOnce {
                let connected = try await connection.query(
                    """
                    SELECT 1 FROM device_link WHERE device = \(push.device)
                    AND seen_at > now() - make_interval(secs => \(window))
                    """, logger: self.logger
                ).collect().count > 0
                if !connected {
                    try await self.record(
                        push, "dropped", "expiration 0 and the device is not connected; not stored", on: connection)
                    return .stored
                }
            }
            if let collapseID = push.collapseID {
                try await connection.query(
                    """
                    WITH gone AS (
                        DELETE FROM stored_push WHERE device = \(push.device) AND app = \(push.app)
                        AND collapse_id = \(collapseID) AND apns_id <> \(push.apnsID) RETURNING apns_id)
                    INSERT INTO push_record (device, app, apns_id, what, detail)
                    SELECT \(push.device), \(push.app), apns_id, 'collapsed', 'replaced by ' || \(push.apnsID) FROM gone
                    """, logger: self.logger)
            }
            let inserted = try await connection.query(
                """
                INSERT INTO stored_push (device, apns_id, token, app, push_type, priority, expires_at, attempt_once,
                    collapse_id, payload, accepted_at)
                VALUES (\(push.device), \(push.apnsID), \(push.token), \(push.app), \(push.pushType.rawValue),
                    \(Int16(push.priority.rawValue)), \(push.expiration), \(push.attemptOnce), \(push.collapseID),
                    \(push.payload), \(push.acceptedAt))
                ON CONFLICT (device, apns_id) DO NOTHING RETURNING delivery
                """, logger: self.logger
            ).collect().count > 0
            if inserted {
                // Delivered on commit, to the node holding the device's pull (if any).
                try await connection.query(
                    "SELECT pg_notify('offstage_push_node_' || node, device) FROM device_link WHERE device = \(push.device)",
                    logger: self.logger)
            }
            return .stored
        }
    }

    /// The refusal of a push whose token or subscription was revoked, removed or moved since the gateway looked it
    /// up, or nil. Locks the registration row until commit, so a revocation cannot slip in between.
    private func refusal(for push: AcceptedPush, on connection: PostgresConnection) async throws -> APNsRefusal? {
        let tokens = try await connection.query(
            "SELECT device, revoked_at FROM device_token WHERE token = \(push.token) FOR SHARE", logger: logger)
        for try await (device, revokedAt) in tokens.decode((String, Date?).self) {
            if let revokedAt {
                return APNsRefusal(.unregistered, "The token was revoked at \(revokedAt) (the app was uninstalled).", timestamp: revokedAt)
            }
            return device == push.device ? nil : APNsRefusal(.badDeviceToken, "The token now belongs to another device.")
        }
        let subscriptions = try await connection.query(
            "SELECT device, ended_at FROM webpush_subscription WHERE id = \(push.token) FOR SHARE", logger: logger)
        for try await (device, endedAt) in subscriptions.decode((String, Date?).self) {
            if let endedAt {
                return APNsRefusal(.unregistered, "The subscription ended at \(endedAt).", timestamp: endedAt)
            }
            return device == push.device ? nil : APNsRefusal(.badDeviceToken, "The subscription now belongs to another device.")
        }
        return APNsRefusal(.badDeviceToken, "The token or subscription \(push.token) is no longer registered.")
    }

    /// Adds a record of what happened to `push`.
    func record(_ push: AcceptedPush, _ what: String, _ detail: String, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            INSERT INTO push_record (device, app, apns_id, what, detail)
            VALUES (\(push.device), \(push.app), \(push.apnsID), \(what), \(detail))
            """, logger: logger)
    }

    /// `duration` in seconds, for `make_interval(secs => …)`.
    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
