import Foundation

/// Reassembles Varlink messages from a byte stream: each message is JSON text terminated by one NUL byte.
///
/// Bytes go in as they are read (`append` or, without a copy, `readIntoFreeSpace`); complete messages come out of
/// `nextMessage()` in order. Several messages in one read and one message spread over many reads both work. The
/// buffer never holds more than one partial message of at most `maximumMessageSize` bytes: a longer message is an
/// error, after which the stream cannot be trusted and the connection should be closed.
public struct VarlinkFraming: Sendable {
    /// The default limit for one message, NUL excluded: 1 MiB.
    public static let defaultMaximumMessageSize = 1 << 20

    /// The longest message accepted, in bytes, NUL excluded.
    public let maximumMessageSize: Int

    // `storage[start..<end]` holds unconsumed bytes; `storage[start..<scanned]` is known to hold no NUL, so a
    // message arriving in many pieces is scanned once, not once per piece.
    private var storage: [UInt8]
    private var start = 0
    private var end = 0
    private var scanned = 0
    private var failed = false

    /// A reassembler for messages of at most `maximumMessageSize` bytes.
    ///
    /// - Parameter initialCapacity: Bytes reserved up front. The buffer grows as a long message needs it and is
    ///   reused for every message after.
    public init(maximumMessageSize: Int = VarlinkFraming.defaultMaximumMessageSize, initialCapacity: Int = 16_384) {
        precondition(maximumMessageSize > 0, "maximumMessageSize must be positive, got \(maximumMessageSize)")
        self.maximumMessageSize = maximumMessageSize
        storage = [UInt8](repeating: 0, count: max(initialCapacity, 64))
    }

    /// Bytes received but not yet returned as messages.
    public var bufferedByteCount: Int { end - start }

    /// Adds received bytes.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        reserveFreeSpace(bytes.count)
        storage.withUnsafeMutableBytes { target in
            target.baseAddress!.advanced(by: end).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        }
        end += bytes.count
    }

    /// Adds received bytes.
    public mutating func append(contentsOf bytes: some Sequence<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { append(UnsafeRawBufferPointer($0)) }
        if done == nil {
            let copy = Array(bytes)
            copy.withUnsafeBytes { append($0) }
        }
    }

    /// Lets `read` fill the free space at the end of the buffer directly (with `recv`, say) and counts the bytes it
    /// says it wrote. At least `minimumFreeSpace` bytes are offered.
    ///
    /// - Parameter read: Writes into the buffer and returns how many bytes it wrote (0 or more).
    /// - Returns: What `read` returned.
    public mutating func readIntoFreeSpace(
        minimumFreeSpace: Int = 4096,
        _ read: (UnsafeMutableRawBufferPointer) throws -> Int
    ) rethrows -> Int {
        reserveFreeSpace(minimumFreeSpace)
        let count = try storage.withUnsafeMutableBytes { target in
            try read(UnsafeMutableRawBufferPointer(rebasing: target[end...]))
        }
        precondition(count >= 0 && count <= storage.count - end, "read reported \(count) bytes written")
        end += count
        return count
    }

    /// The next complete message without its NUL terminator, or `nil` when the buffer holds none yet.
    ///
    /// - Throws: `io.offstage.Protocol.MessageTooLarge` when a message is, or would be once complete, longer than
    ///   `maximumMessageSize`. Every later call throws the same.
    public mutating func nextMessage() throws(VarlinkError) -> Data? {
        guard let range = try nextMessageRange() else { return nil }
        let message = storage.withUnsafeBytes { Data(UnsafeRawBufferPointer(rebasing: $0[range])) }
        consume(through: range.upperBound)
        return message
    }

    /// Calls `body` with the next complete message without its NUL terminator, or returns `nil` when the buffer holds
    /// none yet. The bytes are valid only during `body`; this avoids a copy when the message is parsed in place.
    ///
    /// - Throws: `io.offstage.Protocol.MessageTooLarge` as `nextMessage()` does, or what `body` throws (the message
    ///   counts as consumed then too).
    public mutating func withNextMessage<T>(_ body: (UnsafeRawBufferPointer) throws -> T) throws -> T? {
        guard let range = try nextMessageRange() else { return nil }
        defer { consume(through: range.upperBound) }
        return try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    /// Drops everything buffered and clears a previous error, for reuse on a new stream.
    public mutating func reset() {
        start = 0
        end = 0
        scanned = 0
        failed = false
    }

    // MARK: Internals

    private mutating func nextMessageRange() throws(VarlinkError) -> Range<Int>? {
        if failed { throw .messageTooLarge(limit: maximumMessageSize) }
        let terminator: Int? = storage.withUnsafeBytes { bytes in
            guard scanned < end else { return nil }
            let from = bytes.baseAddress!.advanced(by: scanned)
            guard let hit = memchr(from, 0, end - scanned) else { return nil }
            return scanned + (UnsafeRawPointer(hit) - from)
        }
        guard let terminator else {
            scanned = end
            if end - start > maximumMessageSize {
                failed = true
                throw .messageTooLarge(limit: maximumMessageSize)
            }
            return nil
        }
        if terminator - start > maximumMessageSize {
            failed = true
            throw .messageTooLarge(limit: maximumMessageSize)
        }
        return start..<terminator
    }

    private mutating func consume(through terminator: Int) {
        start = terminator + 1
        scanned = start
        if start == end {
            // The usual case, one message per read: rewind for free.
            start = 0
            end = 0
            scanned = 0
        }
    }

    private mutating func reserveFreeSpace(_ needed: Int) {
        if storage.count - end >= needed { return }
        if start > 0 {
            // Move the partial message to the front before growing.
            let count = end - start
            storage.withUnsafeMutableBytes { bytes in
                let base = bytes.baseAddress!
                _ = memmove(base, base.advanced(by: start), count)
            }
            scanned -= start
            end = count
            start = 0
            if storage.count - end >= needed { return }
        }
        var capacity = storage.count
        while capacity - end < needed { capacity *= 2 }
        storage.append(contentsOf: repeatElement(0, count: capacity - storage.count))
    }
}
