import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import Testing

@testable import OffstagePush

/// Collects what the server sends, and the ALPN protocol the TLS handshake settled on.
private final class CollectingHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer

    private(set) var received = Data()
    private(set) var handshake = ""
    let complete: EventLoopPromise<Data>
    private let expectedLength: (Data) -> Bool

    init(complete: EventLoopPromise<Data>, expectedLength: @escaping (Data) -> Bool) {
        self.complete = complete
        self.expectedLength = expectedLength
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        received.append(contentsOf: unwrapInboundIn(data).readableBytesView)
        if expectedLength(received) { complete.succeed(received) }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // TLSUserEvent.handshakeCompleted(negotiatedProtocol:), read as text (NIOTLS is not a dependency here).
        let text = "\(event)"
        if text.contains("handshakeCompleted") { handshake = text }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        complete.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        complete.fail(ChannelError.eof)
    }
}

/// Web Push over TLS with ALPN `http/1.1` (SPEC NT-3).
@Suite("Web Push over TLS HTTP/1.1 (NT-3)")
struct TLSHTTP1Tests {
    @Test("A client negotiating http/1.1 with ALPN is served HTTP/1.1 over TLS; Location names https (NT-3)")
    func alpnHTTP1() async throws {
        try await withWebPushServer(tls: true) { running in
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(try #require(running.certificates).authorityPEM.utf8)))
            tls.applicationProtocols = ["http/1.1"]
            let context = try NIOSSLContext(configuration: tls)
            let group = MultiThreadedEventLoopGroup.singleton
            let complete = group.next().makePromise(of: Data.self)
            // A whole response: the head and as many body bytes as its content-length says.
            let handler = CollectingHandler(complete: complete) { data in
                guard let end = data.range(of: Data("\r\n\r\n".utf8)) else { return false }
                let head = String(decoding: data[..<end.lowerBound], as: UTF8.self).lowercased()
                let length = head.components(separatedBy: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                return data.count - end.upperBound >= length
            }
            let channel = try await ClientBootstrap(group: group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: "localhost"))
                        try channel.pipeline.syncOperations.addHandler(handler)
                    }
                }
                .connect(host: "127.0.0.1", port: running.port).get()
            let request = "POST /push/\(WebPushFixture.openID) HTTP/1.1\r\nHost: localhost\r\nTTL: 5\r\nContent-Length: 0\r\n\r\n"
            try await channel.writeAndFlush(ByteBuffer(string: request))
            let response = String(decoding: try await complete.futureResult.get(), as: UTF8.self)
            #expect(response.hasPrefix("HTTP/1.1 201"), "\(response)")
            #expect(response.lowercased().contains("location: https://localhost/m/"))
            let handshake = try await channel.eventLoop.submit { handler.handshake }.get()
            #expect(handshake.contains("http/1.1"), "\(handshake)")
            try await channel.close()
            #expect(await running.backend.accepted.count == 1)
        }
    }
}
