import OffstageCore

/// A phone's battery on virtual time: it drains with the screen on, slowly in standby and a little for every second
/// of background work, and charges on a nightly charger. The replay feeds its level and charging state to the core
/// as the machine's reading, so the policies meet the same conditions a phone does (Doze only on battery, the
/// low-battery hold, budgets counted on battery).
///
/// Defaults are round figures for a current phone, assumptions rather than measurements: a day of typical use
/// from a full charge (screen-on drain 10 %/h, standby 0.5 %/h), about 0.005 % per second of background work, and a
/// charger from 23:30 to 07:00 (local time) at 40 %/h.
public struct VirtualBattery: Hashable, Sendable {
    /// Charge in percent.
    public var level: Double
    /// Drain with the screen on, percent per hour. Default 10.
    public var screenOnDrainPerHour: Double = 10
    /// Drain asleep, percent per hour. Default 0.5.
    public var standbyDrainPerHour: Double = 0.5
    /// Drain per second of background work, percent. Default 0.005.
    public var backgroundDrainPerSecond: Double = 0.005
    /// Charging speed, percent per hour. Default 40.
    public var chargePerHour: Double = 40
    /// The nightly charger; nil for none. Default 23:30 to 07:00.
    public var charger: ChargerWindow? = ChargerWindow(start: 23.5, end: 7)

    /// When a charger is connected each day, in local hours since midnight (the window may cross midnight).
    public struct ChargerWindow: Hashable, Sendable {
        /// Plugged in at this hour.
        public var start: Double
        /// Unplugged at this hour.
        public var end: Double

        /// A daily window.
        public init(start: Double, end: Double) {
            self.start = start
            self.end = end
        }
    }

    /// A battery at `level` percent.
    public init(level: Double = 80) { self.level = level }

    /// Whether the charger is connected at `instant`.
    public func isCharging(at instant: Instant, _ clock: LocalClock) -> Bool {
        guard let charger else { return false }
        let day = clock.day(instant)
        let hours = (instant - clock.startOfDay(day)).inSeconds / 3600
        return charger.start <= charger.end
            ? hours >= charger.start && hours < charger.end
            : hours >= charger.start || hours < charger.end
    }

    /// The next instant after `instant` at which the charger is plugged in or out; nil without a charger.
    public func nextChargerChange(after instant: Instant, _ clock: LocalClock) -> Instant? {
        guard let charger else { return nil }
        let day = clock.day(instant)
        let candidates = [day, day + 1].flatMap { day in
            [charger.start, charger.end].map { clock.startOfDay(day) + .seconds(double: $0 * 3600) }
        }
        return candidates.filter { $0 > instant }.min()
    }

    /// Runs the battery from `start` to `end` with the screen on or off, the charger as scheduled, and `background`
    /// seconds of background work in that time.
    public mutating func run(from start: Instant, to end: Instant, screenOn: Bool, background: Double = 0, _ clock: LocalClock) {
        var from = start
        while from < end {
            let to = min(end, nextChargerChange(after: from, clock) ?? end)
            let hours = (to - from).inSeconds / 3600
            if isCharging(at: from, clock) {
                level += hours * chargePerHour
            } else {
                level -= hours * (screenOn ? screenOnDrainPerHour : standbyDrainPerHour)
            }
            level = min(100, max(0, level))
            from = to
        }
        level = max(0, level - background * backgroundDrainPerSecond)
    }

    /// The reading the core gets: level (whole percent), charging, and the network (unmetered Wi-Fi by default).
    public func reading(at instant: Instant, _ clock: LocalClock, network: NetworkKind = .unmetered) -> MachineReading {
        MachineReading(batteryLevel: Int(level.rounded()), charging: isCharging(at: instant, clock), network: network)
    }
}
