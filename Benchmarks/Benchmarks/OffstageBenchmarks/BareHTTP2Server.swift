import Foundation
import NIOCore
import NIOHTTP2
import NIOPosix
import OffstagePush

/// The push benchmarks' baseline server: HTTP/2 with prior knowledge (h2c) on loopback, on one event loop thread as
/// the daemon's gateway has, answering every request `200` with an `apns-id` as soon as the request has ended —
/// no checks, no token, no storage. What is left is the cost of HTTP/2 on loopback with the same client library.
final class BareHTTP2Server: Sendable {
    let group: MultiThreadedEventLoopGroup
    let channel: any Channel
    let port: Int

    /// Listens on 127.0.0.1 at a free port.
    init() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.group = group
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                        mode: .server, connectionConfiguration: .init(), streamConfiguration: .init(),
                        inboundStreamInitializer: { stream in
                            stream.eventLoop.makeCompletedFuture {
                                try stream.pipeline.syncOperations.addHandler(AnswerOK())
                            }
                        })
                }
            }
        let channel: any Channel
        do {
            channel = try bootstrap.bind(host: "127.0.0.1", port: 0).wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
        self.channel = channel
        port = channel.localAddress?.port ?? 0
    }

    func shutdown() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }

    /// One stream: once the request has ended (its headers or its last data frame), `200` and the `apns-id`.
    final class AnswerOK: ChannelInboundHandler {
        typealias InboundIn = HTTP2Frame.FramePayload
        typealias OutboundOut = HTTP2Frame.FramePayload
        static let id = "8e1a3b6c-3f35-4f65-9d2d-6c8f1f0b7a01"

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let ended: Bool
            switch unwrapInboundIn(data) {
            case .headers(let headers): ended = headers.endStream
            case .data(let data): ended = data.endStream
            default: ended = false
            }
            guard ended else { return }
            let fields = [(":status", "200"), (APNsHeaderName.id, Self.id)]
            context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: .init(fields), endStream: true))), promise: nil)
        }
    }
}

/// Runs async work from the benchmarks' synchronous code and waits for its result.
func blocking<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
    let done = DispatchSemaphore(value: 0)
    let box = ResultBox<T>()
    Task {
        do {
            box.result = .success(try await work())
        } catch {
            box.result = .failure(error)
        }
        done.signal()
    }
    done.wait()
    return try box.result!.get()
}

/// A result handed from a task to the thread waiting for it (written before the semaphore's signal, read after).
private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
