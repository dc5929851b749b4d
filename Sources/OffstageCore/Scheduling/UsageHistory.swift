import Foundation

/// When the user opens an app, learned as a rate per hour of the day that fades with a half-life, so the scheduler
/// can place refreshes shortly before the times the user usually opens the app (SPEC SCH-5).
///
/// Pure and small (24 numbers): it is saved with the app and survives restarts (SPEC SCH-10).
public struct UsageHistory: Hashable, Sendable, Codable {
    /// Faded count of opens in each hour of the day (local time), index 0 = 00:00–01:00.
    public var hourlyOpens: [Double] = Array(repeating: 0, count: 24)
    /// Faded number of days observed; the denominator that turns counts into a rate.
    public var observedDays: Double = 0
    /// When the counts were last faded.
    public var updatedAt: Instant?
    /// When the user last opened the app.
    public var lastOpen: Instant?
    /// When the app last left the foreground.
    public var lastLeft: Instant?
    /// Opens ever recorded.
    public var totalOpens: Int = 0
    /// The most recent opens, oldest first (at most ``recentCapacity``).
    public var recentOpens: [Instant] = []
    /// Whether the app last left the foreground because the screen was locked (it was in front).
    public var leftByLock = false
    /// Faded count of the opens that were the first after an unlock, in each hour of the day: with the device's
    /// unlocks at that hour, the chance that the next unlock opens this app first (the one open a refresh at the
    /// unlock cannot serve in time).
    public var hourlyFirstOpens: [Double] = Array(repeating: 0, count: 24)

    /// How many recent opens are kept.
    public static let recentCapacity = 9

    /// Nothing observed.
    public init() {}

    // A history saved by an older version lacks newer keys: they keep their defaults.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        hourlyOpens = try container.decodeIfPresent([Double].self, forKey: .hourlyOpens) ?? hourlyOpens
        observedDays = try container.decodeIfPresent(Double.self, forKey: .observedDays) ?? 0
        updatedAt = try container.decodeIfPresent(Instant.self, forKey: .updatedAt)
        lastOpen = try container.decodeIfPresent(Instant.self, forKey: .lastOpen)
        lastLeft = try container.decodeIfPresent(Instant.self, forKey: .lastLeft)
        totalOpens = try container.decodeIfPresent(Int.self, forKey: .totalOpens) ?? 0
        recentOpens = try container.decodeIfPresent([Instant].self, forKey: .recentOpens) ?? []
        leftByLock = try container.decodeIfPresent(Bool.self, forKey: .leftByLock) ?? false
        hourlyFirstOpens = try container.decodeIfPresent([Double].self, forKey: .hourlyFirstOpens) ?? hourlyFirstOpens
        guard hourlyOpens.count == 24, hourlyFirstOpens.count == 24 else {
            throw DecodingError.dataCorruptedError(
                forKey: .hourlyOpens, in: container, debugDescription: "a usage history has one count per hour of the day (24)")
        }
    }

    /// Starts observing (at install): the days before that are not counted as days without opens.
    public mutating func start(at now: Instant) {
        if updatedAt == nil { updatedAt = now }
    }

    /// Records that the user opened the app; `firstAfterUnlock` when it is the first app opened since the screen was
    /// unlocked.
    public mutating func recordOpen(at now: Instant, _ clock: LocalClock, halfLifeDays: Double, firstAfterUnlock: Bool = false) {
        fade(to: now, halfLifeDays: halfLifeDays)
        hourlyOpens[clock.hourOfDay(now)] += 1
        if firstAfterUnlock { hourlyFirstOpens[clock.hourOfDay(now)] += 1 }
        lastOpen = now
        totalOpens += 1
        recentOpens.append(now)
        if recentOpens.count > Self.recentCapacity { recentOpens.removeFirst(recentOpens.count - Self.recentCapacity) }
    }

    /// The median time between the recent opens; nil with fewer than three. The median ignores the one long gap of a
    /// night or a day away, so it says how soon the user tends to come back while using the app.
    public var typicalGap: Duration? {
        guard recentOpens.count >= 3 else { return nil }
        let gaps = zip(recentOpens, recentOpens.dropFirst()).map { $1 - $0 }.sorted()
        return gaps[gaps.count / 2]
    }

    /// Records that the app left the foreground, and whether a lock sent it away.
    public mutating func recordLeft(at now: Instant, byLock: Bool = false) {
        lastLeft = now
        leftByLock = byLock
    }

    /// Whether the user opened the app after `instant` (or ever, when `instant` is nil).
    public func openedSince(_ instant: Instant?) -> Bool {
        guard let lastOpen else { return false }
        guard let instant else { return true }
        return lastOpen > instant
    }

    /// Expected opens per hour in each hour of the day, as of `now`.
    public func hourlyRates(at now: Instant, halfLifeDays: Double) -> [Double] {
        var faded = self
        faded.fade(to: now, halfLifeDays: halfLifeDays)
        // At least one day in the denominator: one open on the first day is not "every hour of every day".
        let days = max(faded.observedDays, 1)
        return faded.hourlyOpens.map { $0 / days }
    }

    /// The faded counts as of `now`: of all opens, and of first opens after an unlock, per hour of the day.
    public func counts(at now: Instant, halfLifeDays: Double) -> (opens: [Double], firstOpens: [Double]) {
        var faded = self
        faded.fade(to: now, halfLifeDays: halfLifeDays)
        return (faded.hourlyOpens, faded.hourlyFirstOpens)
    }

    /// Days of usage observed as of `now`, faded like the counts.
    public func daysObserved(at now: Instant, halfLifeDays: Double) -> Double {
        var faded = self
        faded.fade(to: now, halfLifeDays: halfLifeDays)
        return faded.observedDays
    }

    /// The hours of the day in which the user usually opens the app: those whose rate is at least `fraction` of the
    /// busiest hour's and at least `minimumRate` opens per hour. Empty when nothing is known yet.
    public func usualHours(at now: Instant, halfLifeDays: Double, fraction: Double, minimumRate: Double) -> UsualHours {
        let rates = hourlyRates(at: now, halfLifeDays: halfLifeDays)
        let floor = max(minimumRate, fraction * (rates.max() ?? 0))
        return UsualHours(rates: rates, usual: rates.map { $0 > 0 && $0 >= floor })
    }

    /// Fades the counts to `now`: each day of age halves them once per `halfLifeDays`.
    mutating func fade(to now: Instant, halfLifeDays: Double) {
        guard let updatedAt else {
            self.updatedAt = now
            return
        }
        let days = (now - updatedAt).inSeconds / 86_400
        guard days > 0 else { return }
        let factor = pow(0.5, days / max(halfLifeDays, 0.01))
        for index in hourlyOpens.indices {
            hourlyOpens[index] *= factor
            hourlyFirstOpens[index] *= factor
        }
        // The days just observed count with the average weight they fade through.
        observedDays = observedDays * factor + days * (1 + factor) / 2
        self.updatedAt = now
    }
}

