import OffstageCore

extension ModelShell {
    /// Carries out one push command: the gateway handing in a push (its row written first, as the gateway stores it
    /// before answering 200), or the app completing its remote-notification handler (SPEC NT-4, NT-5).
    mutating func applyPush(_ command: ModelCommand, slot: Int) {
        let id = ModelWorld.app(slot)
        switch command {
        case .push(_, let model):
            // The gateway stamps the push with the model's clock, in milliseconds, as the device link carries it:
            // pushes handed in at one instant share a stamp. The store makes each app's unique, as the daemon's does
            // (two pushes with one collapse id and one stamp would otherwise share a delivery key).
            let push = pushes.accept(model.remotePush(id: pushes.nextID(), app: id, at: now))
            feed { core, now throws(CoreError) in core.pushArrived(push, at: now) }
        case .completePush(_, let index, let result):
            guard let process = running(slot) else { return }
            var run: UInt64 = 999_999  // never handed out: completing it must be harmless
            if !process.pushRuns.isEmpty {
                run = processes[process.pid]!.pushRuns.remove(at: index % process.pushRuns.count)
            }
            feed { core, now throws(CoreError) in
                try core.completeRemoteNotification(id, pid: process.pid, run: run, result: result, at: now)
            }
        default:
            break
        }
    }

    /// The apps active in front now: a push wakes them without spending their budget.
    func appsActiveInFront() -> Set<AppID> {
        Set(core.apps.values.filter { CoreInvariants.isActiveInFront($0, core.device) }.map(\.app.id))
    }

    /// After an input: checks the handler runs the core started in it, counts the wakes that spent a budget (all
    /// but those of an app active in front before and after the input), and keeps the runs for the next input.
    mutating func trackPushRuns(activeInFrontBefore: Set<AppID>) {
        var current: [String: PushRun] = [:]
        var started: [(AppID, PushRun)] = []
        for id in core.apps.keys.sorted() {
            for run in core.apps[id]?.process?.pushRuns ?? [] {
                current[run.push] = run
                if pushes.running[run.push]?.id != run.id { started.append((id, run)) }
            }
        }
        guard !started.isEmpty else {
            pushes.running = current
            return
        }
        let seen = observation(firedTimer: false, derived: false)
        let activeInFront = activeInFrontBefore.intersection(appsActiveInFront())
        for (id, run) in started {
            for (invariant, message) in CoreInvariants.checkPushRunStarted(id, run, seen) { record(invariant, message) }
            guard !activeInFront.contains(id), pushes.rows[run.push]?.push.type != .voip else { continue }
            pushes.wakes[id, default: []].append(run.startedAt)
            if let excess = CoreInvariants.budgetExceeded(pushes.wakes[id] ?? [], core.pushLimits) {
                record(.pushBudget, "\(id): \(excess)")
            }
        }
        pushes.running = current
    }

    /// The daemon restarts, and the app processes end with it. The new core is built as the daemon builds it from
    /// its store: the device (no interruption, no app in front: none survived), every app with its durable state,
    /// the notifications, the held pushes; then, as the daemon starts, unfinished uninstalls are finished, handed
    /// pushes are recorded cut off (their handler is not called again), accepted ones are handed in again,
    /// accessories are watched and VoIP apps launched. The push budgets are not stored: every app's is full again.
    mutating func restartDaemon() {
        let old = core
        var device = old.device
        device.interruption = nil
        device.foregroundApp = nil
        var fresh = OffstageCore(configuration: old.configuration, device: device, numberSeed: old.upcomingNumber)
        for id in old.apps.keys.sorted() {
            guard let entry = old.apps[id] else { continue }
            fresh.restore(entry.app, durable: entry.durable)
        }
        fresh.restoreNotifications(old.notifications)
        let transfers = restoredTransfers(into: &fresh)
        transfersModel.engineStopped()
        let stored = pushes.readBack()
        let restored = fresh.restoreHeldPushes(stored.held)
        let cutOff = stored.handed.map {
            CoreAction.push(.finish(id: $0.id, app: $0.app, .cutOff("the daemon stopped while its handler ran")))
        }
        replaceCore(fresh)
        // The new daemon's watcher starts empty; the sockets and sessions the apps handed off died with them.
        sockets = [:]
        accessories.watches = [:]
        accessories.sessions = [:]
        accessories.owedReports = []
        // One input, as the daemon's start is one turn of its loop: in between, a handed push has no record yet.
        feed { core, now throws(CoreError) in
            // The journal's rows first, as the daemon applies them before any input.
            var actions = transfers + core.recover(at: now) + restored + cutOff
            for push in stored.accepted { actions += core.pushArrived(push, at: now) }
            return actions + core.watchAccessories(at: now) + core.launchAtBoot(at: now)
        }
    }
}
