import Foundation
import Logging
import OffstagePush
import OffstagePushService
import PostgresNIO
import Testing
import TestProcesses

/// One PostgreSQL server for the suite it is attached to, started before its first test and stopped (by pid) after
/// its last; each test makes its own database on it.
struct PostgresSuiteTrait: SuiteTrait, TestScoping {
    func provideScope(for test: Test, testCase: Test.Case?, performing function: () async throws -> Void) async throws {
        let server = try PostgresServer.start()
        defer { server.stop() }
        try await PostgresSuite.$server.withValue(server) { try await function() }
    }
}

extension Trait where Self == PostgresSuiteTrait {
    /// A private PostgreSQL server for the suite.
    static var postgres: Self { Self() }
}

/// The suite's server, and what its tests share.
enum PostgresSuite {
    @TaskLocal static var server: PostgresServer?

    /// A new, empty database on the suite's server.
    static func database() throws -> PushDatabase {
        guard let server else { throw PushStoreError("The test's suite has no .postgres trait.") }
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        return try PushDatabase(url: server.createDatabase(name))
    }

    static let logger: Logger = {
        var logger = Logger(label: "offstage.push.test")
        logger.logLevel = .warning
        return logger
    }()

    /// Runs `body` with a store of node `node` on `database`, closed afterwards whatever happens.
    static func withStore<Result>(
        _ database: PushDatabase, node: String = "a", _ body: (PostgresPushStore) async throws -> Result
    ) async throws -> Result {
        let store = try await PostgresPushStore.open(database: database, configuration: .init(node: node), logger: logger)
        do {
            let result = try await body(store)
            await store.close()
            return result
        } catch {
            await store.close()
            throw error
        }
    }

    /// Runs `body` with an admin connection to `database`.
    static func withAdmin<Result>(_ database: PushDatabase, _ body: (PushStoreAdmin) async throws -> Result) async throws -> Result {
        let admin = try await PushStoreAdmin.open(database: database, logger: logger)
        do {
            let result = try await body(admin)
            await admin.close()
            return result
        } catch {
            await admin.close()
            throw error
        }
    }

    /// Enrolls `device` and registers a live token of `app` for it; returns the secret and the token.
    @discardableResult
    static func enroll(
        _ device: String, app: String = "com.example.news", in database: PushDatabase, store: PostgresPushStore
    ) async throws -> (secret: String, token: String) {
        let secret = try await withAdmin(database) { try await $0.enroll(device: device) }
        let token = newToken()
        try await store.register(DeviceRegistrations(tokens: [.init(token: token, app: app)]), device: device)
        return (secret, token)
    }

    /// 64 random lowercase hexadecimal digits.
    static func newToken() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    /// A push to `token` of `app` on `device` as the gateway accepts it.
    static func push(
        to token: String, device: String, app: String = "com.example.news", id: String = UUID().uuidString,
        collapseID: String? = nil, expiration: Date? = nil, attemptOnce: Bool = false, body: String = "hello"
    ) -> AcceptedPush {
        let payload = Data(#"{"aps":{"alert":{"body":"\#(body)"}}}"#.utf8)
        return AcceptedPush(
            apnsID: id, token: token, app: app, device: device, pushType: .alert, priority: .immediate,
            expiration: expiration, collapseID: collapseID, payload: payload,
            aps: APS(alert: APSAlert(body: body)), acceptedAt: Date(), attemptOnce: attemptOnce)
    }

    /// A connection of its own to `database` (for what a test does beside the store).
    static func connection(_ database: PushDatabase) async throws -> PostgresConnection {
        try await PostgresConnection.connect(
            configuration: .init(
                host: database.host, port: database.port, username: database.user, password: nil, database: database.database, tls: .disable),
            id: 1, logger: logger)
    }

    /// Polls `condition` every 10 ms until it holds or `timeout` passes; whether it held.
    static func eventually(timeout: Duration = .seconds(10), _ condition: () async throws -> Bool) async rethrows -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return try await condition()
    }
}
