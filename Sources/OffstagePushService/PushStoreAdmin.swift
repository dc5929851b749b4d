import Crypto
import Foundation
import Logging
import OffstagePush
import PostgresNIO

/// What an operator does to a gateway's database (`offstage-push keys|devices|status`): provider keys, enrolled
/// devices, and what is stored. Over one connection; opening brings the schema up to date.
public final class PushStoreAdmin: Sendable {
    private let connection: PostgresConnection
    private let logger: Logger
    /// The database.
    public let database: PushDatabase

    private init(connection: PostgresConnection, database: PushDatabase, logger: Logger) {
        self.connection = connection
        self.database = database
        self.logger = logger
    }

    /// Connects to `database` and brings its schema up to date; throws naming the URL and the fix.
    public static func open(database: PushDatabase, logger: Logger = Logger(label: "offstage.push.admin")) async throws -> PushStoreAdmin {
        try await PushStoreMigrations.run(database, logger: logger)
        return PushStoreAdmin(connection: try await database.connect(logger: logger), database: database, logger: logger)
    }

    /// Closes the connection.
    public func close() async { try? await connection.close() }

    // MARK: Provider keys

    /// Registers (or replaces) provider key `key`; its PEM must be a P-256 public key.
    public func addProviderKey(_ key: ProviderKey) async throws {
        guard (try? P256.Signing.PublicKey(pemRepresentation: key.publicKeyPEM)) != nil else {
            throw PushStoreError(
                "The public key of \(key.id) is not a P-256 public key in PEM (-----BEGIN PUBLIC KEY-----); give the public half of the app server's .p8 key.")
        }
        let topics = key.allowedTopics.map { Array($0).sorted() }
        try await connection.query(
            """
            INSERT INTO provider_key (id, team_id, public_key_pem, topics) VALUES
                (\(key.id), \(key.teamID), \(key.publicKeyPEM), \(topics))
            ON CONFLICT (id) DO UPDATE SET team_id = EXCLUDED.team_id, public_key_pem = EXCLUDED.public_key_pem,
                topics = EXCLUDED.topics
            """, logger: logger)
        try await keysChanged(key.id)
    }

    /// Every provider key, by id.
    public func providerKeys() async throws -> [ProviderKey] {
        var keys: [ProviderKey] = []
        for try await (id, team, pem, topics) in try await connection.query(
            "SELECT id, team_id, public_key_pem, topics FROM provider_key ORDER BY id", logger: logger
        ).decode((String, String, String, [String]?).self) {
            keys.append(ProviderKey(id: id, teamID: team, publicKeyPEM: pem, allowedTopics: topics.map(Set.init)))
        }
        return keys
    }

    /// Removes provider key `id`; whether there was one.
    @discardableResult
    public func removeProviderKey(id: String) async throws -> Bool {
        let removed = try await connection.query("DELETE FROM provider_key WHERE id = \(id) RETURNING id", logger: logger).collect().count > 0
        if removed { try await keysChanged(id) }
        return removed
    }

    /// Tells every node that key `id` changed (after the change committed): they forget the provider tokens they
    /// verified with it.
    private func keysChanged(_ id: String) async throws {
        try await connection.query("SELECT pg_notify(\(PostgresPushStore.keysChannel), \(id))", logger: logger)
    }

    // MARK: Devices

