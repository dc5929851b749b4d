import Foundation
import NIOPosix
import OffstageBenchKit
import OffstageProtocol
import OffstagePush

/// What the push benchmarks share: a provider key registered with the daemon through `io.offstage.PushControl` (as
/// `offstage push-keys add` registers one), the gateway's address, apps registered for remote notifications by the
/// probe, and provider clients (OffstagePush's `APNsProviderClient`, the CLI's) to the gateway or to the bare server.
enum PushFixture {
    static let teamID = "TEAM123456"
    static let keyID = "BENCHKEY01"

    /// Generates a key pair and registers its public half for `topics` (all apps when nil); returns the credentials
    /// an app server signs its provider tokens with.
    static func addKey(_ daemon: DaemonFixture, topics: [String]?) throws -> APNsProviderClient.Configuration.Credentials {
        let pair = ProviderKeyPair.generate()
        _ = try daemon.call(
            PushControlInterface.Method.addKey,
            PushControlInterface.AddKeyParameters(id: keyID, teamId: teamID, publicKey: pair.publicKeyPEM, topics: topics),
            as: PushControlInterface.AddKeyReply.self)
        return .init(keyID: keyID, teamID: teamID, privateKeyPEM: pair.privateKeyPEM)
    }

    static func status(_ daemon: DaemonFixture, app: String? = nil, limit: Int = 100) throws -> PushControlInterface.StatusReply {
        try daemon.call(
            PushControlInterface.Method.status, PushControlInterface.StatusParameters(app: app, limit: limit),
            as: PushControlInterface.StatusReply.self)
    }

    /// The embedded gateway's host and port (`http://127.0.0.1:PORT`: h2c on loopback, the daemon's default).
    static func gateway(_ daemon: DaemonFixture) throws -> (host: String, port: Int) {
        let address = try status(daemon, limit: 0).gateway.address
        guard let url = URL(string: address), url.scheme == "http", let host = url.host, let port = url.port else {
            throw BenchError("the daemon's gateway is at \(address.debugDescription), not h2c on loopback; check its push settings")
        }
        return (host, port)
    }

    /// Installs the probe as `id` in push mode (with `remote-notification`), opens it and waits for its token.
    static func installAndRegister(
        _ daemon: DaemonFixture, id: String, reports: Int32, reportPath: String, exit: Bool
    ) throws -> String {
        try daemon.install(
            try daemon.probeBundle(
                id: id, arguments: ["--push", "--report", reportPath] + (exit ? ["--exit"] : []),
                extra: ["UIBackgroundModes": ["remote-notification"]]))
        try daemon.open(id)
        guard let bytes = try UnixSocket.receiveDatagram(reports, timeoutMilliseconds: 30_000) else {
            throw BenchError("\(id) did not report its registration within 30 s; see \(daemon.stateDirectory)/logs/\(id).log")
        }
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.hasPrefix("registered ") else { throw BenchError("\(id) could not register: \(text)") }
        return String(text.dropFirst("registered ".count))
    }

    /// A provider client connected to `host:port` over h2c, on `group`.
    static func connect(
        host: String, port: Int, credentials: APNsProviderClient.Configuration.Credentials, group: MultiThreadedEventLoopGroup
    ) throws -> APNsProviderClient {
        try blocking {
            try await APNsProviderClient.connect(
                .init(host: host, port: port, credentials: credentials), eventLoopGroup: group)
        }
    }
}
