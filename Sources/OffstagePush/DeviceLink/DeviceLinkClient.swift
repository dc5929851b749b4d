import Foundation
import NIOCore
import NIOPosix

/// The device's end of the link (decision 0035): one HTTP/2 connection to a gateway node, over which it registers
/// its tokens and subscriptions and pulls its pushes.
///
/// A client is one connection: when it drops, make a new client (the daemon does, with backoff).
public final class DeviceLinkClient: Sendable {
    /// Where the gateway is and who the device is.
    public struct Configuration: Sendable, Hashable {
        /// The gateway's origin: `http://host:port` (h2c) or `https://host[:port]` (TLS with ALPN h2).
        public var url: String
        /// The device's enrolled name.
        public var device: String
        /// The device's enrolled secret.
        public var secret: String
        /// The certificates to trust over TLS, PEM; nil trusts the system's roots.
        public var trustRootsPEM: String?

        /// Creates a configuration.
        public init(url: String, device: String, secret: String, trustRootsPEM: String? = nil) {
            self.url = url
            self.device = device
            self.secret = secret
            self.trustRootsPEM = trustRootsPEM
        }

        /// The host, port and scheme of ``url``, or nil when it is not an http or https origin.
        public var endpoint: (host: String, port: Int, tls: Bool)? {
            guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), scheme == "http" || scheme == "https",
                let host = parsed.host, !host.isEmpty, parsed.path.isEmpty || parsed.path == "/", parsed.query == nil
            else { return nil }
            let tls = scheme == "https"
            return (host, parsed.port ?? (tls ? 443 : 80), tls)
        }
    }

    private let connection: APNsProviderClient
    private let authorization: String

    private init(connection: APNsProviderClient, configuration: Configuration) {
        self.connection = connection
        self.authorization = DeviceLinkRoute.authorization(device: configuration.device, secret: configuration.secret)
    }

    /// Connects to the gateway node at `configuration.url`.
    public static func connect(
        _ configuration: Configuration, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> DeviceLinkClient {
        guard let endpoint = configuration.endpoint else {
            throw DeviceLinkError(
                description: "The gateway URL \(configuration.url) is not an http or https origin; give e.g. https://push.example.net.")
        }
        let tls = endpoint.tls ? APNsProviderClient.Configuration.TLS(trustRootsPEM: configuration.trustRootsPEM) : nil
        let connection = try await APNsProviderClient.connect(
            .init(host: endpoint.host, port: endpoint.port, tls: tls), eventLoopGroup: eventLoopGroup)
        return DeviceLinkClient(connection: connection, configuration: configuration)
    }

    /// Registers the device's tokens and subscriptions (an upsert).
    public func register(_ registrations: DeviceRegistrations) async throws {
        let response = try await send("PUT", "/device/v1/registrations", JSONEncoder().encode(registrations))
        guard response.status == 204 else { throw Self.failure(response, "register") }
    }

    /// Acknowledges `acks` and waits up to `waitSeconds` for the pushes stored for the device.
    public func pull(acknowledging acks: [String], waitSeconds: Double) async throws -> [LinkedPush] {
        let response = try await send(
            "POST", "/device/v1/pull", JSONEncoder().encode(DeviceLinkPull(acks: acks, waitSeconds: waitSeconds)))
        guard response.status == 200 else { throw Self.failure(response, "pull") }
        do {
            return try JSONDecoder().decode(DeviceLinkBatch.self, from: response.body).pushes
        } catch {
            throw DeviceLinkError(description: "The gateway answered the pull with something that is not a batch: \(error)")
        }
    }

    /// Whether the connection is open.
    public var isConnected: Bool { connection.isConnected }

    /// Closes the connection.
    public func close() async { await connection.close() }

    private func send(_ method: String, _ path: String, _ body: Data) async throws -> APNsResponse {
        try await connection.send(
            method: method, path: path,
            headers: [PushHeaderField("authorization", authorization), PushHeaderField("content-type", "application/json")],
            body: body)
    }

    private static func failure(_ response: APNsResponse, _ what: String) -> DeviceLinkError {
        let message = (try? JSONDecoder().decode([String: String].self, from: response.body))?["message"]
        return DeviceLinkError(
            description: "The gateway refused the \(what) with \(response.status)\(response.reason.map { " \($0)" } ?? ""): \(message ?? String(decoding: response.body.prefix(300), as: UTF8.self))")
    }
}
