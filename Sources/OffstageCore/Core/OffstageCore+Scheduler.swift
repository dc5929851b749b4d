/// The scheduler (SPEC SCH-5..8): controllers decide what may run, the policy decides what does, and one deadline
/// says when to look again. It runs inside `finish` whenever something it depends on changed.
extension OffstageCore {
    /// The conditions as they stand at `now` (overrides, else the machine, else defaults).
    public func conditions(at now: Instant) -> DeviceConditions {
        let machine = device.machine
        let overrides = device.overrides
        let idleByLock = device.locked && (device.lockedSince.map { (now - $0).inSeconds >= configuration.idleDelay } ?? false)
        return DeviceConditions(
            batteryLevel: overrides.batteryLevel ?? machine.batteryLevel ?? 100,
            charging: overrides.charging ?? machine.charging ?? (machine.batteryLevel == nil),
            network: overrides.network ?? machine.network ?? .unmetered,
            idle: overrides.idle ?? idleByLock,
            lowPowerMode: device.settings.lowPowerMode,
            memoryPressure: overrides.memoryPressure ?? machine.memoryPressure ?? .normal,
            thermalState: overrides.thermalState ?? machine.thermalState ?? .nominal)
    }

    /// Whether the device is awake anyway: the screen is on, or work that woke it is running — scheduled work started
    /// since the lock, or a keep-alive handler. Work begun while the screen was on and still going at the lock does
    /// not count: the device sleeps as soon as it ends, and work added to it would be a wake-up of its own (decisions
    /// 0011, 0045).
    var isAwake: Bool {
        guard device.locked else { return true }
        let lockedSince = device.lockedSince
        return apps.values.contains { entry in
            guard let process = entry.process, !process.frozen else { return false }
            if process.inFlight?.kind == .keepAlive { return true }
            return process.runs.contains { run in lockedSince.map { run.startedAt >= $0 } ?? true }
        }
    }

    /// The app's pending requests, with its legacy fetch as one more when the manifest declares `fetch`.
    func pendingRequests(of entry: AppEntry) -> [TaskRequest] {
        // Continued-processing requests wait for a slot, not for the policy (SPEC SCH-11).
        var requests = entry.durable.schedule.requests.values.filter { $0.kind != .continued }
            .sorted { $0.identifier < $1.identifier }
        if entry.app.manifest.declares(.fetch) {
            requests.append(
                TaskRequest(identifier: TaskRequest.fetchIdentifier, kind: .fetch, submittedAt: entry.app.installedAt))
        }
        return requests
    }

    /// Every condition that holds `request` back at `now`; empty when it may run (SPEC SCH-6).
    func holds(on request: TaskRequest, of entry: AppEntry, _ conditions: DeviceConditions, now: Instant) -> [Hold] {
        var holds: [Hold] = []
        let settings = entry.app.settings
        let schedule = entry.durable.schedule
        if !device.settings.backgroundRefresh { holds.append(.refreshOffGlobally) }
        if !settings.backgroundRefresh { holds.append(.refreshOffForApp) }
        if !settings.backgroundActivity { holds.append(.backgroundActivityOff) }
        if conditions.lowPowerMode { holds.append(.lowPowerMode) }
        if entry.durable.forceQuit { holds.append(.forceQuit) }
        if !device.settings.multitaskingSupported {
            holds.append(.multitaskingOff)
        } else if entry.app.manifest.exitsOnSuspend {
            holds.append(.exitsOnSuspend)
        }
        if let process = entry.process {
            if process.phase.isForeground { holds.append(.inForeground) }
            if process.termination != nil { holds.append(.terminating) }
        }
        if let until = entry.durable.crashLoop.notBefore, until > now { holds.append(.crashLoop(until: until)) }
        if let earliest = request.earliestBegin, earliest > now { holds.append(.earliestBegin(earliest)) }
        if request.kind == .fetch {
            switch schedule.fetchInterval {
            case .never: holds.append(.fetchIntervalNever)
            case .minimum, .seconds:
                let seconds = fetchSeconds(schedule.fetchInterval)
                if let last = schedule.lastFetchAt, last + .seconds(double: seconds) > now {
                    holds.append(.fetchInterval(next: last + .seconds(double: seconds)))
                }
            }
        }
        if request.requiresNetwork {
            switch conditions.network {
            case .none: holds.append(.noNetwork)
            case .metered:
                if !settings.backgroundData { holds.append(.backgroundDataRestricted) }
                if device.settings.dataSaver && !settings.unrestrictedData { holds.append(.dataSaver) }
            case .unmetered: break
            }
        }
        if request.requiresExternalPower && !conditions.charging { holds.append(.externalPower) }
        if request.kind == .processing && !conditions.idle { holds.append(.deviceNotIdle) }
        if !conditions.charging && conditions.batteryLevel < configuration.minimumBatteryLevel {
            holds.append(.batteryLow(level: conditions.batteryLevel, minimum: configuration.minimumBatteryLevel))
        }
        if !conditions.charging {
            let clock = configuration.localClock
            let today = clock.day(now)
            let used = schedule.budget.used(on: today)
            if used >= configuration.dailyBackgroundBudget {
                holds.append(.dailyBudget(used: used, budget: configuration.dailyBackgroundBudget, resetsAt: clock.startOfDay(today + 1)))
            }
        }
        return holds
    }

