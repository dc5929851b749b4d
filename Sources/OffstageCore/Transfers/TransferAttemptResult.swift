/// How one attempt of a transfer ended, as the shell's engine reports it (SPEC TR-4).
public enum TransferAttemptResult: Hashable, Sendable {
    /// The download's file is complete and flushed, or the upload's server answered 2xx (with `responseBody`, when
    /// it sent one).
    case completed(status: Int, responseBody: TransferResponseBody? = nil)
    /// It may work later: a connection error, a reset, a stall, 5xx, 408 or 429; `retryAfter` is what the server asked.
    case transient(String, retryAfter: Double?)
    /// It will not work: a status that retrying does not change, or a request that cannot be made.
    case permanent(status: Int?, String)
    /// The daemon could not write the download or read the upload (a full disk): retried like a transient failure.
    case file(String)
    /// The shell stopped it because the core asked (``TransferAction/stop(id:attempt:)``) or the daemon is stopping.
    case cancelled
}
