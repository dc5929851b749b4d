import Logging
import NIOCore
import NIOPosix
import OffstageCore
import OffstageProtocol

/// The daemon's event log on its way to the store (`offstage log`): each input's entries are handed to the worker
/// thread, which appends them off the event loop, so no call waits for its log line to reach the disk; then they go to
/// `offstage log --follow` callers. Entries wait ``delay`` (and while an append runs) and go in one transaction
/// together, so a busy daemon writes fewer, larger batches, and the writer thread does not compete for the CPU with the
/// apps in the middle of a transition (decision 0021). The log records what happened; it acknowledges nothing, so a
/// crash may lose its last moment.
///
/// Used on the engine's event loop only.
final class EventLogWriter: @unchecked Sendable {
    /// A caller of `offstage log --follow`, and the app it follows (nil: every app).
    struct Follower {
        let app: AppID?
        let responder: VarlinkResponder
    }

    /// How long entries wait to be appended together: the writer thread then does one transaction for a burst (a
    /// lifecycle transition, a run of SDK calls) instead of one per input, after the burst instead of during it.
    static let delay: TimeAmount = .milliseconds(2)

    private let store: OffstageStore
    private let eventLoop: any EventLoop
    private let threadPool: NIOThreadPool
    private let logger: Logger
    /// The entries of the input being applied, handed over by ``flush()``.
    var pending: [LogEntry] = []
    /// Entries waiting for the writer, whether an append runs, and the append armed ``delay`` after the first came.
    private var backlog: [LogEntry] = []
    private var busy = false
    private var scheduled: Scheduled<Void>?
    /// `offstage log --follow` callers, by connection.
    var followers: [VarlinkConnectionID: Follower] = [:]

    init(store: OffstageStore, eventLoop: any EventLoop, threadPool: NIOThreadPool, logger: Logger) {
        self.store = store
        self.eventLoop = eventLoop
        self.threadPool = threadPool
        self.logger = logger
    }

    /// Hands the input's entries to the writer (and to the daemon's own log).
    func flush() {
        guard !pending.isEmpty else { return }
        for entry in pending {
            logger.info(
                "\(entry.message)",
                metadata: ["offstage.app": "\(entry.app?.rawValue ?? "-")", "offstage.kind": "\(entry.kind.rawValue)"])
        }
        backlog.append(contentsOf: pending)
        pending.removeAll(keepingCapacityUpTo: DaemonEngine.keptCapacity)
        schedule()
    }

    /// Arms the append of what waits, unless one is armed or running (its completion arms the next).
    private func schedule() {
        guard !busy, scheduled == nil, !backlog.isEmpty else { return }
        scheduled = eventLoop.scheduleTask(in: Self.delay) { [self] in
            scheduled = nil
            writeBacklog()
        }
    }

    /// Starts an append of everything waiting, unless one is running (its completion arms the next).
    private func writeBacklog() {
        guard !busy, !backlog.isEmpty else { return }
        let entries = backlog
        backlog.removeAll(keepingCapacityUpTo: DaemonEngine.keptCapacity)
        busy = true
        let store = store
        threadPool.runIfActive(eventLoop: eventLoop) { try store.appendLog(entries) }.whenComplete { [self] result in
            busy = false
            switch result {
            case .success(let ids): publish(ids: ids, entries: entries)
            case .failure(let error): logger.error("event log write failed", metadata: ["offstage.error": "\(error)"])
            }
            schedule()
        }
    }

    /// Reads the log after every entry handed to the writer so far: entries still waiting are appended by the same
    /// job, just before the read, and the worker runs jobs in order, after any append already running.
    func read(app: AppID?, limit: Int) -> EventLoopFuture<[(Int64, LogEntry)]> {
        flush()
        scheduled?.cancel()
        scheduled = nil
        let waiting = backlog
        backlog.removeAll(keepingCapacityUpTo: DaemonEngine.keptCapacity)
        let store = store
        return threadPool.runIfActive(eventLoop: eventLoop) { () throws -> ([Int64], [(Int64, LogEntry)]) in
            let ids = try store.appendLog(waiting)
            return (ids, try store.readLog(app: app, limit: limit))
        }.map { [self] ids, rows in
            publish(ids: ids, entries: waiting)
            return rows
        }
    }

    /// Pushes written entries to `offstage log --follow` callers.
    private func publish(ids: [Int64], entries: [LogEntry]) {
        guard !followers.isEmpty else { return }
        for (connection, follower) in followers {
            let lines = zip(ids, entries).filter { follower.app == nil || $0.1.app == follower.app }
                .map { ControlInterface.LogLine(id: $0.0, entry: $0.1) }
            guard !lines.isEmpty else { continue }
            if !follower.responder.replyMore(ControlInterface.LogReply(entries: lines)) {
                followers[connection] = nil
            }
        }
    }
}
