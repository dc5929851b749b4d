import NIOCore
import NIOEmbedded

/// libFuzzer's entry point for the `daemon-frame-decoder` target: the daemon's NIO `VarlinkFrameDecoder` (its source,
/// `Sources/OffstageDaemon/IPC/VarlinkFrameDecoder.swift`, is compiled into this binary) on the same inputs as
/// `varlink-framing`.
///
/// The decoder repeats `VarlinkFraming`'s logic over NIO's buffers, so it is held to the same reference,
/// `VarlinkFuzzChecks.FramingOutcome`, through the real `ByteToMessageHandler` in an `EmbeddedChannel`. Unlike the
/// other targets, its check lives here and not in a test target: replaying it in `swift test` would need NIOEmbedded
/// among OffstageDaemonTests' dependencies, which Package.swift does not give it. `scripts/fuzz` replays the
/// committed inputs at the start of every run instead.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    do {
        try DaemonFrameDecoderChecks.check(Array(UnsafeBufferPointer(start: data, count: size)))
    } catch {
        fatalError("daemon-frame-decoder: \(error)")
    }
    return 0
}

/// The property of the daemon's frame decoder.
enum DaemonFrameDecoderChecks {
    typealias Violation = VarlinkFuzzChecks.Violation
    typealias Outcome = VarlinkFuzzChecks.FramingOutcome

    /// Fed in reads of random size, the decoder delivers exactly the messages of the stream's `FramingOutcome`, fails
    /// with `VarlinkMessageTooLargeError` of the configured limit exactly when the outcome says `MessageTooLarge`, and
    /// at end of stream closes cleanly without delivering anything more.
    static func check(_ bytes: [UInt8]) throws(Violation) {
        guard let input = VarlinkFuzzChecks.FramingInput(bytes) else { return }
        let expected = Outcome.expected(stream: input.stream, limit: input.limit)
        let channel = EmbeddedChannel(
            handler: ByteToMessageHandler(VarlinkFrameDecoder(maximumMessageSize: input.limit)))
        var random = SplitMix64(seed: input.seed)
        var outcome = Outcome(messages: [], tooLarge: false)
        var offset = 0
        while offset < input.stream.count, !outcome.tooLarge {
            let count = min(input.stream.count - offset, 1 + Int(random.next() % 48))
            var buffer = channel.allocator.buffer(capacity: count)
            buffer.writeBytes(input.stream[offset..<(offset + count)])
            offset += count
            do {
                try channel.writeInbound(buffer)
            } catch let error as VarlinkMessageTooLargeError where error.limit == input.limit {
                outcome.tooLarge = true
            } catch {
                throw Violation("the decoder failed with \(error), not VarlinkMessageTooLargeError(\(input.limit))")
            }
            try collect(from: channel, into: &outcome)
        }
        if outcome.tooLarge {
            // Closed as the daemon closes the connection; an open EmbeddedChannel would leak its pipeline.
            _ = try? channel.finish(acceptAlreadyClosed: true)
        } else {
            // End of stream: decodeLast delivers nothing the reads did not, and an unterminated tail is dropped
            // without an error, as the decoder's documentation says (it can never complete).
            do {
                _ = try channel.finish()
            } catch {
                throw Violation("end of stream failed with \(error)")
            }
            try collect(from: channel, into: &outcome)
        }
        guard outcome == expected else {
            throw Violation("VarlinkFrameDecoder delivered \(outcome); the stream holds \(expected)")
        }
    }

    /// Moves the messages the decoder has passed on into `outcome`.
    private static func collect(from channel: EmbeddedChannel, into outcome: inout Outcome) throws(Violation) {
        while true {
            let message: ByteBuffer?
            do {
                message = try channel.readInbound(as: ByteBuffer.self)
            } catch {
                throw Violation("the decoder passed on something other than a ByteBuffer: \(error)")
            }
            guard let message else { return }
            outcome.messages.append(Array(message.readableBytesView))
        }
    }
}
