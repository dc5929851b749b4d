import Crypto
import Foundation
import OffstagePush
import PostgresNIO

/// The device link's port (decisions 0035, 0036): devices authenticate, register, and pull their stored pushes.
extension PostgresPushStore: DeviceLinkBackend {
    /// Whether `secret` is `device`'s enrolled secret: SHA-256 digests compared in constant time.
    public func authenticate(device: String, secret: String) async throws -> Bool {
        let given = Data(SHA256.hash(data: Data(secret.utf8)))
        var stored: Data?
        for try await digest in try await client.query(
            "SELECT secret_sha256 FROM device WHERE name = \(device)", logger: logger
        ).decode(Data.self) {
            stored = digest
        }
        // An unknown device is compared too, so the answer takes as long either way.
        let expected = stored ?? Data(repeating: 0, count: given.count)
        guard expected.count == given.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(expected, given) { difference |= a ^ b }
        return difference == 0 && stored != nil
    }

    /// Upserts the device's tokens and subscriptions in one transaction. A token or subscription id that belongs
    /// to another device throws ``DeviceLinkError`` and changes nothing. An ending is for good: a registration that
    /// still lists a revoked token as live (a device's older snapshot arriving late) leaves it revoked.
    public func register(_ registrations: DeviceRegistrations, device: String) async throws {
        try await transaction { connection in
            for token in registrations.tokens {
                let revokedAt = token.revokedAtMillis.map(LinkedPush.date)
                let rows = try await connection.query(
                    """
                    INSERT INTO device_token (token, device, app, revoked_at) VALUES
                        (\(token.token), \(device), \(token.app), \(revokedAt))
                    ON CONFLICT (token) DO UPDATE SET app = EXCLUDED.app,
                        revoked_at = COALESCE(device_token.revoked_at, EXCLUDED.revoked_at)
                    WHERE device_token.device = EXCLUDED.device RETURNING token
                    """, logger: self.logger
                ).collect()
                guard !rows.isEmpty else {
                    throw DeviceLinkError(
                        description: "The token \(token.token) is registered to another device; register a token this device was issued.")
                }
            }
            for subscription in registrations.subscriptions {
                let endedAt = subscription.endedAtMillis.map(LinkedPush.date)
                let key = subscription.applicationServerKey.flatMap(Base64URL.decode)
                let rows = try await connection.query(
                    """
                    INSERT INTO webpush_subscription (id, device, app, application_server_key, ended_at) VALUES
                        (\(subscription.id), \(device), \(subscription.app), \(key), \(endedAt))
                    ON CONFLICT (id) DO UPDATE SET app = EXCLUDED.app,
                        application_server_key = EXCLUDED.application_server_key,
                        ended_at = COALESCE(webpush_subscription.ended_at, EXCLUDED.ended_at)
                    WHERE webpush_subscription.device = EXCLUDED.device RETURNING id
                    """, logger: self.logger
                ).collect()
                guard !rows.isEmpty else {
                    throw DeviceLinkError(
                        description: "The subscription \(subscription.id) is registered to another device; register a subscription this device made.")
                }
            }
        }
    }

    /// Deletes the acknowledged deliveries, records the device as connected here, deletes its expired pushes with
    /// a record, and claims what is stored for it, oldest first; when nothing is, waits up to `wait` for this
    /// node's notification for the device and looks again. Returns early, possibly empty, when the node shuts
    /// down.
    public func pull(device: String, acknowledging acks: [String], wait: Duration) async throws -> [LinkedPush] {
        let deadline = ContinuousClock.now + wait
        var acknowledged = acks.compactMap { Int64($0) }
        while true {
            // Registered before looking, so a push stored between the look and the wait still wakes this pull.
            let ticket = waiters.register(device: device)
            defer { waiters.remove(ticket) }
            let batch = try await claim(device: device, acknowledging: acknowledged)
            acknowledged = []
            let left = deadline - ContinuousClock.now
            if !batch.isEmpty || left <= .zero || isClosing || Task.isCancelled { return batch }
            await waiters.wait(ticket, timeout: left)
            // A node shutting down answers now, and touches the device's link no more.
            if isClosing { return [] }
        }
    }

