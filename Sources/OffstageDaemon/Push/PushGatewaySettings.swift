import Foundation

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
    /// The origin app servers reach the gateway at, when it is not the listen address (behind a proxy or a name):
    /// `https://push.example.net` or `http://host:port`. Registrations and Web Push endpoints carry it, and a VAPID
    /// token's `aud` may name it.
    public var publicURL: String?

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
        if publicURL != nil, publicOrigin == nil {
            problems.append(
                "publicURL \(publicURL ?? "") is not an http or https origin; give e.g. https://push.example.net, without a path")
        }
        if (tlsCertificate == nil) != (tlsKey == nil) {
            problems.append("TLS needs both tlsCertificate and tlsKey; give both PEM files, or neither for h2c")
        }
        return problems
    }

    /// ``publicURL`` as an origin (`scheme://host[:port]`, no trailing slash), or nil when it is absent or not one.
    public var publicOrigin: String? {
        guard let publicURL, let url = URL(string: publicURL), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty,
            url.path.isEmpty || url.path == "/", url.query == nil, url.user == nil
        else { return nil }
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(bracketed)\(url.port.map { ":\($0)" } ?? "")"
    }

    private enum CodingKeys: String, CodingKey { case enabled, listen, tlsCertificate, tlsKey, publicURL }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = PushGatewaySettings()
        enabled = try container.decodeIfPresent(Bool.self, forKey: .enabled) ?? defaults.enabled
        listen = try container.decodeIfPresent(String.self, forKey: .listen) ?? defaults.listen
        tlsCertificate = try container.decodeIfPresent(String.self, forKey: .tlsCertificate)
        tlsKey = try container.decodeIfPresent(String.self, forKey: .tlsKey)
        publicURL = try container.decodeIfPresent(String.self, forKey: .publicURL)
    }
}
