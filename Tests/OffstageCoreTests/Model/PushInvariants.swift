import OffstageCore

/// The push checks of the model-based tests (SPEC NT-4, NT-5): every push accounted for, held and coalesced by the
/// rules, handed to the app only when it may be and only once, its handler ended by its deadline, and wakes within
/// the budget.
extension CoreInvariants {
    /// The push checks readable from the state after an input: the core's runs and held pushes against the store.
    static func checkPushes(_ seen: ModelObservation) -> [(Invariant, String)] {
        var found: [(Invariant, String)] = []
        func fail(_ invariant: Invariant, _ message: String) { found.append((invariant, message)) }
        let now = seen.now
        var running: [String: (app: AppID, run: PushRun)] = [:]
        for id in seen.apps.keys.sorted() {
            for run in seen.apps[id]?.process?.pushRuns ?? [] {
                if let other = running[run.push] {
                    fail(.pushAccountedFor, "\(run.push) runs twice at once: in \(other.app) and \(id)")
                }
                running[run.push] = (id, run)
            }
        }
        var held: [String: AppID] = [:]
        for (app, push) in seen.pushInbox.held { held[push.id] = app }

        // NT-4: exactly one of running, held, finished; the store says the same.
        for row in seen.pushStore.rows.values.sorted(by: { $0.order < $1.order }) {
            let id = row.push.id
            var done = false
            if case .done = row.state { done = true }
            let places = [running[id] != nil ? "running" : nil, held[id] != nil ? "held" : nil, done ? "finished" : nil]
                .compactMap { $0 }
            if places.isEmpty {
                fail(.pushAccountedFor, "\(id) (\(row.state) in the store) is neither running, held nor finished: lost")
            } else if places.count > 1 {
                fail(.pushAccountedFor, "\(id) is \(places.joined(separator: " and ")) at once")
            }
            if held[id] != nil, row.state != .held {
                fail(.pushAccountedFor, "the core holds \(id), the store has it \(row.state)")
            }
        }
        // NT-4: one push held per app in the store too (one released to its handler is held there until handed).
        let heldRows = seen.pushStore.rows.values.filter { $0.state == .held && running[$0.push.id] == nil }
        for (app, rows) in Dictionary(grouping: heldRows, by: \.push.app).sorted(by: { $0.key < $1.key }) where rows.count > 1 {
            let ids = rows.sorted { $0.order < $1.order }.map(\.push.id).joined(separator: ", ")
            fail(.pushHeld, "the store holds \(ids) for \(app): the older were not finished as coalesced")
        }
        for id in Set(running.keys).union(held.keys).sorted() where seen.pushStore.rows[id] == nil {
            fail(.pushAccountedFor, "the core has \(id), which never arrived")
        }

        // NT-4, NT-5: held only while the budget is spent and the push has not expired.
        for (app, push) in seen.pushInbox.held.sorted(by: { $0.key < $1.key }) {
            if push.app != app { fail(.pushHeld, "\(push.id) of \(push.app) is held for \(app)") }
            if push.expired(at: now) {
                fail(.pushHeld, "\(push.id) is still held for \(app) \(formatSeconds((now - push.expiresAt!).inSeconds)) s after it expired")
            }
            let wakes = seen.pushInbox.budgets[app].map { $0.wakes(at: now, seen.pushLimits) } ?? 1
            if wakes >= 1 { fail(.pushHeld, "\(push.id) is still held for \(app), whose budget has \(wakes) wake(s)") }
        }

        // NT-4: the handler has its 30 s; past them the app is being terminated, and is gone within the grace.
        let grace = seen.configuration.terminationGrace
        for (id, (app, run)) in running.sorted(by: { $0.key < $1.key }) {
            guard let process = seen.apps[app]?.process else { continue }
            if process.frozen, process.termination == nil {
                fail(.pushHandlerDeadline, "\(app) is suspended while its handler for \(id) runs")
            }
            if abs((run.deadline - run.startedAt).inSeconds - seen.configuration.remoteNotificationTime) > 1e-9 {
                fail(.pushHandlerDeadline, "the handler for \(id) has \(formatSeconds((run.deadline - run.startedAt).inSeconds)) s")
            }
            guard now >= run.deadline else { continue }
            let over = formatSeconds((now - run.deadline).inSeconds)
            if process.termination == nil {
                fail(.pushHandlerDeadline, "the handler for \(id) runs \(over) s past its deadline and \(app) is not being terminated")
            } else if (now - run.deadline).inSeconds > grace + 1e-9 {
                fail(.pushHandlerDeadline, "the handler for \(id) outlived its deadline by \(over) s (the grace is \(formatSeconds(grace)) s)")
            }
        }
        return found
    }

