import Foundation
import OffstagePush

/// The push gateway of the device (SPEC NT-3, NT-5): the one inside the daemon (whether it runs, where its provider
/// API listens, its TLS), or a remote `offstage-push` service the daemon links to instead.
public struct PushGatewaySettings: Hashable, Sendable, Codable {
    /// Whether the daemon runs a gateway of its own. Default on; without effect when ``remote`` is set.
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
    /// A multi-device gateway (`offstage-push`) to take pushes from instead of running one (decision 0035): the
    /// device registers its apps' tokens and subscriptions there and keeps a link to it. Default none.
    public var remote: RemotePushSettings?

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
        problems += remote?.problems.map { "remote.\($0)" } ?? []
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

    private enum CodingKeys: String, CodingKey { case enabled, listen, tlsCertificate, tlsKey, publicURL, remote }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = PushGatewaySettings()
        enabled = try container.decodeIfPresent(Bool.self, forKey: .enabled) ?? defaults.enabled
        listen = try container.decodeIfPresent(String.self, forKey: .listen) ?? defaults.listen
        tlsCertificate = try container.decodeIfPresent(String.self, forKey: .tlsCertificate)
        tlsKey = try container.decodeIfPresent(String.self, forKey: .tlsKey)
        publicURL = try container.decodeIfPresent(String.self, forKey: .publicURL)
        remote = try container.decodeIfPresent(RemotePushSettings.self, forKey: .remote)
    }
}

/// The multi-device gateway a device links to (decision 0035): where it is and the device's enrolment.
public struct RemotePushSettings: Hashable, Sendable, Codable {
    /// The gateway's origin, as app servers and the device reach it: `https://push.example.net` (TLS with ALPN h2) or
    /// `http://host:port` (h2c, for a private network).
    public var url: String
    /// The name the device was enrolled under (`offstage-push devices add NAME`).
    public var device: String
    /// A file holding the secret `offstage-push devices add` printed (surrounding white space is ignored).
    public var secretFile: String
    /// A PEM file with the certificates to trust for the gateway's TLS; default the system's roots.
    public var trustRoots: String?
    /// The origins of the gateway's nodes the device connects to, tried in turn when one cannot be reached; default
    /// ``url`` alone (a load balancer, or a name with several addresses, behind it).
    public var nodes: [String]?

    /// Creates remote settings.
    public init(url: String, device: String, secretFile: String, trustRoots: String? = nil, nodes: [String]? = nil) {
        self.url = url
        self.device = device
        self.secretFile = secretFile
        self.trustRoots = trustRoots
        self.nodes = nodes
    }

    /// The origins the device connects to, in the order it tries them.
    public var linkOrigins: [String] { nodes ?? [url] }

    /// What is wrong with these settings, one sentence each with its fix.
    public var problems: [String] {
        var problems: [String] = []
        for (name, origin) in [("url", url)] + (nodes ?? []).map({ ("nodes", $0) })
        where DeviceLinkClient.Configuration(url: origin, device: device, secret: "-").endpoint == nil {
            problems.append("\(name) \(origin) is not an http or https origin; give e.g. https://push.example.net, without a path")
        }
        if nodes?.isEmpty == true { problems.append("nodes is empty; give at least one node's origin, or leave it out to use url") }
        if device.isEmpty || device.utf8.count > 255 || device.contains(":") {
            problems.append("device \(device) is not a device name; give the name it was enrolled under (no colon)")
        }
        if secretFile.isEmpty { problems.append("secretFile is empty; give the file holding the device's secret") }
        return problems
    }
}
