import Foundation
import Logging
import OffstagePush
import PostgresNIO
import Synchronization

/// The multi-device gateway's storage on PostgreSQL, as one node sees it (SPEC NT-5, decision 0036): the ports of
/// the APNs front door, the Web Push front door and the device link.
///
/// Queries go through a pooled `PostgresClient`; one dedicated connection `LISTEN`s on the node's channel, on which
/// an accepting node (any node) `NOTIFY`s the device when it stores a push for a device whose pull this node holds.
/// The listener reconnects when its connection drops, and then wakes every waiting pull, since a notification may
/// have been missed.
///
/// ```swift
/// let store = try await PostgresPushStore.open(database: PushDatabase(url: url), configuration: .init(node: "a"))
/// … serve APNsGateway(backend: store), DeviceLinkRoute(backend: store) …
/// await store.close()
/// ```
public final class PostgresPushStore: Sendable {
    /// How a node behaves.
    public struct Configuration: Sendable, Hashable {
        /// The node's name: 1 to 40 letters, digits, `-`, `_` or `.`; unique among the nodes of a database.
        public var node: String
        /// How recently a device must have pulled from a node to count as connected (for `apns-expiration: 0` and
        /// `TTL: 0`); longer than the longest pull wait, so a device in a waiting pull stays connected.
        public var connectedWindow: Duration
        /// How many pushes a pull answers at most.
        public var batchSize: Int
        /// How long records are kept.
        public var recordRetention: Duration
        /// How many pooled connections the node opens at most (besides the `LISTEN` one).
        public var maximumConnections: Int

        /// Creates a configuration.
        public init(
            node: String, connectedWindow: Duration = .seconds(90), batchSize: Int = 100,
            recordRetention: Duration = .seconds(7 * 86_400), maximumConnections: Int = 20
        ) {
            self.node = node
            self.connectedWindow = connectedWindow
            self.batchSize = batchSize
            self.recordRetention = recordRetention
            self.maximumConnections = maximumConnections
        }
    }

    private struct State {
        var clientTask: Task<Void, Never>?
        var listenerTask: Task<Void, Never>?
        var keysListenerTask: Task<Void, Never>?
        var maintenanceTask: Task<Void, Never>?
        /// The connections listening on the node's channel and on the keys channel.
        var listenConnection: PostgresConnection?
        var keysConnection: PostgresConnection?
        var listening = false
        var listeningForKeys = false
        var closed = false
        var providerKeysChanged: (@Sendable (String?) -> Void)?
    }

    /// The database.
    public let database: PushDatabase
    /// The node's configuration.
    public let configuration: Configuration
    let client: PostgresClient
    let logger: Logger
    let waiters = PushWaiters()
    private let state = Mutex(State())

    /// The node's name.
    public var node: String { configuration.node }

    /// The `NOTIFY` channel of `node`.
    public static func channel(of node: String) -> String { "offstage_push_node_\(node)" }

    /// The `NOTIFY` channel every node listens on for provider keys added, replaced or removed (the key id).
    public static let keysChannel = "offstage_push_keys"

    /// Has `handler` called with a provider key's id when any node's admin added, replaced or removed it, and with
    /// nil when notifications may have been missed (the `LISTEN` connection came back): the node's gateway forgets
    /// the provider tokens it verified with that key (or all), so a removed key stops working on every node at once.
    public func onProviderKeysChanged(_ handler: @escaping @Sendable (String?) -> Void) {
        state.withLock { $0.providerKeysChanged = handler }
    }

    private func providerKeysChanged(_ id: String?) {
        state.withLock { $0.providerKeysChanged }?(id)
    }

    /// What is wrong with `node` as a node name, or nil.
    public static func problem(node: String) -> String? {
        let allowed = node.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-_.".unicodeScalars.contains($0)) }
        guard !node.isEmpty, node.utf8.count <= 40, allowed else {
            return "The node name \(node.prefix(60)) is not 1 to 40 letters, digits, -, _ or .; give e.g. --node push-1."
        }
        return nil
    }

    private init(database: PushDatabase, configuration: Configuration, logger: Logger) {
        self.database = database
        self.configuration = configuration
        self.logger = logger
        var clientConfiguration = database.clientConfiguration
        clientConfiguration.options.maximumConnections = configuration.maximumConnections
        client = PostgresClient(configuration: clientConfiguration, backgroundLogger: logger)
    }

