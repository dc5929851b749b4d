import Foundation
import OffstageProtocol
import Synchronization

/// One run of the app's remote-notification handler (SPEC NT-4): answers the daemon's run once
/// (`CompleteRemoteNotification`), whichever comes first of the handler's result and the SDK's own deadline. The
/// daemon terminates an app whose handler overruns its 30 s, so the SDK completes a forgotten run as `.failed` a little
/// before that.
final class RemoteNotificationRun: Sendable {
    /// The daemon's number for this run.
    let run: UInt64
    /// The push's `apns-id`.
    let push: String
    private let link: DaemonLink
    private let ended: @Sendable (UInt64) -> Void
    private let claim = RunClaim()

    /// The run whose delegate call is in progress on the main actor, so that the default delegate implementation can
    /// hand over the task it starts.
    @MainActor static var current: RemoteNotificationRun?

    init(run: UInt64, push: String, link: DaemonLink, ended: @escaping @Sendable (UInt64) -> Void) {
        self.run = run
        self.push = push
        self.link = link
        self.ended = ended
    }

    /// Completes the run as `.failed` after `limit` unless it was completed before.
    func startTimer(_ limit: Duration) {
        claim.setTimer(
            Task { [weak self] in
                try? await Task.sleep(for: limit)
                guard !Task.isCancelled else { return }
                self?.expire(after: limit)
            })
    }

    /// Keeps the Swift task running the handler, to cancel it when the time is up (at once if it is up already).
    func attach(_ work: Task<Void, Never>) { claim.attach(work) }

    /// Whether the run was completed.
    var isCompleted: Bool { claim.isCompleted }

    /// Its process is gone: nothing of it answers any more; its handler is cancelled and its timer stopped.
    func abandon() {
        guard let claimed = claim.claim() else { return }
        claimed.timer?.cancel()
        claimed.work?.cancel()
    }

    /// Completes the run; later calls are ignored.
    func complete(_ result: BackgroundFetchResult) {
        guard let claimed = claim.claim() else { return }
        claimed.timer?.cancel()
        send(result)
    }

    private func send(_ result: BackgroundFetchResult) {
        ended(run)
        link.completeRemoteNotification(run: run, result: result)
    }

    /// The run's time is up: completes it as failed, so that the app is not terminated, and cancels the async handler
    /// (whose later return is then ignored).
    private func expire(after limit: Duration) {
        guard let claimed = claim.claim() else { return }
        claimed.work?.cancel()
        reportToDeveloper(
            "the remote-notification handler for push \(push) did not complete within \(limit): completing it as "
                + ".failed; return from application(_:didReceiveRemoteNotification:) (or call its completion "
                + "handler) within 30 s")
        send(.failed)
    }
}

/// The app's remote-notification callbacks: each `remoteNotification` becomes one call of the delegate's handler and
/// one completion, also when the handler throws, never completes, or the app has no delegate.
@MainActor
final class RemoteNotificationDispatch {
    nonisolated static let shared = RemoteNotificationDispatch(link: DaemonLink.shared)

    /// How long the handler has before the SDK completes the run as `.failed`: the daemon allows 30 s.
    nonisolated static let handlerTimeLimit: Duration = .seconds(27)

    let link: DaemonLink
    let timeLimit: Duration
    private let runs = RunBook()

    nonisolated init(link: DaemonLink, timeLimit: Duration = handlerTimeLimit) {
        self.link = link
        self.timeLimit = timeLimit
    }

    /// A `remoteNotification` callback, on the main actor: calls the delegate's completion-handler method (whose
    /// default runs the async one in a task) and returns; the run is completed when the handler finishes.
    func receive(
        _ callback: AppInterface.CallbackMessage, application: Application, delegate: (any ApplicationDelegate)?
    ) {
        guard let number = callback.run else {
            reportToDeveloper("ignored a remoteNotification callback without a run number (a daemon of another version?)")
            return
        }
        let push = callback.pushId ?? "?"
        let run = RemoteNotificationRun(run: number, push: push, link: link) { [runs] in runs.ended($0) }
        guard runs.open(run) else { return }  // the same run again: its handler runs (or ran) once
        let userInfo: [String: any Sendable]
        do {
            userInfo = try Self.userInfo(payload: callback.payload, apnsID: callback.pushId)
        } catch {
            reportToDeveloper("push \(push): \(error); completing it as .failed")
            run.complete(.failed)
            return
        }
        guard let delegate else {
            reportToDeveloper(
                "a remote notification arrived before the app has a delegate: completing it with .noData; pass the "
                    + "delegate to Application.main(delegate:)")
            run.complete(.noData)
            return
        }
        run.startTimer(timeLimit)
        RemoteNotificationRun.current = run
        defer { RemoteNotificationRun.current = nil }
        delegate.application(
            application, didReceiveRemoteNotification: userInfo, fetchCompletionHandler: { run.complete($0) })
    }

    /// Whether run `number` is in progress.
    func isOpen(_ number: UInt64) -> Bool { runs.isOpen(number) }

    /// The app's process ended (test kit): its open runs are dropped unanswered, their handlers cancelled and their
    /// timers stopped, and the numbers it saw are forgotten: the next process's daemon numbers its runs afresh.
    func forgetProcess() { runs.forget().forEach { $0.abandon() } }

    /// The handler's user info: the whole payload — `aps` and the server's own keys — as a notification's user info
    /// reads (whole numbers as `Int`, objects as `[String: any Sendable]`), and the push's `apns-id` under
    /// ``RemoteNotification/apnsIDKey``.
    nonisolated static func userInfo(
        payload: String?, apnsID: String?
    ) throws(RemoteNotificationError) -> [String: any Sendable] {
        guard let payload, let object = try? JSONDecoder().decode([String: JSONValue].self, from: Data(payload.utf8))
        else {
            let shown = payload.map { String($0.prefix(60)).debugDescription } ?? "nothing"
            throw RemoteNotificationError(
                .invalidArgument, "the push's payload is not a JSON object (got \(shown))",
                fix: "send a JSON object with an aps dictionary, e.g. {\"aps\":{\"content-available\":1}}")
        }
        var userInfo = UserInfoJSON.userInfo(object)
        if let apnsID { userInfo[RemoteNotification.apnsIDKey] = apnsID }
        return userInfo
    }
}

/// Runs in progress, and the latest finished ones, so that a run sent again (after a reconnect) is not handled twice.
final class RunBook: Sendable {
    private let state = Mutex<(open: [UInt64: RemoteNotificationRun], finished: [UInt64])>(([:], []))

    /// Keeps `run` open; false when its number is open or finished already.
    func open(_ run: RemoteNotificationRun) -> Bool {
        state.withLock { state in
            guard state.open[run.run] == nil, !state.finished.contains(run.run) else { return false }
            state.open[run.run] = run
            return true
        }
    }

    func ended(_ number: UInt64) {
        state.withLock { state in
            state.open[number] = nil
            state.finished.append(number)
            if state.finished.count > 256 { state.finished.removeFirst(state.finished.count - 256) }
        }
    }

    func isOpen(_ number: UInt64) -> Bool { state.withLock { $0.open[number] != nil } }

    /// Forgets every number, returning the runs that were open.
    func forget() -> [RemoteNotificationRun] {
        state.withLock { state in
            defer { state = ([:], []) }
            return Array(state.open.values)
        }
    }
}