/// When the user usually opens an app, by hour of the day (local time), with the expected opens per hour.
///
/// Plans made from it do not recede as time passes: they are anchored at fixed instants (when the user left the app,
/// the start of a usual hour), unlike "the most likely next open from now", which moves with now.
public struct UsualHours: Hashable, Sendable {
    /// Expected opens per hour, for each hour of the day.
    public var rates: [Double]
    /// Whether each hour is a usual one.
    public var usual: [Bool]

    /// Whether anything is known.
    public var isEmpty: Bool { !usual.contains(true) }

    /// Whether `instant` falls in a usual hour.
    public func contains(_ instant: Instant, _ clock: LocalClock) -> Bool { usual[clock.hourOfDay(instant)] }

    /// The expected opens per hour at `instant`.
    public func rate(at instant: Instant, _ clock: LocalClock) -> Double { rates[clock.hourOfDay(instant)] }

    /// The starts of the usual hours after `instant` (each whole hour that is usual), at most `limit` of them, within
    /// two days.
    public func starts(after instant: Instant, _ clock: LocalClock, limit: Int = 48) -> [Instant] {
        var result: [Instant] = []
        var hour = clock.startOfNextHour(after: instant)
        for _ in 0..<48 where result.count < limit {
            if usual[clock.hourOfDay(hour)] { result.append(hour) }
            hour = hour + .seconds(3600)
        }
        return result
    }
}

/// The device's local time, as a fixed offset from UTC: the hour of the day for usage patterns and the start of
/// the day for daily budgets. Pure (no time-zone database): the shell passes the offset it reads from the system.
public struct LocalClock: Hashable, Sendable, Codable {
    /// Seconds east of UTC.
    public var utcOffsetSeconds: Int

    /// Creates a clock for an offset.
    public init(utcOffsetSeconds: Int = 0) { self.utcOffsetSeconds = utcOffsetSeconds }

    func localSeconds(_ instant: Instant) -> Int64 {
        let seconds = instant.nanosecondsSinceEpoch / 1_000_000_000
        let adjusted = instant.nanosecondsSinceEpoch < 0 && instant.nanosecondsSinceEpoch % 1_000_000_000 != 0 ? seconds - 1 : seconds
        return adjusted + Int64(utcOffsetSeconds)
    }

    /// The hour of the day, 0...23.
    public func hourOfDay(_ instant: Instant) -> Int {
        let seconds = localSeconds(instant)
        let inDay = ((seconds % 86_400) + 86_400) % 86_400
        return Int(inDay / 3600)
    }

    /// The day number (days since 1970-01-01 in local time).
    public func day(_ instant: Instant) -> Int64 {
        let seconds = localSeconds(instant)
        return seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
    }

    /// Local midnight at the start of `day`.
    public func startOfDay(_ day: Int64) -> Instant {
        Instant(nanosecondsSinceEpoch: (day * 86_400 - Int64(utcOffsetSeconds)) * 1_000_000_000)
    }

    /// The first whole hour after `instant`.
    public func startOfNextHour(after instant: Instant) -> Instant {
        let seconds = localSeconds(instant)
        let next = (seconds >= 0 ? seconds / 3600 : (seconds - 3599) / 3600) * 3600 + 3600
        return Instant(nanosecondsSinceEpoch: (next - Int64(utcOffsetSeconds)) * 1_000_000_000)
    }
}
