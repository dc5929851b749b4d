import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// Serves the daemon's metrics over HTTP/1.1 for a Prometheus scraper: `GET /metrics` answers the text format;
/// any other path is 404 and any other method on `/metrics` 405. It runs as its own service in the daemon's service
/// group, started only when the setting `metricsListen` is given, and stops listening on graceful shutdown.
public struct MetricsHTTPService: Service {
    let address: MetricsListenAddress
    let metrics: DaemonMetrics
    let logger: Logger
    let group: any EventLoopGroup

    /// A service that will listen on `address` and answer with `metrics`, on `group`'s loops.
    public init(
        address: MetricsListenAddress, metrics: DaemonMetrics, logger: Logger,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.address = address
        self.metrics = metrics
        self.logger = logger
        self.group = group
    }

    public func run() async throws {
        let metrics = metrics
        let channel: any Channel
        do {
            channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.pipeline.configureHTTPServerPipeline().flatMapThrowing {
                        try channel.pipeline.syncOperations.addHandler(MetricsHTTPHandler(metrics: metrics))
                    }
                }
                .bind(host: address.host, port: address.port)
                .get()
        } catch {
            throw MetricsListenError(address: address, underlying: "\(error)")
        }
        logger.notice("metrics at http://\(address.host):\(address.port)/metrics")
        do {
            try await gracefulShutdown()
        } catch {
            // Cancelled rather than asked to stop: close all the same.
        }
        try? await channel.close()
    }
}

/// The metrics address cannot be listened on (taken, or not an address of this machine).
public struct MetricsListenError: Error, CustomStringConvertible {
    /// The address from the setting.
    public var address: MetricsListenAddress
    /// What the system said.
    public var underlying: String

    public var description: String {
        "cannot serve metrics on \(address.host):\(address.port) (setting 'metricsListen'): \(underlying); "
            + "choose a free port on an address of this machine, or leave metricsListen out"
    }
}

/// One HTTP connection of ``MetricsHTTPService``: answers each request when its end arrives.
final class MetricsHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let metrics: DaemonMetrics
    private var request: HTTPRequestHead?

    init(metrics: DaemonMetrics) {
        self.metrics = metrics
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            request = head
        case .body:
            // No method here takes a body: ignore it.
            break
        case .end:
            guard let head = request else { return }
            request = nil
            respond(to: head, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let status: HTTPResponseStatus
        let body: String
        var headers = HTTPHeaders()
        if path != "/metrics" {
            status = .notFound
            body = "not found: the metrics are at /metrics\n"
            headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        } else if head.method != .GET {
            status = .methodNotAllowed
            body = "method not allowed: use GET\n"
            headers.add(name: "Allow", value: "GET")
            headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        } else {
            status = .ok
            body = metrics.exposition()
            headers.add(name: "Content-Type", value: "text/plain; version=0.0.4; charset=utf-8")
        }
        let keepAlive = head.isKeepAlive
        var buffer = context.channel.allocator.buffer(capacity: body.utf8.count)
        buffer.writeString(body)
        headers.add(name: "Content-Length", value: String(buffer.readableBytes))
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        let responseHead = HTTPResponseHead(version: head.version, status: status, headers: headers)
        context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            written.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
