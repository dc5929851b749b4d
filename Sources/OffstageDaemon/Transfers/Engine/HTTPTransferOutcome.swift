import OffstageCore

/// How one attempt ended (SPEC TR-4). The daemon records it and the core decides what comes next: hand over the
/// file, retry with backoff, or report the error to the app.
enum HTTPTransferOutcome: Sendable, Equatable {
    /// Download: the part file is complete and fsynced, `bytes` long (not renamed: the daemon renames it). Upload:
    /// the server answered 2xx after the whole file, `bytes` long, was sent, with `responseBody` when its answer had a
    /// body (up to the job's limit). `mimeType` is the Content-Type without parameters; `suggestedFilename` comes from
    /// Content-Disposition, else the last segment of the final URL's path.
    case completed(
        status: Int, bytes: Int64, validator: TransferValidator?, mimeType: String?, suggestedFilename: String?,
        responseBody: TransferResponseBody? = nil)
    /// Worth retrying: a connection error or reset, a body shorter than announced, the idle timeout, 5xx, 408 or 429.
    /// `retryAfter` is the server's Retry-After in seconds from now; `bytesDone` valid bytes are in the part file (of
    /// the version `validator` names) for the next attempt to resume from.
    case transient(reason: String, retryAfter: Double?, bytesDone: Int64, validator: TransferValidator?)
    /// Not worth retrying as is: another 4xx or an unfollowed 3xx (`status` given), a bad URL or scheme, an upload
    /// file that cannot be read, too many redirects (`status` nil). `reason` names what was wrong.
    case permanent(status: Int?, reason: String, bytesDone: Int64)
    /// The part file could not be opened, written, cut or synced (`errno`, e.g. ENOSPC); `bytesDone` valid bytes are
    /// in it. Whether to retry is the daemon's choice.
    case writeFailed(reason: String, errno: Int32, bytesDone: Int64)
    /// The calling task was cancelled; `bytesDone` valid bytes are in the part file.
    case cancelled(bytesDone: Int64)

    /// The valid bytes in the part file (downloads) or sent (uploads) when the attempt ended.
    var bytesDone: Int64 {
        switch self {
        case .completed(_, let bytes, _, _, _, _): bytes
        case .transient(_, _, let bytesDone, _), .permanent(_, _, let bytesDone), .writeFailed(_, _, let bytesDone),
            .cancelled(let bytesDone):
            bytesDone
        }
    }
}
