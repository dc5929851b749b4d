import Foundation
import Logging
import NIOCore
import NIOPosix
import OffstageCore
import OffstagePush

/// The push gateway inside the daemon (SPEC NT-3, decisions 0032 and 0034): the APNs-compatible provider API and the
/// Web Push front door on their own event loop, so that a burst of pushes never delays the engine's, over the
/// daemon's store.
final class EmbeddedPushGateway: Sendable {
    let gateway: APNsGateway
    let webPush: WebPushGateway
    let server: PushGatewayServer
    let group: MultiThreadedEventLoopGroup
    let settings: PushGatewaySettings
    let host: String

    /// A gateway over `store` that hands each stored push to `deliver`; nothing listens before ``start()``.
    init(settings: PushGatewaySettings, store: OffstageStore, logger: Logger, deliver: @escaping @Sendable (RemotePush) -> Void) throws {
        guard let address = settings.listenAddress else {
            throw PushSettingsError(description: settings.problems.joined(separator: "; "))
        }
        var tls: PushGatewayServerConfiguration.TLS?
        if let certificate = settings.tlsCertificate, let key = settings.tlsKey {
            tls = .init(certificateChainPEM: try Self.read(certificate, "tlsCertificate"), privateKeyPEM: try Self.read(key, "tlsKey"))
        }
        self.settings = settings
        self.host = address.host
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let backend = EmbeddedPushBackend(store: store, deliver: deliver)
        gateway = APNsGateway(backend: backend, logger: logger)
        webPush = WebPushGateway(
            backend: backend, configuration: .init(publicOrigins: settings.publicOrigin.map { [$0] } ?? []), logger: logger)
        server = PushGatewayServer(
            configuration: .init(host: address.host, port: address.port, tls: tls),
            router: PushRouter([APNsRoute(gateway: gateway), WebPushRoute(gateway: webPush)]),
            eventLoopGroup: group, logger: logger)
    }

    private static func read(_ path: String, _ key: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw PushSettingsError(
                description: "push.\(key) \(path) cannot be read; give a readable PEM file, or leave out both TLS keys for h2c")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Starts listening.
    func start() async throws { try await server.start() }

    /// Stops listening, letting pushes in flight finish, and ends the gateway's event loop.
    func shutdown() async {
        await server.shutdown()
        try? await group.shutdownGracefully()
    }

    /// Where app servers send: the `publicURL` setting when given, else `https://host:port` with TLS and
    /// `http://host:port` for h2c.
    var address: String {
        if let origin = settings.publicOrigin { return origin }
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return "\(settings.tlsCertificate == nil ? "http" : "https")://\(bracketed):\(server.port ?? 0)"
    }

    /// The push resource of a Web Push subscription: where its app server POSTs messages (RFC 8030).
    func webPushEndpoint(_ subscription: String) -> String { "\(address)/push/\(subscription)" }
}

/// The push settings cannot be used: what is wrong and the fix.
struct PushSettingsError: Error, CustomStringConvertible {
    var description: String
}