    /// Opens the node's store: brings the schema up to date, starts the pool, and returns once the node listens for
    /// its notifications. Throws, naming the URL and the fix, when the database cannot be reached.
    public static func open(
        database: PushDatabase, configuration: Configuration, logger: Logger = Logger(label: "offstage.push.store")
    ) async throws -> PostgresPushStore {
        if let problem = problem(node: configuration.node) { throw PushStoreError(problem) }
        try await PushStoreMigrations.run(database, logger: logger)
        let store = PostgresPushStore(database: database, configuration: configuration, logger: logger)
        let client = store.client
        let clientTask = Task { await client.run() }
        let listenerTask = Task { await store.listen() }
        let keysListenerTask = Task { await store.listenForKeys() }
        let maintenanceTask = Task { await store.maintain() }
        store.state.withLock {
            $0.clientTask = clientTask
            $0.listenerTask = listenerTask
            $0.keysListenerTask = keysListenerTask
            $0.maintenanceTask = maintenanceTask
        }
        let deadline = ContinuousClock.now + .seconds(15)
        while !store.isListening {
            if ContinuousClock.now >= deadline {
                await store.close()
                throw PushStoreError(
                    "The node could not LISTEN on \(database.redacted) within 15 s; check the database accepts more connections.")
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return store
    }

    /// Whether both `LISTEN` connections are up: the node's channel and the keys channel.
    public var isListening: Bool { state.withLock { $0.listening && $0.listeningForKeys } }

    /// How many pulls wait for a push on this node.
    public var waitingPullCount: Int { waiters.count }

    /// Ends every waiting pull now, and makes later pulls answer without waiting, while the store still stores
    /// and answers (the first step of a graceful shutdown; ``close()`` does it too).
    public func beginShutdown() {
        waiters.wakeAll(closing: true)
    }

    /// Shuts the node down: every waiting pull returns at once (later ones do not wait), this node's device links
    /// are deleted (its devices no longer count as connected), and the connections close.
    public func close() async {
        let (alreadyClosed, tasks, connections) = state.withLock { state in
            defer { state.closed = true }
            return (
                state.closed, [state.listenerTask, state.keysListenerTask, state.maintenanceTask],
                [state.listenConnection, state.keysConnection]
            )
        }
        waiters.wakeAll(closing: true)
        guard !alreadyClosed else { return }
        tasks.forEach { $0?.cancel() }
        for connection in connections { try? await connection?.close() }
        for task in tasks { await task?.value }
        do {
            try await client.query("DELETE FROM device_link WHERE node = \(node)", logger: logger)
        } catch {
            logger.warning("device links of the node not deleted", metadata: ["error": "\(PushStoreError.explain(error))"])
        }
        let clientTask = state.withLock { $0.clientTask }
        clientTask?.cancel()
        await clientTask?.value
    }

    /// Whether ``close()`` has begun.
    var isClosing: Bool { waiters.isClosed }

    /// Deletes records older than the retention.
    func pruneRecords() async throws {
        let seconds = Double(configuration.recordRetention.components.seconds)
        try await client.query("DELETE FROM push_record WHERE at < now() - make_interval(secs => \(seconds))", logger: logger)
    }

    /// Deletes old records now and every hour, until cancelled.
    private func maintain() async {
        while !Task.isCancelled {
            do {
                try await pruneRecords()
            } catch {
                if !Task.isCancelled {
                    logger.warning("old records not deleted", metadata: ["error": "\(PushStoreError.explain(error))"])
                }
            }
            try? await Task.sleep(for: .seconds(3600))
        }
    }

    /// Keeps one `LISTEN` connection open on the node's channel until cancelled, waking pulls by device.
    private func listen() async {
        await keepListening(
            on: Self.channel(of: node), connection: \.listenConnection,
            listening: { listening in
                self.state.withLock { $0.listening = listening }
                // Anything sent while no connection listened is picked up by the pulls' next look.
                if listening { self.waiters.wakeAll() }
            },
            received: { self.waiters.wake(device: $0) })
    }

    /// Keeps one `LISTEN` connection open on the keys channel until cancelled, telling the gateway which key changed;
    /// when it listens again, every key may have, since a notification may have been missed.
    private func listenForKeys() async {
        await keepListening(
            on: Self.keysChannel, connection: \.keysConnection,
            listening: { listening in
                self.state.withLock { $0.listeningForKeys = listening }
                if listening { self.providerKeysChanged(nil) }
            },
            received: { self.providerKeysChanged($0) })
    }

    /// Listens on `channel` on a connection of its own (kept at `connection` in the state, for ``close()``) until
    /// cancelled, connecting again with backoff when it drops; `listening` is told when it starts and stops.
    private func keepListening(
        on channel: String, connection slot: WritableKeyPath<State, PostgresConnection?> & Sendable,
        listening: @escaping @Sendable (Bool) -> Void, received: @escaping @Sendable (String) -> Void
    ) async {
        var delay = Duration.milliseconds(100)
        while !Task.isCancelled {
            // Closed on every path, a dropped one too: PostgresNIO requires a connection to be closed before it is
            // released (a debug build traps otherwise).
            var open: PostgresConnection?
            do {
                let connection = try await database.connect(logger: logger)
                open = connection
                let closed = state.withLock { state in
                    if !state.closed { state[keyPath: slot] = connection }
                    return state.closed
                }
                if closed {
                    try? await connection.close()
                    return
                }
                try await connection.listen(on: channel) { notifications in
                    delay = .milliseconds(100)
                    listening(true)
                    for try await notification in notifications { received(notification.payload) }
                }
                try? await connection.close()
            } catch {
                if !Task.isCancelled {
                    logger.warning(
                        "LISTEN connection lost; reconnecting",
                        metadata: ["node": "\(node)", "channel": "\(channel)", "error": "\(PushStoreError.explain(error))"])
                }
            }
            listening(false)
            if let open { try? await open.close() }
            state.withLock { $0[keyPath: slot] = nil }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(5))
        }
    }

    /// Runs `body` in a transaction on a pooled connection, showing our own refusals thrown inside as themselves.
    func transaction<Result: Sendable>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        do {
            return try await client.withTransaction(logger: logger) { connection in try await body(connection) }
        } catch {
            let inner = PushStoreError.unwrapped(error)
            if inner is PushStoreError || inner is DeviceLinkError { throw inner }
            throw error
        }
    }
}
