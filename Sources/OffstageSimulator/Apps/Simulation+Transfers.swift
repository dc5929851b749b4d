import Foundation
import OffstageCore

/// Background transfers on virtual time (SPEC §5): a simulated network moves each running task's bytes at
/// ``Simulation/transferBandwidth``, the journal is kept as the daemon's store keeps it, and simulated apps fetch,
/// acknowledge and complete their sessions' events as the SDK does.
extension Simulation {
    /// The app's code opens a background session; as the SDK does, it then fetches the session's tasks, and its
    /// delegate hears of the finished ones.
    public mutating func openTransferSession(_ id: AppID, identifier: String, configuration: TransferSessionConfiguration = .init()) {
        guard let pid = core.apps[id]?.process?.pid, processes[pid] != nil else { return }
        do throws(CoreError) {
            perform(try core.openTransferSession(id, pid: pid, identifier: identifier, configuration: configuration, at: now))
        } catch {
            return errors.append(error)
        }
        handleTransferEvents(identifier, run: nil, pid: pid, app: id)
    }

    /// The app's code creates a task in its session; returns its id, or nil when the core refused (see ``errors``).
    @discardableResult
    public mutating func createTransfer(_ id: AppID, session: String, _ request: TransferRequest) -> UInt64? {
        guard let pid = core.apps[id]?.process?.pid, processes[pid] != nil else { return nil }
        do throws(CoreError) {
            let (task, actions) = try core.createTransfer(id, pid: pid, session: session, request: request, at: now)
            perform(actions)
            return task.id
        } catch {
            errors.append(error)
            return nil
        }
    }

    /// Carries out what the transfer queue decided.
    mutating func perform(_ action: TransferAction) {
        switch action {
        case .save(let task):
            transferJournal[task.id] = task
        case .delete(let task):
            transferJournal[task.id] = nil
            if externalApps.contains(task.app) { external.append(.transferRemoved(task)) }
        case .saveSession(let session):
            transferSessionJournal[session.key] = session
        case .deleteSession(let key):
            transferSessionJournal[key] = nil
        case .saveRelaunches(let app, let record):
            transferRelaunchJournal[app] = record.count == 0 ? nil : record
        case .start(let task):
            transferAttempts[task.id] = task.attempt
            scheduleAttemptEnd(task)
        case .stop(let id, let attempt):
            if transferAttempts[id] == attempt { transferAttempts[id] = nil }
            queue.removeAll { if case .transferAttemptEnds(id, attempt) = $0 { true } else { false } }
        case .handOver(let task):
            handedOverTransfers.append(task.id)
            if externalApps.contains(task.app) {
                external.append(.transferHandedOver(task, body: transferResponses[task.request.url]?.body))
            }
        }
    }

    /// Schedules the end of `task`'s attempt, once its bytes have moved at ``transferBandwidth``; an attempt to a URL
    /// nobody answers yet waits (``unansweredTransfersWait``).
    mutating func scheduleAttemptEnd(_ task: TransferTask) {
        guard let response = response(to: task.request.url) else { return }
        let moving: Int64
        if response.unreachable != nil || !(200..<300).contains(response.status) {
            moving = 0
        } else if task.request.kind == .upload {
            moving = uploadSize(task, response)
        } else {
            moving = max(response.size - task.bytesDone, 0)
        }
        let seconds = moving == 0 ? 0.05 : Double(moving) / max(transferBandwidth, 1)
        queue.schedule(.transferAttemptEnds(task: task.id, attempt: task.attempt), at: now + .seconds(double: seconds))
    }

    /// The bytes an upload sends: its file's (``uploadSizes``), or the response's size when its file's is not given.
    func uploadSize(_ task: TransferTask, _ response: SimulatedResponse) -> Int64 {
        uploadSizes[task.request.uploadFile ?? ""] ?? response.size
    }

    /// What the server of `url` answers: its response, or one of its size; nil while it does not answer.
    func response(to url: String) -> SimulatedResponse? {
        if let response = transferResponses[url] { return response }
        if let size = transferSizes[url] { return size < 0 ? SimulatedResponse(status: 404) : SimulatedResponse(size: size) }
        return unansweredTransfersWait ? nil : SimulatedResponse(size: 1_000_000)
    }

    /// The server of `url` answers now (``transferResponses`` has its response): the attempts that were waiting for it
    /// move their bytes from now.
    public mutating func answerWaitingTransfers(to url: String) {
        let waiting = transferAttempts.filter { id, attempt in
            core.transfers.tasks[id]?.request.url == url
                && queue.filter({ if case .transferAttemptEnds(id, attempt) = $0 { true } else { false } }).isEmpty
        }
        for id in waiting.keys.sorted() {
            if let task = core.transfers.tasks[id] { scheduleAttemptEnd(task) }
        }
    }

    /// The simulated network finished an attempt: every byte moved and the server answered (a success, a status that
    /// ends the attempt, or no connection).
    mutating func transferAttemptEnds(_ id: UInt64, attempt: UInt64) {
        guard transferAttempts[id] == attempt, let task = core.transfers.tasks[id], let response = response(to: task.request.url)
        else { return }
        transferAttempts[id] = nil
        let result = response.result(for: task, limit: core.transferLimits.maximumResponseBodyBytes)
        if case .completed = result {
            let size = task.request.kind == .upload ? uploadSize(task, response) : response.size
            perform(core.transferProgress(id, attempt: attempt, bytesDone: size, bytesExpected: size, validator: nil, at: now))
        }
        perform(core.transferEnded(id, attempt: attempt, result, at: now))
    }

    /// The SDK's part of a `transferEvents` callback: fetch the session's tasks, give the finished ones to the
    /// delegate and acknowledge them; with a run, the app's handler then calls its completion handler after the
    /// scripted handler runtime.
    mutating func handleTransferEvents(_ session: String, run: UInt64?, pid: Int32, app id: AppID) {
        do throws(CoreError) {
            if run != nil {
                perform(try core.openTransferSession(id, pid: pid, identifier: session, configuration: core.transfers.sessions[TransferSessionKey(app: id, identifier: session)]?.configuration ?? .init(), at: now))
            }
            let (tasks, actions) = try core.fetchTransferEvents(id, pid: pid, session: session, at: now)
            perform(actions)
            let finished = tasks.filter(\.state.isFinished).map(\.id)
            transferEventsHeard[id, default: []] += finished
            if !finished.isEmpty { perform(try core.acknowledgeTransfers(id, pid: pid, session: session, ids: finished, at: now)) }
        } catch {
            errors.append(error)
        }
        guard let run, let runtime = behavior(id).transferEventsHandler else { return }
        schedule(.completeTransferEvents(pid: pid, run: run), after: runtime)
    }

    mutating func completeTransferEvents(_ run: UInt64, pid: Int32, app id: AppID) {
        do throws(CoreError) {
            perform(try core.completeTransferEvents(id, pid: pid, run: run, at: now))
        } catch {
            errors.append(error)
        }
    }
}
