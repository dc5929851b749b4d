import Logging
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// The gateway's HTTP server: HTTP/2 (h2c with prior knowledge, or TLS with ALPN `h2`) and HTTP/1.1 (cleartext, or
/// TLS with ALPN `http/1.1`) on the same port, routing each request by its path. Every route is served in both.
///
/// A connection's protocol is told by its first bytes (the HTTP/2 client preface, or anything else), after the TLS
/// handshake when there is one.
///
/// ```swift
/// let gateway = APNsGateway(backend: store)
/// let server = PushGatewayServer(configuration: .init(port: 2197), router: PushRouter([APNsRoute(gateway: gateway)]))
/// try await server.start()
/// …
/// await server.shutdown()
/// ```
public final class PushGatewayServer: Sendable {
    private struct State {
        var listener: (any Channel)?
        var connections: [ObjectIdentifier: any Channel] = [:]
        var shuttingDown = false
    }

    private let configuration: PushGatewayServerConfiguration
    private let router: PushRouter
    private let group: any EventLoopGroup
    private let logger: Logger
    private let state = Mutex(State())

    /// Creates a server; nothing listens before ``start()``.
    public init(
        configuration: PushGatewayServerConfiguration,
        router: PushRouter,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "offstage.push.server")
    ) {
        self.configuration = configuration
        self.router = router
        self.group = eventLoopGroup
        self.logger = logger
    }

    /// The port the server listens on, once started (the chosen one when the configuration says 0).
    public var port: Int? {
        state.withLock { $0.listener?.localAddress?.port }
    }

    /// Whether the listener accepts new connections (false before ``start()`` and once ``shutdown()`` closed it).
    public var isAcceptingConnections: Bool {
        state.withLock { $0.listener?.isActive ?? false }
    }

    /// How many client connections are open.
    public var connectionCount: Int {
        state.withLock { $0.connections.count }
    }

    /// Binds the listener; returns once the server accepts connections. A server starts once.
    public func start() async throws {
        try state.withLock { state in
            guard state.listener == nil, !state.shuttingDown else {
                throw PushGatewayServerError(description: "The push gateway server was already started; create a new one to listen again.")
            }
        }
        let sslContext = try configuration.tls.map(Self.makeSSLContext)
        let router = self.router
        let configuration = self.configuration
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    try Self.configure(channel, sslContext: sslContext, router: router, configuration: configuration)
                    self.register(channel)
                }
            }
        let listener: any Channel
        do {
            listener = try await bootstrap.bind(host: configuration.host, port: configuration.port).get()
        } catch {
            throw PushGatewayServerError(
                description: "The push gateway cannot listen on \(configuration.host):\(configuration.port) (\(error)); choose a free port or another address.")
        }
        state.withLock { $0.listener = listener }
        logger.info(
            "Push gateway listening",
            metadata: ["address": "\(listener.localAddress.map { "\($0)" } ?? "?")", "tls": "\(configuration.tls != nil)"])
    }

    /// Stops accepting connections, lets open streams finish (GOAWAY), and closes every connection; connections
    /// still busy after the grace period are closed anyway.
    public func shutdown() async {
        let (listener, connections) = state.withLock { state in
            state.shuttingDown = true
            return (state.listener, Array(state.connections.values))
        }
        try? await listener?.close()
        let grace = configuration.shutdownGracePeriod
        for connection in connections {
            connection.eventLoop.execute {
                connection.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
                // The bound: a client that never acknowledges the GOAWAY cannot hold the shutdown.
                let forced = connection.eventLoop.scheduleTask(in: grace) { connection.close(promise: nil) }
                connection.closeFuture.whenComplete { _ in forced.cancel() }
            }
        }
        for connection in connections {
            try? await connection.closeFuture.get()
        }
        state.withLock { $0.listener = nil }
    }

    private func register(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        let refused = state.withLock { state in
            if state.shuttingDown { return true }
            state.connections[id] = channel
            return false
        }
        if refused {
            channel.close(promise: nil)
            return
        }
        channel.closeFuture.whenComplete { [self] _ in
            _ = state.withLock { $0.connections.removeValue(forKey: id) }
        }
    }

    private static func configure(
        _ channel: any Channel, sslContext: NIOSSLContext?, router: PushRouter, configuration: PushGatewayServerConfiguration
    ) throws {
        let pipeline = channel.pipeline.syncOperations
        if let sslContext {
            try pipeline.addHandler(NIOSSLServerHandler(context: sslContext))
        }
        let scheme = sslContext == nil ? "http" : "https"
        try pipeline.addHandler(
            ProtocolSniffer(maximumIdleTime: configuration.maximumIdleTime) { context, sniffed in
                let pipeline = context.pipeline.syncOperations
                switch sniffed {
                case .http2:
                    try PushConnectionPipeline.addHTTP2(
                        to: pipeline, channel: context.channel, router: router, scheme: scheme, configuration: configuration)
                case .http1:
                    try PushConnectionPipeline.addHTTP1(
                        to: pipeline, router: router, scheme: scheme, configuration: configuration)
                }
            })
    }

    private static func makeSSLContext(_ tls: PushGatewayServerConfiguration.TLS) throws -> NIOSSLContext {
        do {
            let chain = try NIOSSLCertificate.fromPEMBytes(Array(tls.certificateChainPEM.utf8))
            guard !chain.isEmpty else {
                throw PushGatewayServerError(description: "The TLS certificate chain PEM holds no certificate; give the server certificate first.")
            }
            let key = try NIOSSLPrivateKey(bytes: Array(tls.privateKeyPEM.utf8), format: .pem)
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
            configuration.applicationProtocols = ["h2", "http/1.1"]
            return try NIOSSLContext(configuration: configuration)
        } catch let error as PushGatewayServerError {
            throw error
        } catch {
            throw PushGatewayServerError(
                description: "The TLS certificate chain or private key cannot be used (\(error)); give PEM files of a certificate and its key.")
        }
    }
}

