import Foundation
import OffstageProtocol
import Synchronization

extension Application {
    /// The daemon's `transferEvents` callback, on the main actor, already answered.
    func receiveTransferEvents(_ callback: AppInterface.CallbackMessage) {
        TransferDispatch.shared.receive(callback, application: self, delegate: delegate)
    }
}

/// The process's background sessions, the tasks it knows, the finished tasks it has delivered, and the wakes for
/// sessions' events (SPEC TR-3): what a `transferEvents` callback reaches.
@MainActor
final class TransferDispatch {
    nonisolated static let shared = TransferDispatch(link: DaemonLink.shared)

    let link: DaemonLink
    /// The newest session of each identifier.
    private(set) var sessions: [String: BackgroundSession] = [:]
    /// The tasks this process knows, by daemon id: the same object across refreshes and recreated sessions.
    var tasks: [UInt64: BackgroundSessionTask] = [:]
    /// The finished tasks given to a delegate in this process: never given twice.
    private var delivered: Set<UInt64> = []
    /// For each session the system woke the app for, the run of that wake: the next refresh that delivers its events
    /// ends in `urlSessionDidFinishEvents`.
    var wakes: [String: UInt64] = [:]
    /// The runs handled, so that a callback sent again (after a reconnect) calls the app's handler once.
    private var runs: Set<UInt64> = []
    /// How many sessions' refreshes are queued or running: work the daemon's callbacks and the app's calls set off
    /// that has not reached the delegate yet.
    var refreshing = 0

    nonisolated init(link: DaemonLink) { self.link = link }

    /// Forgets sessions, tasks and runs: a new process of the app starts (the test kit).
    func forgetProcess() {
        sessions = [:]
        tasks = [:]
        delivered = []
        wakes = [:]
        runs = []
        refreshing = 0
    }

    /// `session` is the newest with its identifier: the one before it hears nothing more.
    func adopt(_ session: BackgroundSession) {
        sessions[session.identifier] = session
    }

    /// The object for the task `message` describes, made or brought up to date, belonging to `session`.
    func task(for message: TransfersInterface.TaskMessage, in session: BackgroundSession) -> BackgroundSessionTask {
        if let known = tasks[message.id] {
            known.session = session
            known.update(message)
            return known
        }
        let task: BackgroundSessionTask =
            message.kind == "upload"
            ? BackgroundUploadTask(message, session: session) : BackgroundDownloadTask(message, session: session)
        tasks[message.id] = task
        return task
    }

    /// The app reattached to a restarted daemon: every session of the process opens again (SPEC LC-8, TR-3).
    func reattached() {
        for session in sessions.values.sorted(by: { $0.identifier < $1.identifier }) { session.reattached() }
    }

    /// Whether finished task `id` has not been given to a delegate yet in this process (and now counts as given).
    func firstDelivery(of id: UInt64) -> Bool { delivered.insert(id).inserted }

    /// A `transferEvents` callback. With a run, the system woke the app for the session's events: the app delegate's
    /// `handleEventsForBackgroundURLSession` gets the identifier and a completion handler that ends the run; the
    /// session (recreated there, or open already) then fetches and delivers them, and its delegate hears
    /// `urlSessionDidFinishEvents`. Without a run the session is open in the app and its tasks moved on: it fetches
    /// them, reporting progress and delivering the finished ones.
    func receive(_ callback: AppInterface.CallbackMessage, application: Application, delegate: (any ApplicationDelegate)?) {
        guard let identifier = callback.session else {
            reportToDeveloper("ignored a transferEvents callback without a session (a daemon of another version?)")
            return
        }
        guard let number = callback.run else {
            sessions[identifier]?.refresh()
            return
        }
        guard runs.insert(number).inserted else { return }  // the same run again: handled once
        wakes[identifier] = number
        let run = TransferEventsRun(run: number, link: link)
        if let delegate {
            delegate.application(
                application, handleEventsForBackgroundURLSession: identifier, completionHandler: { run.complete() })
        } else {
            run.complete()
        }
        sessions[identifier]?.refresh()
    }
}

/// One run of the app's handler of a session's events: its completion handler sends `CompleteEvents` once, from any
/// thread, without waiting for the daemon.
final class TransferEventsRun: Sendable {
    let run: UInt64
    private let link: DaemonLink
    private let completed = Mutex(false)

    init(run: UInt64, link: DaemonLink) {
        self.run = run
        self.link = link
    }

    /// Ends the run; later calls are ignored.
    func complete() {
        let first = completed.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        let (link, run) = (link, run)
        Task.detached {
            do throws(BackgroundTransferError) {
                try link.completeTransferEvents(run: run)
            } catch {
                // A restarted daemon has cut the run off already: there is nothing left to complete.
                reportToDeveloper("could not report the completion of transfer-events run \(run): \(error)")
            }
        }
    }
}
