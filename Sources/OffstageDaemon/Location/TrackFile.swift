import Foundation

/// Reads a track file a caller named (SPEC §11: "no file a caller names is read in a way that can block the loop").
///
/// The caller is `offstage location replay`, so the path may name anything: a FIFO whose open would wait for a writer,
/// `/dev/zero` that never ends, a 2 GiB file. Only a regular file of at most `limit` bytes is read: it is opened
/// non-blocking (a FIFO's open then returns at once), checked with fstat on the descriptor it will read (no race with
/// a rename), and read to at most `limit + 1` bytes in case it grows meanwhile. The daemon calls this on the location
/// service's own reader thread, never on the event loop.
enum TrackFile {
    /// The file's bytes, or `LocationTrackError` naming the file, the problem and the fix.
    static func read(path: String, limit: Int) throws(LocationTrackError) -> Data {
        let name = URL(fileURLWithPath: path).lastPathComponent
        func failure(_ code: LocationTrackError.Code, _ problem: String, _ fix: String) -> LocationTrackError {
            LocationTrackError(code, file: name, problem: problem, fix: fix)
        }
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            throw failure(
                .unreadableFile, "cannot read \(path) (\(reason))", "check that the file exists and that offstaged may read it")
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            throw failure(.unreadableFile, "cannot read \(path) (fstat: \(String(cString: strerror(errno))))", "give another file")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw failure(
                .unreadableFile, "\(path) is not a regular file (a device, a pipe, a socket or a folder)",
                "give a GPX or NMEA file; to replay a live receiver, run gpsd and use `offstage location gpsd`")
        }
        let tooLarge = failure(
            .tooLarge, "\(path) is larger than \(limit) bytes, the most a track may be",
            "cut the track into shorter files, or raise the daemon setting location.maximumTrackBytes")
        guard status.st_size <= limit else { throw tooLarge }
        var data = Data(count: Int(status.st_size) + 1)
        var total = 0
        while total <= limit {
            if total == data.count { data.count = min(limit + 1, data.count * 2 + 4_096) }
            let count = data.withUnsafeMutableBytes { buffer in
                Glibc.read(fd, buffer.baseAddress! + total, buffer.count - total)
            }
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure(.unreadableFile, "cannot read \(path) (\(String(cString: strerror(errno))))", "give another file")
            }
            total += count
        }
        guard total <= limit else { throw tooLarge }
        data.count = total
        return data
    }
}
