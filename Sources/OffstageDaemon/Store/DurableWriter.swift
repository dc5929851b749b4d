import Logging
import NIOCore
import NIOPosix
import OffstageCore

/// The daemon's durable writes (persist, then acknowledge): what each input changed — the apps' and the device's state
/// in one transaction, then its history records — is written on the worker thread, in order. A final reply waits for
/// the latest write (``latest``); the event loop goes on meanwhile.
///
/// Used on the engine's event loop only.
final class DurableWriter: @unchecked Sendable {
    private let store: OffstageStore
    private let eventLoop: any EventLoop
    private let threadPool: NIOThreadPool
    private let logger: Logger
    /// The latest durable write handed to the worker thread, until it completes; final replies wait for it.
    private(set) var latest: EventLoopFuture<Void>?
    /// Apps and the device whose durable state the current input changed, written in one transaction at its end.
    var unsavedApps: Set<AppID> = []
    var deviceUnsaved = false
    /// Processes that ended in the current input: their rows go in the same transaction as the state that records their
    /// exit, never before it.
    var endedProcesses: [(app: AppID, pid: Int32)] = []
    /// History records of the current input (SPEC SCH-8), written after its state.
    var pendingHistory: [HistoryRecord] = []

    init(store: OffstageStore, eventLoop: any EventLoop, threadPool: NIOThreadPool, logger: Logger) {
        self.store = store
        self.eventLoop = eventLoop
        self.threadPool = threadPool
        self.logger = logger
    }

    /// Hands the durable state the current input changed to the worker thread, as one transaction.
    func saveState(_ core: OffstageCore) {
        guard !unsavedApps.isEmpty || deviceUnsaved || !endedProcesses.isEmpty else { return }
        let apps = unsavedApps.sorted().compactMap { id in core.apps[id].map { ($0.app, $0.durable) } }
        let device = deviceUnsaved ? core.device : nil
        let ended = endedProcesses
        unsavedApps.removeAll(keepingCapacity: true)
        deviceUnsaved = false
        endedProcesses.removeAll(keepingCapacity: true)
        let store = store
        write("state") { try store.save(apps: apps, device: device, endedProcesses: ended) }
    }

    /// Hands the history records of the input to the worker thread, after its state (SPEC SCH-8).
    func saveHistory(at now: Instant) {
        guard !pendingHistory.isEmpty else { return }
        let records = pendingHistory
        pendingHistory.removeAll(keepingCapacityUpTo: DaemonEngine.keptCapacity)
        let store = store
        // Like the log, the history acknowledges nothing: replies do not wait for it (only for durable writes queued
        // after it on the same writer thread).
        threadPool.runIfActive(eventLoop: eventLoop) { try store.appendHistory(records, at: now) }.whenFailure { [logger] error in
            logger.error("store write failed (history)", metadata: ["offstage.error": "\(error)"])
        }
    }

    /// An app is forgotten: nothing of it still waiting is written (it would come back after the delete).
    func forget(_ id: AppID) {
        unsavedApps.remove(id)
        pendingHistory.removeAll { $0.app == id }
    }

    /// Runs a durable write on the worker thread. Jobs run in order, so the latest one completing means every earlier
    /// one has: final replies wait for it (``latest``).
    func write(_ what: String, _ job: @escaping @Sendable () throws -> Void) {
        let written = threadPool.runIfActive(eventLoop: eventLoop, job).recover { [logger] error in
            logger.error("store write failed (\(what))", metadata: ["offstage.error": "\(error)"])
        }
        latest = written
        written.whenComplete { [self] _ in
            if latest === written { latest = nil }
        }
    }
}
