/// Every number of the socket hand-off (SPEC MODE-2): the server that receives an app's socket and the watcher that
/// wakes the app when data arrives on it.
public struct SocketHandOffSettings: Sendable, Hashable {
    /// The longest hand-off call accepted, in bytes, NUL excluded. Default 64 KiB: the call carries an app's few
    /// parameters, and the bound keeps one client from making the server buffer without end. A longer one is
    /// answered `io.offstage.Protocol.MessageTooLarge`.
    public var maximumMessageSize: Int

    /// How long the server waits for a connection's whole call, from accepting it. Default 1 s: an app sends its call
    /// right after connecting, and the server serves one connection at a time, so a silent client must not hold the
    /// others up for longer.
    public var readTimeout: Duration

    /// How long the server waits to write its reply. Default 1 s: a reply is small and fits the socket's buffer, so
    /// this bounds only a client that stopped reading and left the buffer full.
    public var writeTimeout: Duration

    /// The hand-off socket file's permission bits. Default 0600, as the main Varlink socket: the apps run as the
    /// daemon's user, and the kernel keeps every other user out before a byte is read.
    public var socketMode: UInt32

    /// Connections the kernel queues while the server serves another. Default 64: hand-offs are rare (one per VoIP
    /// app and start), but a daemon restart brings them all at once.
    public var listenBacklog: Int32

    /// How many ready sockets the watcher takes from the kernel per wake-up. Default 64 (also the most the epoll
    /// shim returns at once); more ready sockets are simply reported on the next turn.
    public var watcherBatchSize: Int

    /// The server thread's name as `ps -L` shows it (at most 15 bytes).
    public var serverThreadName: String

    /// The watcher thread's name as `ps -L` shows it (at most 15 bytes).
    public var watcherThreadName: String

    /// Settings with the documented defaults, or the values given.
    public init(
        maximumMessageSize: Int = 64 * 1024,
        readTimeout: Duration = .seconds(1),
        writeTimeout: Duration = .seconds(1),
        socketMode: UInt32 = 0o600,
        listenBacklog: Int32 = 64,
        watcherBatchSize: Int = 64,
        serverThreadName: String = "offstage-fdpass",
        watcherThreadName: String = "offstage-socket"
    ) {
        self.maximumMessageSize = maximumMessageSize
        self.readTimeout = readTimeout
        self.writeTimeout = writeTimeout
        self.socketMode = socketMode
        self.listenBacklog = listenBacklog
        self.watcherBatchSize = watcherBatchSize
        self.serverThreadName = serverThreadName
        self.watcherThreadName = watcherThreadName
    }

    /// The defaults.
    public static let `default` = SocketHandOffSettings()
}

/// Durations as `poll()` takes them.
extension Duration {
    /// The duration in whole milliseconds, rounded up so that a wait never ends just before its deadline and spins;
    /// negative durations are 0. For `poll()`'s timeout argument.
    var roundedUpMilliseconds: Int32 {
        let (seconds, attoseconds) = components
        guard seconds >= 0, attoseconds >= 0, self > .zero else { return 0 }
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: milliseconds)
    }
}
