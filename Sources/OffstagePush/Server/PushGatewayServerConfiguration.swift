import NIOCore

/// Where and how the gateway listens.
public struct PushGatewayServerConfiguration: Sendable {
    /// A certificate chain and private key for TLS (ALPN `h2` and `http/1.1`).
    public struct TLS: Sendable {
        /// The server's certificate first, then any intermediates, PEM.
        public var certificateChainPEM: String
        /// The certificate's private key, PEM (PKCS#8 or the key type's own format).
        public var privateKeyPEM: String

        /// Creates a TLS setting.
        public init(certificateChainPEM: String, privateKeyPEM: String) {
            self.certificateChainPEM = certificateChainPEM
            self.privateKeyPEM = privateKeyPEM
        }
    }

    /// The address to listen on.
    public var host: String
    /// The port; 0 picks a free one (see ``PushGatewayServer/port``).
    public var port: Int
    /// TLS, or nil for cleartext: h2c with prior knowledge or HTTP/1.1 (loopback only, or behind a terminating proxy).
    public var tls: TLS?
    /// How many streams a client may have open at once on one HTTP/2 connection.
    public var maximumConcurrentStreams: Int
    /// How long in-flight streams may run after ``PushGatewayServer/shutdown()`` before their connections are
    /// closed.
    public var shutdownGracePeriod: TimeAmount
    /// Connections without an open stream (HTTP/2) or a request under way (HTTP/1.1) for this long are closed
    /// gracefully, as are connections that send nothing at all; nil keeps them.
    public var maximumIdleTime: TimeAmount?

    /// Creates a configuration.
    public init(
        host: String = "127.0.0.1", port: Int = 0, tls: TLS? = nil, maximumConcurrentStreams: Int = 1000,
        shutdownGracePeriod: TimeAmount = .seconds(10), maximumIdleTime: TimeAmount? = nil
    ) {
        self.host = host
        self.port = port
        self.tls = tls
        self.maximumConcurrentStreams = maximumConcurrentStreams
        self.shutdownGracePeriod = shutdownGracePeriod
        self.maximumIdleTime = maximumIdleTime
    }
}

/// Why the server could not start.
public struct PushGatewayServerError: Error, CustomStringConvertible {
    /// What went wrong and what to do.
    public var description: String
}