    /// Enrolls device `name` with a new random secret (32 bytes, base64url), returned once: only its SHA-256 is
    /// kept. Enrolling a device again replaces its secret.
    public func enroll(device name: String) async throws -> String {
        guard !name.isEmpty, name.utf8.count <= 255, !name.contains(":") else {
            throw PushStoreError("The device name \(name.prefix(80)) is empty, over 255 bytes or has a colon; give e.g. phone-1.")
        }
        let secret = Base64URL.encode(Data(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }))
        let digest = Data(SHA256.hash(data: Data(secret.utf8)))
        try await connection.query(
            """
            INSERT INTO device (name, secret_sha256) VALUES (\(name), \(digest))
            ON CONFLICT (name) DO UPDATE SET secret_sha256 = EXCLUDED.secret_sha256, enrolled_at = now()
            """, logger: logger)
        return secret
    }

    /// Removes device `name` with its tokens, subscriptions and stored pushes; whether there was one.
    @discardableResult
    public func removeDevice(_ name: String) async throws -> Bool {
        try await connection.query("DELETE FROM device WHERE name = \(name) RETURNING name", logger: logger).collect().count > 0
    }

    /// Every enrolled device with what is stored for it, by name. `connectedWindow` is the nodes' (a device that
    /// pulled within it counts as connected).
    public func devices(connectedWindow: Duration = .seconds(90)) async throws -> [PushDeviceStatus] {
        let window = PostgresPushStore.seconds(connectedWindow)
        var devices: [PushDeviceStatus] = []
        for try await (name, enrolledAt, node, seenAt, connected, stored, oldest, tokens, subscriptions) in try await connection.query(
            """
            SELECT d.name, d.enrolled_at, l.node, l.seen_at,
                coalesce(l.seen_at > now() - make_interval(secs => \(window)), false),
                (SELECT count(*) FROM stored_push s WHERE s.device = d.name),
                (SELECT min(accepted_at) FROM stored_push s WHERE s.device = d.name),
                (SELECT count(*) FROM device_token t WHERE t.device = d.name AND t.revoked_at IS NULL),
                (SELECT count(*) FROM webpush_subscription w WHERE w.device = d.name AND w.ended_at IS NULL)
            FROM device d LEFT JOIN device_link l ON l.device = d.name ORDER BY d.name
            """, logger: logger
        ).decode((String, Date, String?, Date?, Bool, Int64, Date?, Int64, Int64).self) {
            devices.append(
                PushDeviceStatus(
                    name: name, enrolledAt: enrolledAt, connectedNode: connected ? node : nil, lastSeenAt: seenAt,
                    storedPushes: Int(stored), oldestStoredAt: oldest, liveTokens: Int(tokens), liveSubscriptions: Int(subscriptions)))
        }
        return devices
    }

    /// The newest `limit` records, newest first.
    public func records(limit: Int = 20) async throws -> [PushRecord] {
        var records: [PushRecord] = []
        for try await (at, device, app, apnsID, what, detail) in try await connection.query(
            "SELECT at, device, app, apns_id, what, detail FROM push_record ORDER BY id DESC LIMIT \(limit)", logger: logger
        ).decode((Date, String, String, String, String, String).self) {
            records.append(PushRecord(at: at, device: device, app: app, apnsID: apnsID, what: what, detail: detail))
        }
        return records
    }
}

/// An enrolled device and what the gateway holds for it.
public struct PushDeviceStatus: Codable, Sendable, Hashable {
    /// The device's name.
    public var name: String
    /// When it was (last) enrolled.
    public var enrolledAt: Date
    /// The node it pulls from, when it pulled within the connected window; nil when it is not connected.
    public var connectedNode: String?
    /// When it last pulled, if ever (since its node last shut down).
    public var lastSeenAt: Date?
    /// How many pushes are stored for it (sent and not acknowledged, or not sent yet).
    public var storedPushes: Int
    /// When the oldest of them was accepted.
    public var oldestStoredAt: Date?
    /// Its device tokens not revoked.
    public var liveTokens: Int
    /// Its Web Push subscriptions not ended.
    public var liveSubscriptions: Int
}

/// Something the gateway did to a push other than store and send it: `dropped` (expiration 0, device away),
/// `collapsed` (a newer push with its collapse id replaced it), `expired`.
public struct PushRecord: Codable, Sendable, Hashable {
    /// When.
    public var at: Date
    /// The device.
    public var device: String
    /// The app.
    public var app: String
    /// The push's `apns-id`.
    public var apnsID: String
    /// What happened.
    public var what: String
    /// Why.
    public var detail: String
}