    /// The fetch interval in seconds (`minimum` is the configured minimum; an interval is never shorter than it).
    func fetchSeconds(_ interval: FetchInterval) -> Double {
        switch interval {
        case .never: .infinity
        case .minimum: configuration.minimumFetchInterval
        case .seconds(let seconds): max(seconds, configuration.minimumFetchInterval)
        }
    }

    /// Decides: collects runnable requests, asks the policy, starts what it chose, and arms the next check.
    mutating func runScheduler(_ now: Instant) {
        schedulerDirty = false
        guard !shuttingDown else {
            schedulerDeadline = nil
            return
        }
        let conditions = conditions(at: now)
        settleContinued(conditions, now)
        observeContinuedWaits(now)
        refreshSchedulingViews(conditions, now)
        var candidates: [SchedulingContext.Candidate] = []
        var nextLift: Instant?
        func consider(_ instant: Instant?) {
            if let instant, instant > now, nextLift == nil || instant < nextLift! { nextLift = instant }
        }
        var processingPending = false
        var withCandidates: [AppID] = []
        for (id, view) in schedulingViews {
            consider(view.nextLift)
            if view.processingPending { processingPending = true }
            if !view.candidates.isEmpty { withCandidates.append(id) }
        }
        // In app order, as the policy has always seen them (its ties are broken by order).
        for id in withCandidates.sorted() { candidates += schedulingViews[id]?.candidates ?? [] }
        // Locked long enough, the device becomes idle by itself: processing may start then.
        if processingPending, device.locked, device.overrides.idle == nil, !conditions.idle, let since = device.lockedSince {
            consider(since + .seconds(double: configuration.idleDelay))
        }
        let awake = isAwake
        let context = SchedulingContext(
            now: now, awake: awake, locked: device.locked, lockedSince: device.lockedSince,
            charging: conditions.charging, clock: configuration.localClock,
            usageHalfLifeDays: configuration.usageHalfLifeDays, candidates: candidates, unlocks: device.unlocks)
        let decision = policy.decide(context)
        plan = decision.planned
        let chosen = decision.run.sorted()
        if !chosen.isEmpty && !awake {
            log(now, nil, .wakeup, "device woke for \(chosen.count) task(s): \(chosen.map(\.description).joined(separator: ", "))")
        }
        for key in chosen {
            guard let candidate = candidates.first(where: { $0.key == key }) else { continue }
            startRun(key.app, candidate.request, forced: false, now, why: decision.why[key])
        }
        // Keep-alive handlers whose window is open share this wake-up (SPEC SCH-7).
        if !chosen.isEmpty { runKeepAlives(leadingWith: nil, now) }
        consider(decision.nextCheck)
        if let check = decision.nextCheck, check <= now, chosen.isEmpty {
            // A policy that asks to be asked again now without running anything would spin: look again in a second.
            consider(now + .seconds(1))
        }
        schedulerDeadline = nextLift
    }

