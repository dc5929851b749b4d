import Logging
import PostgresNIO

/// The gateway's schema, as numbered migrations (decision 0036).
///
/// Each migration runs once per database: its version is a row of `offstage_push_migration`. All pending ones run
/// in one transaction that first takes an advisory lock, so nodes starting at once against one database apply each
/// migration exactly once (the second waits for the first, then finds nothing to do). Never edit a migration that
/// has shipped: add the next one.
public enum PushStoreMigrations {
    /// A migration: its version, a name for the table, and its statements.
    struct Migration {
        var version: Int
        var name: String
        var statements: [String]
    }

    /// The advisory lock key all nodes take while migrating (any fixed number; "offstage" in ASCII).
    static let lockKey: Int64 = 0x6F66_6673_7461_6765

    /// Every migration, oldest first.
    static let all: [Migration] = [
        Migration(
            version: 1, name: "provider keys, devices, tokens, subscriptions, stored pushes, links, records",
            statements: [
                """
                CREATE TABLE provider_key (
                    id text PRIMARY KEY, team_id text NOT NULL, public_key_pem text NOT NULL, topics text[],
                    created_at timestamptz NOT NULL DEFAULT now())
                """,
                """
                CREATE TABLE device (
                    name text PRIMARY KEY, secret_sha256 bytea NOT NULL, enrolled_at timestamptz NOT NULL DEFAULT now())
                """,
                """
                CREATE TABLE device_token (
                    token text PRIMARY KEY, device text NOT NULL REFERENCES device(name) ON DELETE CASCADE,
                    app text NOT NULL, revoked_at timestamptz, registered_at timestamptz NOT NULL DEFAULT now())
                """,
                "CREATE INDEX device_token_device ON device_token (device)",
                """
                CREATE TABLE webpush_subscription (
                    id text PRIMARY KEY, device text NOT NULL REFERENCES device(name) ON DELETE CASCADE,
                    app text NOT NULL, application_server_key bytea, ended_at timestamptz,
                    registered_at timestamptz NOT NULL DEFAULT now())
                """,
                "CREATE INDEX webpush_subscription_device ON webpush_subscription (device)",
                """
                CREATE TABLE stored_push (
                    delivery bigserial PRIMARY KEY, device text NOT NULL REFERENCES device(name) ON DELETE CASCADE,
                    apns_id text NOT NULL, token text NOT NULL, app text NOT NULL, push_type text NOT NULL,
                    priority smallint NOT NULL, expires_at timestamptz, attempt_once boolean NOT NULL,
                    collapse_id text, payload bytea NOT NULL, accepted_at timestamptz NOT NULL,
                    claimed_by text, claimed_at timestamptz, sends integer NOT NULL DEFAULT 0,
                    UNIQUE (device, apns_id))
                """,
                "CREATE INDEX stored_push_device ON stored_push (device, delivery)",
                "CREATE INDEX stored_push_collapse ON stored_push (device, app, collapse_id) WHERE collapse_id IS NOT NULL",
                """
                CREATE TABLE device_link (
                    device text PRIMARY KEY REFERENCES device(name) ON DELETE CASCADE, node text NOT NULL,
                    seen_at timestamptz NOT NULL)
                """,
                "CREATE INDEX device_link_node ON device_link (node)",
                """
                CREATE TABLE push_record (
                    id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now(), device text NOT NULL,
                    app text NOT NULL, apns_id text NOT NULL, what text NOT NULL, detail text NOT NULL)
                """,
                "CREATE INDEX push_record_at ON push_record (at)",
            ])
    ]

    /// The newest schema version this build knows.
    public static var latestVersion: Int { all.last?.version ?? 0 }

    /// Brings `database` to ``latestVersion``; returns the versions it applied (empty when it was up to date).
    @discardableResult
    public static func run(_ database: PushDatabase, logger: Logger) async throws -> [Int] {
        let connection = try await database.connect(logger: logger)
        do {
            let applied = try await run(on: connection, database: database, logger: logger)
            try? await connection.close()
            return applied
        } catch {
            try? await connection.close()
            throw error
        }
    }

    private static func run(on connection: PostgresConnection, database: PushDatabase, logger: Logger) async throws -> [Int] {
        do {
            return try await connection.withTransaction(logger: logger) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
                try await connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS offstage_push_migration (
                        version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
                    """, logger: logger)
                var done: Set<Int> = []
                for try await version in try await connection.query(
                    "SELECT version FROM offstage_push_migration", logger: logger
                ).decode(Int.self) {
                    done.insert(version)
                }
                if let newest = done.max(), newest > latestVersion {
                    throw PushStoreError(
                        "The database \(database.redacted) has schema version \(newest), newer than this offstage-push knows (\(latestVersion)); run a newer offstage-push.")
                }
                var applied: [Int] = []
                for migration in all where !done.contains(migration.version) {
                    for statement in migration.statements {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                    try await connection.query(
                        "INSERT INTO offstage_push_migration (version, name) VALUES (\(migration.version), \(migration.name))",
                        logger: logger)
                    applied.append(migration.version)
                }
                return applied
            }
        } catch {
            if let refusal = PushStoreError.unwrapped(error) as? PushStoreError { throw refusal }
            throw PushStoreError(
                "The schema of \(database.redacted) could not be brought to version \(latestVersion) (\(PushStoreError.explain(error))); check the role may create tables there.")
        }
    }
}
