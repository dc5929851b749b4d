import NIOCore
import NIOHTTP1
import NIOHTTP2

/// The handlers of a connection once its protocol is known: HTTP/2 streams or HTTP/1.1 requests, both answered by
/// the same router.
enum PushConnectionPipeline {
    /// The largest header list the HTTP/2 side accepts (16 KiB, NIO's default).
    static let maxHeaderListSize = 16_384

    /// HTTP/2: the connection manager (idle time, graceful shutdown with GOAWAY) and one ``PushStreamHandler`` per
    /// stream.
    static func addHTTP2(
        to pipeline: ChannelPipeline.SynchronousOperations, channel: any Channel, router: PushRouter, scheme: String,
        configuration: PushGatewayServerConfiguration
    ) throws {
        let manager = NIOHTTP2ServerConnectionManagementHandler(
            eventLoop: channel.eventLoop,
            configuration: .init(
                maxIdleTime: configuration.maximumIdleTime, maxAge: nil,
                maxGraceTime: configuration.shutdownGracePeriod, keepalive: nil)
        )
        var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
        connectionConfiguration.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: configuration.maximumConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: maxHeaderListSize),
        ]
        let http2 = NIOHTTP2Handler(
            mode: .server,
            eventLoop: channel.eventLoop,
            connectionConfiguration: connectionConfiguration,
            streamConfiguration: .init(),
            streamDelegate: manager.http2StreamDelegate,
            inboundStreamInitializer: { stream in
                stream.eventLoop.makeCompletedFuture {
                    try stream.pipeline.syncOperations.addHandler(PushStreamHandler(router: router, scheme: scheme))
                }
            }
        )
        try pipeline.addHandler(http2)
        try pipeline.addHandler(manager)
        try pipeline.addHandler(ConnectionErrorHandler())
        // The manager starts its timers on channelActive, which passed before the protocol was known.
        if channel.isActive {
            try pipeline.context(handler: http2).fireChannelActive()
        }
    }

    /// HTTP/1.1: NIO's codec with pipelining assistance and protocol-error answers (400, then close), an idle timer
    /// when the configuration has one, and a ``PushHTTP1Handler``.
    static func addHTTP1(
        to pipeline: ChannelPipeline.SynchronousOperations, router: PushRouter, scheme: String,
        configuration: PushGatewayServerConfiguration
    ) throws {
        if let idle = configuration.maximumIdleTime {
            try pipeline.addHandler(IdleStateHandler(allTimeout: idle))
        }
        try pipeline.configureHTTPServerPipeline(withPipeliningAssistance: true, withErrorHandling: true)
        try pipeline.addHandler(PushHTTP1Handler(router: router, scheme: scheme))
    }
}
