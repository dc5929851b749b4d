import OffstageCore

/// What an attempt reports while it runs, in order, from the engine's event loop (the callback must not block).
enum HTTPTransferEvent: Sendable, Equatable {
    /// The response began; writing starts at `offset` (0 when restarted). `restartReason` says why a resume became a
    /// restart (the server does not honour ranges, the file changed on the server, or the range could not be
    /// served), nil otherwise. `expectedTotal` is the size of the whole resource when the server said it
    /// (Content-Length of a 200, the total of a 206's Content-Range). For uploads: the server's answer began, offset
    /// 0, `expectedTotal` the length of its response body when given.
    case responseStarted(status: Int, offset: Int64, expectedTotal: Int64?, validator: TransferValidator?, restartReason: String?)
    /// The part file now holds `bytesDone` valid bytes from its start (written, not necessarily fsynced). Uploads:
    /// bytes sent.
    case checkpoint(bytesDone: Int64, expectedTotal: Int64?)
}
