import Foundation

/// How the adaptive policy plans one request (see ``AdaptivePolicy`` for the rules and their reasons).
extension AdaptivePolicy {
    /// A request's plan: a time, or a reason to wait for a change rather than a time.
    enum Plan {
        case at(Target)
        case wait(String)
    }

    /// When a request should run: the instant, why, the earliest it may be pulled into a shared wake-up, and whether
    /// it may wake the device by itself (a refresh that only makes content younger joins wake-ups, never starts one).
    struct Target {
        var at: Instant
        var reason: String
        var notBefore: Instant
        var wakes = true
    }

    func plan(for candidate: SchedulingContext.Candidate, _ context: SchedulingContext) -> Plan {
        let usage = candidate.usage
        let lastRefresh = candidate.results.lastRefreshAt
        let hours = usage.usualHours(
            at: context.now, halfLifeDays: context.usageHalfLifeDays, fraction: usualFraction, minimumRate: minimumUsualRate)
        // Dirty: opened since the last refresh started (one that completed while the user was in the app does not
        // count for the next open: decision 0046).
        guard lastRefresh == nil || usage.openedSince(candidate.results.lastRefreshStartedAt ?? lastRefresh) else {
            return cleanPlan(usage, lastRefresh: lastRefresh, hours, context).map { limited($0, candidate, context) }
                ?? .wait("content is up to date: not opened since its last refresh")
        }
        if context.awake {
            // Awake anyway: refresh once the user has been away from the app `refreshAfterUse` (back-off does not
            // apply: this wakes nothing).
            let ready = max(context.now, usage.lastLeft.map { $0 + .seconds(double: refreshAfterUse) } ?? context.now)
            return .at(Target(at: ready, reason: "the device is awake and the app was opened since its last refresh", notBefore: ready))
        }
        if usage.leftByLock {
            return resumePlan(usage, context).map { limited($0, candidate, context) }
                ?? .wait("it will be refreshed when the screen next comes on")
        }
        return limited(dirtyPlan(usage, hours, context), candidate, context)
    }

    /// The app left in front at the lock. While the screen was on, every app the user left was refreshed at once, so
    /// asleep this is the one dirty app, and a refresh when the screen next comes on serves every open of it but one:
    /// the next unlock opening it first. A wake-up for it pays only if the device is still asleep when it comes, and
    /// serves an open only if the next unlock opens this app first: wake for it at the earliest instant — `resumeDelay`
    /// after the lock, or the start of a later hour — from which that chance is at least `resumeThreshold`.
    func resumePlan(_ usage: UsageHistory, _ context: SchedulingContext) -> Target? {
        let now = context.now
        let left = usage.lastLeft ?? now
        let chance = FirstOpenChance(usage, context, prior: firstOpenPrior)
        var at = max(left + .seconds(double: resumeDelay), now)
        let horizon = left + .seconds(86_400)
        while at < horizon {
            let p = chance.ofNextUnlock(from: at, context.clock)
            if p >= resumeThreshold {
                let reason = "the next unlock is likely to open it first: about \(Int((p * 100).rounded())) % from \(at.clockTime)"
                return Target(at: at, reason: reason, notBefore: now)
            }
            at = context.clock.startOfNextHour(after: at)
        }
        return nil
    }

    /// The chance that the next unlock opens one app first, from the device's unlocks per hour of the day and the app's
    /// first opens after an unlock. Each hour's share is shrunk toward the app's share over the whole day by `prior`
    /// unlocks' worth, so that one open after one unlock at an hour is not a certainty.
    struct FirstOpenChance {
        /// Expected unlocks in each hour of the day.
        var unlockRates: [Double]
        /// The share of the unlocks in each hour that open the app first.
        var share: [Double]

        init(_ usage: UsageHistory, _ context: SchedulingContext, prior: Double) {
            let unlocks = context.unlocks.counts(at: context.now, halfLifeDays: context.usageHalfLifeDays).opens
            let first = usage.counts(at: context.now, halfLifeDays: context.usageHalfLifeDays).firstOpens
            unlockRates = context.unlocks.hourlyRates(at: context.now, halfLifeDays: context.usageHalfLifeDays)
            // Each hour's share is pulled toward the app's share of all unlocks by `prior` unlocks' worth.
            let overall = unlocks.reduce(0, +) > 0 ? first.reduce(0, +) / unlocks.reduce(0, +) : 0
            share = (0..<24).map { min(1, (first[$0] + prior * overall) / (unlocks[$0] + prior)) }
        }

