/// What each app used (SPEC SET-3): the core decides what its use counts as (in front or in the background, metered
/// or not, which day, a wake-up) at the end of every input; the shell reads the app's counters when it changes.
extension OffstageCore {
    /// Decides the usage context of the apps the input touched, and of the running apps at local midnight; emits what
    /// changed, with the bytes the daemon moved for apps' transfers, as one action.
    mutating func decideUsage(_ now: Instant, metered: Bool) {
        let clock = configuration.localClock
        let day = clock.day(now)
        if let split = usage.nextSplit(clock), split <= now { perAppStale.formUnion(usage.running) }
        var contexts: [AppID: UsageContext?] = [:]
        for id in perAppStale.sorted() {
            let kind = apps[id]?.process.map { process in
                UsageMeter.Kind(
                    foreground: process.phase.isForeground, backgroundRunning: process.phase == .background && !process.frozen,
                    metered: metered)
            }
            if let change = usage.update(id, to: kind, at: now, day: day) { contexts[id] = change }
        }
        guard !contexts.isEmpty || !transferredBytes.isEmpty else { return }
        var transferred: [UsageKey: TransferBytes] = [:]
        for (id, bytes) in transferredBytes {
            // The daemon moves them for the app, in front or not: they count as the app is now.
            let key = UsageKey(app: id, day: day, foreground: apps[id]?.process?.phase.isForeground == true, metered: metered)
            transferred[key] = bytes
        }
        emit(.usage(UsageChange(at: now, contexts: contexts, transferred: transferred)))
        transferredBytes = [:]
    }

    /// Counts bytes a transfer of the app moved to its usage.
    mutating func countTransferred(_ id: AppID, _ kind: TransferKind, bytes: Int64) {
        guard bytes > 0 else { return }
        switch kind {
        case .download: transferredBytes[id, default: .init()].received += bytes
        case .upload: transferredBytes[id, default: .init()].sent += bytes
        }
    }
}

extension OffstageCore {
    /// The local day `instant` falls on (days since 1970-01-01 in the device's local time): what usage is counted by.
    public func localDay(_ instant: Instant) -> Int64 { configuration.localClock.day(instant) }

    /// Days a usage query covers when it gives no start: today and the 29 before it, as the phones' usage screens.
    public static let defaultUsageDays: Int64 = 30

    /// Checks a usage query (SPEC SET-3) and says where its window starts: `since`, or the start of the local day
    /// 29 days ago; and the first local day it covers.
    public func usageWindow(_ app: AppID?, since: Instant?, at now: Instant) throws(CoreError) -> (from: Instant, firstDay: Int64) {
        if let app { _ = try entry(app) }
        let clock = configuration.localClock
        guard let since else {
            let firstDay = clock.day(now) - Self.defaultUsageDays + 1
            return (clock.startOfDay(firstDay), firstDay)
        }
        guard since <= now else {
            throw CoreError(
                .invalidArgument, "usage cannot start at \(since.clockTime), after now (\(now.clockTime))",
                fix: "give a day in the past, e.g. --since 7d or --since 2025-01-31")
        }
        return (since, clock.day(since))
    }
}
