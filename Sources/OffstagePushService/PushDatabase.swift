import Foundation
import Logging
import NIOSSL
import PostgresNIO

/// Where the gateway's PostgreSQL database is: a `postgres://user[:password]@host[:port]/database` URL.
///
/// The query `?sslmode=disable|prefer|require` chooses TLS (default `prefer` for a remote host, `disable` for
/// loopback). The password is never shown: ``redacted`` is the URL for messages.
public struct PushDatabase: Sendable, Hashable {
    /// How the connection uses TLS.
    public enum TLSMode: String, Sendable, Hashable {
        /// Plain TCP.
        case disable
        /// TLS when the server offers it.
        case prefer
        /// TLS, or no connection.
        case require
    }

    /// The server's host name or address.
    public var host: String
    /// The server's port.
    public var port: Int
    /// The role to connect as.
    public var user: String
    /// The role's password, if it has one.
    public var password: String?
    /// The database.
    public var database: String
    /// How the connection uses TLS.
    public var tls: TLSMode

    /// Creates a database address.
    public init(host: String, port: Int = 5432, user: String, password: String? = nil, database: String, tls: TLSMode = .disable) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.tls = tls
    }

    /// Parses a `postgres://` (or `postgresql://`) URL; throws naming what is wrong and the shape to give.
    public init(url: String) throws(PushStoreError) {
        let shape = "give e.g. postgres://offstage@127.0.0.1:5432/offstage"
        guard let parsed = URLComponents(string: url), let scheme = parsed.scheme?.lowercased(),
            scheme == "postgres" || scheme == "postgresql"
        else {
            throw PushStoreError("The database URL \(Self.redact(url)) is not a postgres:// URL; \(shape).")
        }
        guard let host = parsed.host, !host.isEmpty else {
            throw PushStoreError("The database URL \(Self.redact(url)) names no host; \(shape).")
        }
        let database = String(parsed.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else {
            throw PushStoreError("The database URL \(Self.redact(url)) names no database (the path); \(shape).")
        }
        guard let user = parsed.user, !user.isEmpty else {
            throw PushStoreError("The database URL \(Self.redact(url)) names no user (before @); \(shape).")
        }
        var tls: TLSMode = ["127.0.0.1", "localhost", "::1"].contains(host) ? .disable : .prefer
        for item in parsed.queryItems ?? [] {
            guard item.name == "sslmode", let value = item.value, let mode = TLSMode(rawValue: value) else {
                throw PushStoreError(
                    "The database URL \(Self.redact(url)) has the query \(item.name)=\(item.value ?? ""); only sslmode=disable, prefer or require is understood.")
            }
            tls = mode
        }
        self.init(
            host: host, port: parsed.port ?? 5432, user: user.removingPercentEncoding ?? user,
            password: parsed.password.map { $0.removingPercentEncoding ?? $0 },
            database: database.removingPercentEncoding ?? database, tls: tls)
    }

    /// The URL without the password, for messages.
    public var redacted: String {
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return "postgres://\(user)\(password == nil ? "" : ":***")@\(bracketed):\(port)/\(database)"
    }

    /// This address with another database (a test's own, or `postgres` to create one).
    public func with(database: String) -> PushDatabase {
        var copy = self
        copy.database = database
        return copy
    }

    /// `url` with any password replaced by `***`.
    static func redact(_ url: String) -> String {
        guard var parsed = URLComponents(string: url), parsed.password != nil else { return url }
        parsed.password = "***"
        return parsed.string ?? url
    }

    /// The pooled client's configuration.
    var clientConfiguration: PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS
        switch self.tls {
        case .disable: tls = .disable
        case .prefer: tls = .prefer(.makeClientConfiguration())
        case .require: tls = .require(.makeClientConfiguration())
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: tls)
        configuration.options.connectTimeout = .seconds(10)
        return configuration
    }

    /// A single connection's configuration (the `LISTEN` connection, migrations, the first check).
    func connectionConfiguration() throws -> PostgresConnection.Configuration {
        let tls: PostgresConnection.Configuration.TLS
        switch self.tls {
        case .disable: tls = .disable
        case .prefer: tls = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
        case .require: tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        }
        var configuration = PostgresConnection.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: tls)
        configuration.options.connectTimeout = .seconds(10)
        return configuration
    }

    /// Opens one connection; throws naming the URL and the fix when the server cannot be reached.
    func connect(logger: Logger) async throws -> PostgresConnection {
        do {
            return try await PostgresConnection.connect(configuration: try connectionConfiguration(), id: 0, logger: logger)
        } catch {
            throw PushStoreError(
                "The database \(redacted) cannot be reached (\(PushStoreError.explain(error))); start PostgreSQL or fix --database.")
        }
    }
}