    /// One look, in one transaction: acknowledgements, the link, expiry, then a claim of what is not locked by
    /// another pull.
    private func claim(device: String, acknowledging acks: [Int64]) async throws -> [LinkedPush] {
        let window = Self.seconds(configuration.connectedWindow)
        let rows = try await transaction { connection -> [PostgresRow] in
            try await self.lockDevice(device, on: connection)
            if !acks.isEmpty {
                try await connection.query(
                    "DELETE FROM stored_push WHERE device = \(device) AND delivery = ANY(\(acks))", logger: self.logger)
            }
            try await connection.query(
                """
                INSERT INTO device_link (device, node, seen_at) VALUES (\(device), \(self.node), now())
                ON CONFLICT (device) DO UPDATE SET node = EXCLUDED.node, seen_at = EXCLUDED.seen_at
                """, logger: self.logger)
            // An attempt-once push not delivered within the connected window is as good as expired.
            try await connection.query(
                """
                WITH gone AS (
                    DELETE FROM stored_push WHERE delivery IN (
                        SELECT delivery FROM stored_push WHERE device = \(device)
                        AND (expires_at <= now() OR (attempt_once AND accepted_at < now() - make_interval(secs => \(window))))
                        FOR UPDATE SKIP LOCKED)
                    RETURNING device, app, apns_id, attempt_once)
                INSERT INTO push_record (device, app, apns_id, what, detail)
                SELECT device, app, apns_id, 'expired',
                    CASE WHEN attempt_once THEN 'expiration 0 and not delivered while the device was connected'
                    ELSE 'expired before the device pulled it' END
                FROM gone
                """, logger: self.logger)
            return try await connection.query(
                """
                WITH picked AS (
                    SELECT delivery FROM stored_push WHERE device = \(device)
                    ORDER BY delivery LIMIT \(self.configuration.batchSize) FOR UPDATE SKIP LOCKED)
                UPDATE stored_push AS s SET claimed_by = \(self.node), claimed_at = now(), sends = s.sends + 1
                FROM picked WHERE s.delivery = picked.delivery
                RETURNING s.delivery, s.apns_id, s.token, s.app, s.push_type, s.priority, s.expires_at, s.attempt_once,
                    s.collapse_id, s.payload, s.accepted_at
                """, logger: self.logger
            ).collect()
        }
        var pushes: [(Int64, LinkedPush)] = []
        for row in rows {
            let (delivery, apnsID, token, app, type, priority, expiresAt, attemptOnce, collapseID, payload, acceptedAt) =
                try row.decode((Int64, String, String, String, String, Int16, Date?, Bool, String?, Data, Date).self)
            guard let pushType = PushType(rawValue: type), let pushPriority = PushPriority(rawValue: Int(priority)) else {
                throw PushStoreError("Stored push \(delivery) has push type \(type) or priority \(priority), which no gateway accepts.")
            }
            let accepted = AcceptedPush(
                apnsID: apnsID, token: token, app: app, device: device, pushType: pushType, priority: pushPriority,
                expiration: expiresAt, collapseID: collapseID, payload: payload, aps: APS(), acceptedAt: acceptedAt,
                attemptOnce: attemptOnce)
            pushes.append((delivery, LinkedPush(delivery: String(delivery), accepted)))
        }
        return pushes.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// Takes the device's lock until the transaction ends. A pull's look and an accept for the same device take turns:
    /// either the push is stored before the look (which finds it), or the look's link to this node is committed before
    /// the accept reads it (which then notifies this node). Without it, an accept on another node could read the link
    /// before a first pull's look committed it and store its push after that look: the push would wait for the pull's
    /// time-out instead of waking it.
    func lockDevice(_ device: String, on connection: PostgresConnection) async throws {
        try await connection.query(
            "SELECT pg_advisory_xact_lock(hashtext('offstage_push_device'), hashtext(\(device)))", logger: logger)
    }
}
