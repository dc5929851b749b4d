/// Reads the machine's battery level and whether it is on external power from the kernel's power-supply class
/// (`/sys/class/power_supply`), for the scheduler's device conditions (SPEC SET-1).
///
/// Every supply folder is read; supplies that power another device (`scope` = `Device`: a wireless mouse's
/// battery, a game pad) and empty battery bays (`present` = 0) are left out, so only the machine's own supplies
/// count.
///
/// - Battery level: the system battery's `capacity`. With several batteries (a laptop with a second battery) the
///   levels are weighed by what each holds when full, so the result is the share of the total charge.
/// - External power: true when a mains, USB or wireless supply is online, or a battery says `Charging`, `Full`
///   or `Not charging` (the kernel's word for "connected, but held at a charge threshold"), and likewise when a UPS
///   says so (a desktop on a UPS is on external power until the UPS says `Discharging`); false when supplies tell
///   and none says so; nil when no supply tells either way. A UPS's charge is not the machine's battery level.
///
/// A machine without supplies (a server or a virtual machine: `/sys/class/power_supply` empty or absent) reads
/// as no battery (level nil) and unknown external power (nil). The daemon then falls back to its configured
/// default for charging, or the value set from the CLI: the reader never guesses.
public struct PowerSupplyReader: Sendable {
    /// The kernel's power-supply class folder.
    public static let systemRoot = "/sys/class/power_supply"

    /// The folder read, with one folder (or link to one) per supply.
    public let root: String

    /// A reader of `root`; tests pass a fixture folder laid out like sysfs.
    public init(root: String = PowerSupplyReader.systemRoot) {
        self.root = root
    }

    /// Every supply under the root, in name order, including those the reading leaves out.
    public func supplies() -> [PowerSupply] {
        let folder = SysfsFolder(root)
        return folder.entries().compactMap { PowerSupply(folder: folder.child($0), name: $0) }
    }

    /// The machine's battery level and external power, read now.
    public func read() -> PowerReading {
        Self.reading(of: supplies())
    }

    /// Combines supplies into a reading, as described on the type.
    public static func reading(of supplies: [PowerSupply]) -> PowerReading {
        let system = supplies.filter { !$0.powersOtherDevice && $0.present }
        let batteries = system.filter { $0.kind == .battery }
        return PowerReading(batteryLevel: level(of: batteries), charging: externalPower(from: system))
    }

    /// The batteries' combined level: weighed by what each holds when full, else their plain mean.
    private static func level(of batteries: [PowerSupply]) -> Int? {
        let known = batteries.compactMap { battery in battery.capacity.map { (battery, $0) } }
        guard !known.isEmpty else { return nil }
        let weights = fullAmounts(of: known.map(\.0))
        let levels = known.map { Double($0.1) }
        let total: Double
        if let weights {
            let weightSum = Double(weights.reduce(0, +))
            total = zip(levels, weights).map { $0 * Double($1) }.reduce(0, +) / weightSum
        } else {
            total = levels.reduce(0, +) / Double(levels.count)
        }
        return min(100, max(0, Int(total.rounded())))
    }

    /// What each battery holds when full, when all report it in the same unit (µWh and µAh do not mix).
    private static func fullAmounts(of batteries: [PowerSupply]) -> [Int]? {
        var energies: [Int] = []
        var charges: [Int] = []
        for battery in batteries {
            switch battery.fullAmount {
            case .energy(let amount)?: energies.append(amount)
            case .charge(let amount)?: charges.append(amount)
            case nil: return nil
            }
        }
        if energies.count == batteries.count { return energies }
        if charges.count == batteries.count { return charges }
        return nil
    }

    /// Whether external power is connected, as described on the type.
    private static func externalPower(from supplies: [PowerSupply]) -> Bool? {
        var known = false
        for supply in supplies {
            if supply.kind.isExternalPower, let online = supply.online {
                if online { return true }
                known = true
            }
            if supply.kind == .battery || supply.kind == .ups, let status = supply.status {
                switch status {
                case .charging, .full, .notCharging: return true
                case .discharging: known = true
                case .unknown: break
                }
            }
        }
        return known ? false : nil
    }
}