    /// The push checks of one action: what the store makes of it, and whether a push may be held or handed now.
    static func checkPush(_ action: CoreAction, _ seen: ModelObservation) -> [(Invariant, String)] {
        var found: [(Invariant, String)] = []
        var store = seen.pushStore
        switch action {
        case .push(let pushAction):
            found += store.apply(pushAction)
            if case .hold(let push) = pushAction, isActiveInFront(seen.apps[push.app], seen.device) {
                found.append((.pushDeliveredByTheRules, "\(push.id) held for \(push.app), which is active in front"))
            }
        case .deliver(let id, _, let callback):
            guard case .remoteNotification(let call) = callback.kind else { break }
            found += store.hand(call.push, run: call.run)
            let entry = seen.apps[id]
            if entry == nil || entry?.uninstalling == true {
                found.append((.pushDeliveredByTheRules, "\(call.push) handed to \(id), which is being uninstalled or gone"))
            } else if entry?.durable.forceQuit == true {
                found.append((.pushDeliveredByTheRules, "\(call.push) handed to \(id), which the user force-quit"))
            }
        default:
            break
        }
        return found
    }

    /// The checks of a handler run the core started during the last input (SPEC NT-4, NT-5, LC-6, MAN-3): only for an
    /// installed app the user has not force-quit, before the push's expiration, with a deadline of its own.
    static func checkPushRunStarted(_ app: AppID, _ run: PushRun, _ seen: ModelObservation) -> [(Invariant, String)] {
        var found: [(Invariant, String)] = []
        let entry = seen.apps[app]
        if entry == nil || entry?.uninstalling == true {
            found.append((.pushDeliveredByTheRules, "a handler for \(run.push) started in \(app), which is being uninstalled or gone"))
        } else if entry?.durable.forceQuit == true {
            found.append((.pushDeliveredByTheRules, "a handler for \(run.push) started in \(app), which the user force-quit"))
        }
        if let push = seen.pushStore.rows[run.push]?.push {
            if push.app != app {
                found.append((.pushDeliveredByTheRules, "\(run.push) of \(push.app) runs in \(app)"))
            }
            if push.expired(at: run.startedAt) {
                let late = formatSeconds((run.startedAt - push.expiresAt!).inSeconds)
                found.append((.pushDeliveredByTheRules, "a handler for \(run.push) started \(late) s after it expired"))
            }
        }
        if let earlier = seen.pushStore.handed[run.push], earlier != run.id {
            found.append(
                (.pushDeliveredByTheRules, "a second handler for \(run.push) started: it was handed in run \(earlier)"))
        }
        return found
    }

    /// NT-4: the times of the wakes that spent an app's budget, the newest last, fit a bucket of `burst` refilled at
    /// `perHour`: in any window no more than burst + rate × window. Returns what exceeds it, or nil.
    static func budgetExceeded(_ wakes: [Instant], _ limits: PushBudget.Limits) -> String? {
        guard let last = wakes.last else { return nil }
        for (index, first) in wakes.enumerated() {
            let count = wakes.count - index
            let window = (last - first).inSeconds
            let allowed = Double(limits.burst) + limits.perHour * window / 3_600
            if Double(count) > allowed + 1e-6 {
                return "\(count) background wakes in \(formatSeconds(window)) s; the budget allows "
                    + "\(limits.burst) + \(limits.perHour)/h, \(formatSeconds(allowed)) in that window"
            }
        }
        return nil
    }

    /// Whether the app is active in front of an unlocked screen, ready for callbacks: a push wakes it without budget.
    static func isActiveInFront(_ entry: AppEntry?, _ device: DeviceState) -> Bool {
        guard let entry, let process = entry.process, !entry.uninstalling else { return false }
        return device.foregroundApp == entry.app.id && !device.locked && process.phase == .active && process.attached
            && process.launchCompleted && process.termination == nil && !process.frozen
    }
}
