import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Raised by `VarlinkFrameDecoder` when a message is longer than the limit.
struct VarlinkMessageTooLargeError: Error {
    let limit: Int
}

/// Splits the byte stream of a connection into Varlink messages, each terminated by a NUL byte. Emits each message
/// as a slice of the received buffer, without its NUL, and without copying.
///
/// A message longer than `maximumMessageSize` (or that much data with no NUL yet) raises
/// `VarlinkMessageTooLargeError`: the connection is then answered `io.offstage.Protocol.MessageTooLarge` and closed,
/// so no more than the limit is ever buffered for one connection.
struct VarlinkFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = ByteBuffer

    let maximumMessageSize: Int
    /// How many readable bytes are already known to hold no NUL, so a message arriving in pieces is scanned once.
    private var scanned = 0

    init(maximumMessageSize: Int) {
        self.maximumMessageSize = maximumMessageSize
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let scanned = self.scanned
        let terminator: Int? = buffer.withUnsafeReadableBytes { bytes in
            guard bytes.count > scanned, let base = bytes.baseAddress else { return nil }
            guard let hit = memchr(base + scanned, 0, bytes.count - scanned) else { return nil }
            return UnsafeRawPointer(hit) - base
        }
        guard let terminator else {
            self.scanned = buffer.readableBytes
            if self.scanned > maximumMessageSize { throw VarlinkMessageTooLargeError(limit: maximumMessageSize) }
            return .needMoreData
        }
        if terminator > maximumMessageSize { throw VarlinkMessageTooLargeError(limit: maximumMessageSize) }
        let message = buffer.readSlice(length: terminator)!
        buffer.moveReaderIndex(forwardBy: 1)
        self.scanned = 0
        context.fireChannelRead(wrapInboundOut(message))
        return .continue
    }

    mutating func decodeLast(
        context: ChannelHandlerContext,
        buffer: inout ByteBuffer,
        seenEOF: Bool
    ) throws -> DecodingState {
        // Complete messages still count at end of input; a trailing partial message can never complete and is
        // dropped.
        try decode(context: context, buffer: &buffer)
    }
}
