import Glibc
import NIOCore

/// The file a download writes into, by positioned writes (`pwrite` at an offset: a resumed download appends after
/// the bytes it keeps, whatever the file position). Opened once per job and closed by the engine when the job ends.
///
/// Not thread-safe: the engine touches it from one place at a time (the attempt's event loop while a response runs,
/// the job's task between requests).
final class PartFile: @unchecked Sendable {  // used by one thread at a time, see above
    /// A system call on the part file failed.
    struct Failure: Error, Sendable {
        /// What was being done, with the path: `write to /x/y.part at 1048576`.
        var operation: String
        /// The call's errno.
        var errno: Int32
        /// `write to /x/y.part at 1048576 failed: No space left on device`.
        var reason: String { "\(operation) failed: \(String(cString: strerror(errno)))" }
    }

    /// The path, for messages.
    let path: String
    private let descriptor: Int32

    /// Opens `path` for writing, creating it with mode 0600 (only the daemon reads a part file) when missing.
    init(path: String) throws(Failure) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            throw Failure(operation: "opening the part file \(path)", errno: code)
        }
        self.path = path
        self.descriptor = descriptor
    }

    /// The file's size now.
    func size() throws(Failure) -> Int64 {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let code = errno
            throw Failure(operation: "fstat of the part file \(path)", errno: code)
        }
        return Int64(status.st_size)
    }

    /// Cuts the file to `length` bytes.
    func truncate(to length: Int64) throws(Failure) {
        while ftruncate(descriptor, off_t(length)) != 0 {
            let code = errno
            guard code == EINTR else { throw Failure(operation: "cutting the part file \(path) to \(length) bytes", errno: code) }
        }
    }

    /// Writes all of `buffer`'s readable bytes at `offset`. Returns how many bytes were written, all of them unless
    /// `failure` is set (a full disk may take part of a buffer before refusing the rest).
    func write(_ buffer: ByteBuffer, at offset: Int64) -> (written: Int, failure: Failure?) {
        buffer.withUnsafeReadableBytes { bytes in
            var written = 0
            while written < bytes.count {
                let result = pwrite(descriptor, bytes.baseAddress! + written, bytes.count - written, off_t(offset) + off_t(written))
                if result < 0 {
                    let code = errno
                    if code == EINTR { continue }
                    return (written, Failure(operation: "writing the part file \(path) at \(offset + Int64(written))", errno: code))
                }
                if result == 0 {
                    return (written, Failure(operation: "writing the part file \(path) at \(offset + Int64(written))", errno: EIO))
                }
                written += result
            }
            return (written, nil)
        }
    }

    /// Flushes the file's data to the disk (blocks for as long as that takes: not on an event loop).
    func sync() throws(Failure) {
        while fsync(descriptor) != 0 {
            let code = errno
            guard code == EINTR else { throw Failure(operation: "fsync of the part file \(path)", errno: code) }
        }
    }

    /// Closes the file. Called once, when the job ends.
    func close() {
        _ = Glibc.close(descriptor)
    }
}
