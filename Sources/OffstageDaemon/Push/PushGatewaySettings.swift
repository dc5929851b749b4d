/// The push gateway inside the daemon (SPEC NT-3): whether it runs, where its provider API listens, and its TLS.
public struct PushGatewaySettings: Hashable, Sendable, Codable {
    /// Whether the daemon runs a gateway. Default on.
    public var enabled = true
    /// Where the provider API listens, `HOST:PORT`; port 0 takes any free port (`offstage push-status` shows it).
    /// Default `127.0.0.1:0`: only this machine's app servers (and tests) reach it.
    public var listen = "127.0.0.1:0"
    /// A PEM file with the server's certificate chain: with ``tlsKey``, the gateway speaks TLS with ALPN `h2`, as
    /// APNs does, so real APNs clients can connect; without, HTTP/2 over cleartext (h2c, prior knowledge).
    public var tlsCertificate: String?
    /// The PEM file of the certificate's private key.
    public var tlsKey: String?

    /// The defaults.
    public init() {}

    /// The listen address, parsed.
    public var listenAddress: MetricsListenAddress? { MetricsListenAddress(listen, allowingAnyPort: true) }

    /// What is wrong with these settings, one sentence each with its fix; empty when they are usable.
    public var problems: [String] {
        var problems: [String] = []
        if listenAddress == nil {
            problems.append("listen \(listen) is not HOST:PORT; give e.g. 127.0.0.1:2197, or port 0 for any free port")
        }
        if (tlsCertificate == nil) != (tlsKey == nil) {
            problems.append("TLS needs both tlsCertificate and tlsKey; give both PEM files, or neither for h2c")
        }
        return problems
    }

    private enum CodingKeys: String, CodingKey { case enabled, listen, tlsCertificate, tlsKey }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = PushGatewaySettings()
        enabled = try container.decodeIfPresent(Bool.self, forKey: .enabled) ?? defaults.enabled
        listen = try container.decodeIfPresent(String.self, forKey: .listen) ?? defaults.listen
        tlsCertificate = try container.decodeIfPresent(String.self, forKey: .tlsCertificate)
        tlsKey = try container.decodeIfPresent(String.self, forKey: .tlsKey)
    }
}
