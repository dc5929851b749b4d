import OffstageCore

/// Pushes on virtual time (SPEC NT-4, NT-5): the gateway hands them in, simulated apps handle them, and the records
/// are kept as the daemon's store keeps them.
extension Simulation {
    /// A push arrives from the gateway now.
    public mutating func receivePush(_ push: RemotePush) {
        perform(core.pushArrived(push, at: now))
    }

    /// A restarted daemon puts back the pushes its store kept held; returns the core's actions (also carried out).
    @discardableResult
    public mutating func restoreHeldPushes(_ held: [RemotePush]) -> [CoreAction] {
        for push in held { heldPushes[push.id] = push }
        let actions = core.restoreHeldPushes(held)
        perform(actions)
        return actions
    }

    /// Persists what the inbox decided, as the daemon's store does.
    mutating func perform(_ action: PushAction) {
        switch action {
        case .hold(let push):
            heldPushes[push.id] = push
        case .finish(let id, _, let outcome):
            heldPushes[id] = nil
            pushOutcomes[id] = outcome
        }
    }

    /// The remote-notification handler starts: it completes after the scripted runtime, if it ever does.
    mutating func startPushHandler(_ call: RemoteNotificationCall, pid: Int32, app id: AppID) {
        handledPushes[id, default: []].append(call.push)
        guard let handler = behavior(id).pushHandler else { return }
        schedule(.completePush(pid: pid, run: call.run, result: handler.result), after: handler.runtime)
    }

    mutating func completePush(_ run: UInt64, _ result: TaskResult, pid: Int32, app id: AppID) {
        do throws(CoreError) {
            perform(try core.completeRemoteNotification(id, pid: pid, run: run, result: result, at: now))
        } catch {
            errors.append(error)
        }
    }
}