        /// The chance that the first unlock after `start` opens the app first: over the hours ahead, the chance that the
        /// device is still locked, that the unlock comes in that hour, and that it opens the app (unlocks as a Poisson
        /// process with each hour's rate; after two days without an unlock, no chance).
        func ofNextUnlock(from start: Instant, _ clock: LocalClock) -> Double {
            var stillLocked = 1.0
            var chance = 0.0
            var cursor = start
            for _ in 0..<48 where stillLocked > 0.001 {
                let next = clock.startOfNextHour(after: cursor)
                let hour = clock.hourOfDay(cursor)
                let unlock = 1 - exp(-unlockRates[hour] * (next - cursor).inSeconds / 3600)
                chance += stillLocked * unlock * share[hour]
                stillLocked *= 1 - unlock
                cursor = next
            }
            return chance
        }
    }

    /// A dirty app that did not leave with the lock (it could not be refreshed while the screen was on): before the
    /// user is expected back.
    func dirtyPlan(_ usage: UsageHistory, _ hours: UsualHours, _ context: SchedulingContext) -> Target {
        let now = context.now
        let left = usage.lastLeft ?? now
        let lead = Duration.seconds(double: self.lead)
        var at: Instant
        var reason: String
        if let gap = usage.typicalGap, gap.inSeconds <= busyGap, let opened = usage.lastOpen {
            // In use: the user has been coming back every `gap`; be ready a little before the next time.
            at = max(left, opened + gap - lead)
            reason = "opened every \(format(gap.inSeconds / 60)) min lately: next open expected around \((opened + gap).clockTime)"
        } else if let start = hours.starts(after: left, context.clock, limit: 1).first {
            at = max(left, start - lead)
            reason = "\(format(self.lead / 60)) min before the user usually opens it (from \(start.clockTime))"
        } else {
            at = left + .seconds(double: fallbackDelay)
            reason = "opened since its last refresh; no usual time to open it yet"
        }
        let cap = left + .seconds(double: fallbackDelay)
        if at > cap, usage.daysObserved(at: now, halfLifeDays: context.usageHalfLifeDays) < learningDays {
            at = cap
            reason = "opened since its last refresh; still learning when the user opens it"
        }
        return Target(at: at, reason: reason, notBefore: now)
    }

    /// A clean app: refreshed again only before a usual hour at which its content would be older than `staleAfter`.
    func cleanPlan(_ usage: UsageHistory, lastRefresh: Instant?, _ hours: UsualHours, _ context: SchedulingContext) -> Target? {
        guard let lastRefresh, !hours.isEmpty else { return nil }
        let now = context.now
        let stale = Duration.seconds(double: staleAfter)
        if hours.contains(now, context.clock), now - lastRefresh > stale {
            let age = (now - lastRefresh).inSeconds
            return Target(
                at: now, reason: "content is \(format(age / 3600)) h old in an hour the user usually opens it", notBefore: now,
                wakes: age > staleWakeAfter && hours.rate(at: now, context.clock) >= habitRate)
        }
        guard let start = hours.starts(after: now, context.clock).first(where: { $0 - lastRefresh > stale }) else { return nil }
        let age = (start - lastRefresh).inSeconds
        // The open will be fresh either way: only old content before a strong habit is worth a wake-up of its own.
        let habit = hours.rate(at: start, context.clock) >= habitRate
        return Target(
            at: start - .seconds(double: lead),
            reason: "content would be \(format(age / 3600)) h old when the user usually opens it (from \(start.clockTime))",
            notBefore: now, wakes: age > staleWakeAfter && habit)
    }

    /// Applies what limits how often an app may wake the device: back-off after runs without new data, and dormancy.
    func limited(_ target: Target, _ candidate: SchedulingContext.Candidate, _ context: SchedulingContext) -> Plan {
        let now = context.now
        let results = candidate.results
        var notBefore = now
        var why: String?
        if let lastRun = results.lastRunAt {
            if results.unproductiveStreak > 0 {
                let delay = min(backoffBase * Double(1 << min(results.unproductiveStreak - 1, 20)), backoffMax)
                let until = lastRun + .seconds(double: delay)
                if until > notBefore {
                    notBefore = until
                    why = "backing off after \(results.unproductiveStreak) run(s) without new data"
                }
            }
            let lastSeen = candidate.usage.lastOpen ?? candidate.installedAt
            let idleDays = (now - lastSeen).inSeconds / 86_400
            let until = lastRun + .seconds(double: dormantInterval)
            if idleDays * 86_400 > dormantAfter, until > notBefore {
                notBefore = until
                why = "not opened for \(format(idleDays)) days: refreshed once a day"
            }
        }
        if target.at < notBefore, let why {
            return .at(Target(at: notBefore, reason: why, notBefore: notBefore, wakes: target.wakes))
        }
        let reason = target.at < now ? "due: " + target.reason : target.reason
        return .at(Target(at: max(target.at, notBefore), reason: reason, notBefore: notBefore, wakes: target.wakes))
    }
}
