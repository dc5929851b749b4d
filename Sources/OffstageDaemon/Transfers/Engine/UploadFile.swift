import AsyncHTTPClient
import Glibc
import NIOCore

/// The file an upload sends, read with positioned reads (`pread`) on the attempt's event loop, one chunk after the
/// server's connection took the one before (back-pressure: the file is never read ahead of the socket).
///
/// Confined to one event loop while a request reads it; closed by the engine on that loop when the job ends.
final class UploadFile: @unchecked Sendable {  // confined, see above
    /// The upload file could not be opened or read.
    struct Failure: Error, Sendable {
        /// What was wrong, with the path and the fix.
        var reason: String
    }

    /// The bytes read and sent at a time.
    static let chunkSize = 256 * 1024

    /// The path, for messages.
    let path: String
    /// Its size when opened: the request's Content-Length.
    let size: Int64
    private let descriptor: Int32
    private var closed = false

    /// Opens `path`, a regular file, for reading.
    init(path: String) throws(Failure) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw Failure(reason: "the upload file \(path) cannot be opened: \(String(cString: strerror(code))); give a readable file")
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            _ = Glibc.close(descriptor)
            throw Failure(reason: "the upload file \(path) is not a regular file; give a file, not a folder or a device")
        }
        self.path = path
        self.size = Int64(status.st_size)
        self.descriptor = descriptor
    }

    /// Sends the whole file through `writer`, chunk by chunk, each read when the previous one was taken; on
    /// `eventLoop`. Starts from the first byte every time it is called (a 307 or 308 redirect sends the body again).
    func send(to writer: HTTPClient.Body.StreamWriter, on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        let promise = eventLoop.makePromise(of: Void.self)
        eventLoop.execute { self.sendChunk(from: 0, to: writer, on: eventLoop, promise: promise) }
        return promise.futureResult
    }

    private func sendChunk(
        from offset: Int64, to writer: HTTPClient.Body.StreamWriter, on eventLoop: any EventLoop, promise: EventLoopPromise<Void>
    ) {
        guard offset < size else { return promise.succeed() }
        guard !closed else { return promise.fail(Failure(reason: "the upload of \(path) ended")) }
        let count = Int(min(Int64(Self.chunkSize), size - offset))
        var buffer = ByteBufferAllocator().buffer(capacity: count)
        var failure: Failure?
        let read = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { bytes in
            while true {
                let result = pread(descriptor, bytes.baseAddress!, count, off_t(offset))
                if result >= 0 { return result }
                let code = errno
                if code == EINTR { continue }
                failure = Failure(reason: "the upload file \(path) cannot be read at \(offset): \(String(cString: strerror(code)))")
                return 0
            }
        }
        if let failure { return promise.fail(failure) }
        guard read > 0 else {
            return promise.fail(
                Failure(reason: "the upload file \(path) shrank while it was sent (it had \(size) bytes, it ends at \(offset)); leave the file alone until the upload ends"))
        }
        writer.write(.byteBuffer(buffer)).hop(to: eventLoop).whenComplete { result in
            switch result {
            case .success:
                // A new turn of the loop for each chunk: a write that completes at once must not grow the stack.
                eventLoop.execute { self.sendChunk(from: offset + Int64(read), to: writer, on: eventLoop, promise: promise) }
            case .failure(let error):
                promise.fail(error)
            }
        }
    }

    /// Closes the file; a send in progress stops at its next chunk. On the loop the file is read on.
    func close() {
        guard !closed else { return }
        closed = true
        _ = Glibc.close(descriptor)
    }
}
