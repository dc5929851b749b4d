import Foundation
import Logging
import NIOCore
import NIOPosix
import OffstagePush

/// One node of the multi-device gateway (SPEC NT-5): the APNs provider API, the Web Push front door and the device
/// link on one port, over a ``PostgresPushStore``.
///
/// ```swift
/// let node = try await PushServiceNode.start(.init(database: database, node: "push-1", host: "0.0.0.0", port: 443))
/// … node.port …
/// await node.shutdown()
/// ```
public final class PushServiceNode: Sendable {
    /// Where and how the node serves.
    public struct Configuration: Sendable {
        /// The database.
        public var database: PushDatabase
        /// The store's settings, with the node's name.
        public var store: PostgresPushStore.Configuration
        /// The address to listen on.
        public var host: String
        /// The port; 0 picks a free one.
        public var port: Int
        /// The certificate chain and key for TLS, or nil for h2c (loopback, or behind a proxy that terminates TLS).
        public var tls: PushGatewayServerConfiguration.TLS?
        /// The origins app servers reach the node by (`https://push.example.net`), for VAPID's audience.
        public var publicOrigins: [String]

        /// Creates a configuration.
        public init(
            database: PushDatabase, node: String, host: String = "127.0.0.1", port: Int = 0,
            tls: PushGatewayServerConfiguration.TLS? = nil, publicOrigins: [String] = []
        ) {
            self.database = database
            self.store = .init(node: node)
            self.host = host
            self.port = port
            self.tls = tls
            self.publicOrigins = publicOrigins
        }
    }

    /// The node's store.
    public let store: PostgresPushStore
    /// The APNs front door (told of key changes on any node through the store).
    public let gateway: APNsGateway
    private let server: PushGatewayServer
    private let configuration: Configuration

    private init(store: PostgresPushStore, gateway: APNsGateway, server: PushGatewayServer, configuration: Configuration) {
        self.store = store
        self.gateway = gateway
        self.server = server
        self.configuration = configuration
    }

    /// Opens the store (bringing the schema up to date) and listens; returns once the node accepts connections.
    public static func start(
        _ configuration: Configuration, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "offstage.push.node")
    ) async throws -> PushServiceNode {
        let store = try await PostgresPushStore.open(database: configuration.database, configuration: configuration.store, logger: logger)
        let gateway = APNsGateway(backend: store, logger: logger)
        store.onProviderKeysChanged { id in gateway.providerKeysChanged(keyID: id) }
        let webPush = WebPushGateway(backend: store, configuration: .init(publicOrigins: configuration.publicOrigins), logger: logger)
        let router = PushRouter([
            APNsRoute(gateway: gateway), WebPushRoute(gateway: webPush), WebPushMessageRoute(),
            DeviceLinkRoute(backend: store, logger: logger),
        ])
        let server = PushGatewayServer(
            configuration: .init(host: configuration.host, port: configuration.port, tls: configuration.tls),
            router: router, eventLoopGroup: eventLoopGroup, logger: logger)
        do {
            try await server.start()
        } catch {
            await store.close()
            throw error
        }
        return PushServiceNode(store: store, gateway: gateway, server: server, configuration: configuration)
    }

    /// The port the node listens on.
    public var port: Int { server.port ?? configuration.port }

    /// The node's own origin: `http://host:port` for h2c, `https://host:port` with TLS.
    public var url: String {
        let host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        return "\(configuration.tls == nil ? "http" : "https")://\(host):\(port)"
    }

    /// Shuts down gracefully: waiting pulls return at once (their devices pull again from another node), requests
    /// in flight finish, the node's device links are deleted, and the connections close.
    public func shutdown() async {
        store.beginShutdown()
        await server.shutdown()
        await store.close()
    }
}
