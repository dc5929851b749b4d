import ArgumentParser
import Dispatch
import Foundation
import Logging
import OffstagePush
import OffstagePushService

/// `offstage-push serve`: one node of the gateway, until SIGTERM or SIGINT.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve one node: the APNs provider API, Web Push and the device link on one port.",
        discussion: """
            Brings the schema up to date, then prints one line, 'offstage-push node NAME listening on URL', once \
            it accepts connections (port 0 picks a free port; the line has the real one). SIGTERM or SIGINT shuts \
            down gracefully: waiting pulls return, requests in flight finish.
            """)
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions
    @Option(help: ArgumentHelp("The address and port to listen on.", valueName: "HOST:PORT")) var listen = "127.0.0.1:2197"
    @Option(help: ArgumentHelp("This node's name, unique among the database's nodes (letters, digits, -_.).", valueName: "NAME"))
    var node: String
    @Option(help: ArgumentHelp("The origin app servers reach this node by, e.g. https://push.example.net (for VAPID).", valueName: "URL"))
    var publicURL: String?
    @Option(help: ArgumentHelp("The TLS certificate chain, PEM (with --tls-key); without both, h2c.", valueName: "FILE"))
    var tlsCertificate: String?
    @Option(help: ArgumentHelp("The TLS certificate's private key, PEM.", valueName: "FILE")) var tlsKey: String?
    @Option(help: "The least severe log messages written to standard error: trace, debug, info, notice, warning, error.")
    var logLevel = "notice"

    func run() async throws {
        try await output.run {
            guard let level = Logger.Level(rawValue: logLevel) else {
                throw PushStoreError("--log-level \(logLevel) is not trace, debug, info, notice, warning or error.")
            }
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
            let address = try Self.address(listen)
            let configuration = PushServiceNode.Configuration(
                database: try database.resolve(), node: node, host: address.host, port: address.port,
                tls: try tls(), publicOrigins: publicURL.map { [$0] } ?? [])
            let signals = SignalWaiter([SIGTERM, SIGINT])
            let served = try await PushServiceNode.start(configuration)
            output.print(
                ["node": node, "url": served.url],
                text: "offstage-push node \(node) listening on \(served.url)")
            let signal = await signals.next()
            Logger(label: "offstage.push").notice("shutting down", metadata: ["signal": "\(signal)"])
            await served.shutdown()
        }
    }

    private func tls() throws -> PushGatewayServerConfiguration.TLS? {
        switch (tlsCertificate, tlsKey) {
        case (nil, nil): return nil
        case (let certificate?, let key?):
            return .init(certificateChainPEM: try Self.read(certificate, "--tls-certificate"), privateKeyPEM: try Self.read(key, "--tls-key"))
        default:
            throw PushStoreError("Give both --tls-certificate and --tls-key for TLS, or neither for h2c.")
        }
    }

    private static func read(_ path: String, _ option: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw PushStoreError("\(option) \(path) cannot be read; give a readable PEM file.")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The host and port of `HOST:PORT` or `[IPV6]:PORT`.
    static func address(_ text: String) throws -> (host: String, port: Int) {
        let problem = PushStoreError("--listen \(text) is not HOST:PORT; give e.g. 127.0.0.1:2197, 0.0.0.0:443 or [::1]:0.")
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port)
        else { throw problem }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw problem }
        return (host, port)
    }
}

/// Waits for one of some signals, which no longer end the process by default.
final class SignalWaiter {
    private let stream: AsyncStream<Int32>
    private let sources: [any DispatchSourceSignal]

    init(_ signals: [Int32]) {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        self.stream = stream
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            return source
        }
    }

    /// The first signal that comes.
    func next() async -> Int32 {
        for await number in stream { return number }
        return SIGTERM
    }
}