    /// Brings the per-app views up to date: every app when the conditions, the device's settings or the day changed;
    /// otherwise the apps that changed since the last look and those whose next lift has come.
    mutating func refreshSchedulingViews(_ conditions: DeviceConditions, _ now: Instant) {
        let inputs = SchedulingInputs(conditions: conditions, settings: device.settings, day: configuration.localClock.day(now))
        var stale = schedulingStale
        schedulingStale.removeAll(keepingCapacity: true)
        if inputs != schedulingInputs {
            schedulingInputs = inputs
            stale.formUnion(apps.keys)
            stale.formUnion(schedulingViews.keys)
        } else {
            for (id, view) in schedulingViews where view.nextLift.map({ $0 <= now }) ?? false { stale.insert(id) }
        }
        // Sorted: expiring runs emits callbacks, and the order of actions must not depend on hashing.
        for id in stale.sorted() {
            guard let entry = apps[id], !entry.uninstalling else {
                schedulingViews[id] = nil
                observeWaits(id, [], now)
                continue
            }
            expireRunsThatLostTheirConditions(id, conditions, now)
            let (view, waiting) = schedulingViewAndWaits(of: entry, conditions, now)
            schedulingViews[id] = view
            // What each request waits for is recorded whenever the scheduler looks (SPEC SCH-8 history).
            observeWaits(id, waiting, now)
        }
    }

    /// One app's view computed from scratch: what its controllers let through now, and when a hold next lifts.
    func schedulingView(of entry: AppEntry, _ conditions: DeviceConditions, _ now: Instant) -> AppSchedulingView {
        schedulingViewAndWaits(of: entry, conditions, now).view
    }

    /// The view, and what each pending request it looked at waits for (for the history).
    func schedulingViewAndWaits(
        of entry: AppEntry, _ conditions: DeviceConditions, _ now: Instant
    ) -> (view: AppSchedulingView, waiting: [TaskHistory.Waiting]) {
        var view = AppSchedulingView()
        var waitingNow: [TaskHistory.Waiting] = []
        let id = entry.app.id
        let running = Set(entry.process?.runs.map(\.request.identifier) ?? [])
        for request in pendingRequests(of: entry) where !running.contains(request.identifier) {
            if request.kind == .processing { view.processingPending = true }
            let holds = holds(on: request, of: entry, conditions, now: now)
            waitingNow.append(waiting(request, holds: holds))
            guard holds.isEmpty else {
                for lift in holds.compactMap(\.liftsAt) where lift > now && (view.nextLift.map { lift < $0 } ?? true) {
                    view.nextLift = lift
                }
                continue
            }
            view.candidates.append(.init(
                key: TaskKey(app: id, identifier: request.identifier), request: request,
                usage: entry.durable.schedule.usage, results: entry.durable.schedule.results,
                installedAt: entry.app.installedAt))
        }
        return (view, waitingNow)
    }

    /// Makes the next decision look at every app again, as every decision did before views were kept: the baseline
    /// the scale benchmark measures the incremental scheduler against, in the same run.
    public mutating func forgetSchedulingViews() {
        schedulingInputs = nil
        schedulerDirty = true
    }

    /// The apps whose kept view differs from one computed now, though nothing marks them as changed: empty when
    /// the incremental scheduler has been told of every change (tests check this after every input).
    public func schedulingViewsOutOfDate(at now: Instant) -> [AppID] {
        let conditions = conditions(at: now)
        let inputs = SchedulingInputs(conditions: conditions, settings: device.settings, day: configuration.localClock.day(now))
        guard inputs == schedulingInputs, !shuttingDown else { return [] }
        var outOfDate: [AppID] = []
        for id in Set(apps.keys).union(schedulingViews.keys).sorted() where !schedulingStale.contains(id) {
            if let view = schedulingViews[id], view.nextLift.map({ $0 <= now }) ?? false { continue }
            let expected = apps[id].flatMap { $0.uninstalling ? nil : schedulingView(of: $0, conditions, now) }
            if expected != schedulingViews[id] { outOfDate.append(id) }
        }
        return outOfDate
    }

    /// A processing task runs only while its conditions hold: when the user picks the device up or unplugs it, its
    /// expiration handler is called at once (as on iOS). Forced runs are exempt.
    mutating func expireRunsThatLostTheirConditions(_ id: AppID, _ conditions: DeviceConditions, _ now: Instant) {
        guard let entry = apps[id], let process = entry.process else { return }
        for run in process.runs where run.request.kind == .processing && !run.forced && !run.expirationSent {
            let lost = holds(on: run.request, of: entry, conditions, now: now).filter {
                [.deviceNotIdle, .externalPower, .noNetwork, .backgroundDataRestricted, .dataSaver, .lowPowerMode].contains($0)
            }
            if let first = lost.first { expireRun(id, run: run.id, because: "\(first)", cause: .conditions, now) }
        }
    }
}
