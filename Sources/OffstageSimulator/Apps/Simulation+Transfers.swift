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
        case .saveSession(let session):
            transferSessionJournal[session.key] = session
        case .deleteSession(let key):
            transferSessionJournal[key] = nil
        case .saveRelaunches(let app, let record):
            transferRelaunchJournal[app] = record.count == 0 ? nil : record
        case .start(let task):
            transferAttempts[task.id] = task.attempt
            let size = transferSizes[task.request.url] ?? 1_000_000
            let seconds = size < 0 ? 0.05 : Double(max(size - task.bytesDone, 0)) / max(transferBandwidth, 1)
            queue.schedule(.transferAttemptEnds(task: task.id, attempt: task.attempt), at: now + .seconds(double: seconds))
        case .stop(let id, let attempt):
            if transferAttempts[id] == attempt { transferAttempts[id] = nil }
            queue.removeAll { if case .transferAttemptEnds(id, attempt) = $0 { true } else { false } }
        case .handOver(let task):
            handedOverTransfers.append(task.id)
        }
    }

    /// The simulated network finished an attempt: every byte moved (or the server said 404).
    mutating func transferAttemptEnds(_ id: UInt64, attempt: UInt64) {
        guard transferAttempts[id] == attempt, let task = core.transfers.tasks[id] else { return }
        transferAttempts[id] = nil
        let size = transferSizes[task.request.url] ?? 1_000_000
        guard size >= 0 else {
            return perform(core.transferEnded(id, attempt: attempt, .permanent(status: 404, "the server answered 404 Not Found"), at: now))
        }
        perform(core.transferProgress(id, attempt: attempt, bytesDone: size, bytesExpected: size, validator: nil, at: now))
        perform(core.transferEnded(id, attempt: attempt, .completed(status: 200), at: now))
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
