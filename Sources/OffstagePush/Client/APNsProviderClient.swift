import Foundation
import NIOCore
import NIOHTTP2
import NIOPosix
import NIOSSL

/// Sends pushes like an app server: one HTTP/2 connection (h2c or TLS with ALPN `h2`), many concurrent streams, and
/// provider tokens signed with a P-256 key and reused for 50 minutes.
///
/// The CLI's `offstage push`, the tests and the benchmarks use it.
public final class APNsProviderClient: Sendable {
    /// Where to connect and how to authenticate.
    public struct Configuration: Sendable {
        /// TLS settings for the connection.
        public struct TLS: Sendable {
            /// The certificates to trust, PEM; nil trusts the system's roots.
            public var trustRootsPEM: String?
            /// The name to send (SNI) and check the certificate against; nil uses the host when it is a name.
            public var serverHostname: String?

            /// Creates TLS settings.
            public init(trustRootsPEM: String? = nil, serverHostname: String? = nil) {
                self.trustRootsPEM = trustRootsPEM
                self.serverHostname = serverHostname
            }
        }

        /// The provider key that signs tokens.
        public struct Credentials: Sendable {
            /// The key id (`kid`).
            public var keyID: String
            /// The team id (`iss`).
            public var teamID: String
            /// The P-256 private key, PEM (the `.p8` file).
            public var privateKeyPEM: String

            /// Creates credentials.
            public init(keyID: String, teamID: String, privateKeyPEM: String) {
                self.keyID = keyID
                self.teamID = teamID
                self.privateKeyPEM = privateKeyPEM
            }
        }

        /// The gateway's host.
        public var host: String
        /// The gateway's port.
        public var port: Int
        /// TLS, or nil for h2c with prior knowledge.
        public var tls: TLS?
        /// The key signing provider tokens, or nil to send no `authorization`.
        public var credentials: Credentials?

        /// Creates a configuration.
        public init(host: String, port: Int, tls: TLS? = nil, credentials: Credentials? = nil) {
            self.host = host
            self.port = port
            self.tls = tls
            self.credentials = credentials
        }
    }

    private let channel: any Channel
    private let multiplexer: NIOHTTP2Handler.StreamMultiplexer
    private let signer: ProviderTokenSigner?
    private let scheme: String
    private let authority: String

    private init(
        channel: any Channel, multiplexer: NIOHTTP2Handler.StreamMultiplexer, signer: ProviderTokenSigner?,
        configuration: Configuration
    ) {
        self.channel = channel
        self.multiplexer = multiplexer
        self.signer = signer
        self.scheme = configuration.tls == nil ? "http" : "https"
        self.authority = "\(configuration.host):\(configuration.port)"
    }

    /// Connects to the gateway (completing the TLS handshake when configured).
    public static func connect(
        _ configuration: Configuration, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> APNsProviderClient {
        var signer: ProviderTokenSigner?
        if let credentials = configuration.credentials {
            signer = try await ProviderTokenSigner(
                keyID: credentials.keyID, teamID: credentials.teamID, privateKeyPEM: credentials.privateKeyPEM)
        }
        let sslContext = try configuration.tls.map(makeSSLContext)
        let serverHostname = configuration.tls.flatMap { $0.serverHostname ?? hostname(configuration.host) }
        let connected: (any Channel, NIOHTTP2Handler.StreamMultiplexer)
        do {
            connected = try await ClientBootstrap(group: eventLoopGroup)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .connect(host: configuration.host, port: configuration.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        if let sslContext {
                            try pipeline.addHandler(NIOSSLClientHandler(context: sslContext, serverHostname: serverHostname))
                        }
                        let multiplexer = try pipeline.configureHTTP2Pipeline(
                            mode: .client, connectionConfiguration: .init(), streamConfiguration: .init(),
                            inboundStreamInitializer: { stream in stream.close() }
                        )
                        try pipeline.addHandler(ConnectionErrorHandler())
                        return (channel, multiplexer)
                    }
                }
        } catch {
            throw ProviderClientError(
                description: "Cannot connect to the push gateway at \(configuration.host):\(configuration.port) (\(error)); check that it runs and the address.")
        }
        return APNsProviderClient(channel: connected.0, multiplexer: connected.1, signer: signer, configuration: configuration)
    }

    /// Sends `notification` and returns the gateway's answer.
    public func send(_ notification: APNsNotification) async throws -> APNsResponse {
        try await send(method: "POST", path: notification.path, headers: notification.headers, body: notification.payload)
    }

    /// Sends any request on a new stream (with a provider token when the client has credentials) and returns the
    /// answer, read as APNs' (status, `apns-id`, error body).
    public func send(method: String, path: String, headers: [PushHeaderField], body: Data) async throws -> APNsResponse {
        try await send(method: method, path: path, headers: headers, body: body, trailers: [])
    }

    /// Sends a request whose body is followed by trailers (a shape the gateway must read too; for tests).
    func send(
        method: String, path: String, headers: [PushHeaderField], body: Data, trailers: [PushHeaderField]
    ) async throws -> APNsResponse {
        var fields = [(":method", method), (":scheme", scheme), (":path", path), (":authority", authority)]
        if let signer {
            fields.append((APNsHeaderName.authorization, "bearer \(try await signer.token())"))
        }
        fields.append(contentsOf: headers.map { ($0.name, $0.value) })
        let request = ClientStreamHandler.Request(headers: fields, body: body, trailers: trailers.map { ($0.name, $0.value) })
        let promise = channel.eventLoop.makePromise(of: APNsResponse.self)
        multiplexer.createStreamChannel { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandler(ClientStreamHandler(request: request, response: promise))
            }
        }.whenFailure { error in
            promise.fail(ProviderClientError(description: "Cannot open a stream to the push gateway (\(error)); reconnect."))
        }
        return try await promise.futureResult.get()
    }

    /// Whether the connection is open (a closed client must be connected again).
    public var isConnected: Bool { channel.isActive }

    /// Closes the connection.
    public func close() async {
        try? await channel.close()
    }

    private static func hostname(_ host: String) -> String? {
        let isAddress = host.contains(":") || host.allSatisfy { $0.isNumber || $0 == "." }
        return isAddress ? nil : host
    }

    private static func makeSSLContext(_ tls: Configuration.TLS) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.applicationProtocols = ["h2"]
        if let pem = tls.trustRootsPEM {
            do {
                configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8)))
            } catch {
                throw ProviderClientError(description: "The trusted certificates are not PEM (\(error)); give the CA certificate's PEM.")
            }
        }
        return try NIOSSLContext(configuration: configuration)
    }
}
