/// One power supply as the kernel describes it in `/sys/class/power_supply/NAME`: a battery, a mains adapter, a
/// USB port or a wireless charger.
public struct PowerSupply: Hashable, Sendable {
    /// What kind of supply it is (its `type` attribute).
    public enum Kind: Hashable, Sendable {
        /// A battery (`Battery`).
        case battery
        /// An uninterruptible power supply (`UPS`).
        case ups
        /// A mains adapter (`Mains`).
        case mains
        /// A USB port that can power the machine (`USB` and the older `USB_DCP`, `USB_CDP`, `USB_C`, `USB_PD`...).
        case usb
        /// A wireless charger (`Wireless`).
        case wireless
        /// A type this reader does not know (`BrickID`, `BMS`...), kept as written.
        case other(String)

        /// The kind for a `type` attribute.
        public init(typeAttribute: String) {
            switch typeAttribute {
            case "Battery": self = .battery
            case "UPS": self = .ups
            case "Mains": self = .mains
            case "Wireless": self = .wireless
            case let usb where usb == "USB" || usb.hasPrefix("USB_"): self = .usb
            default: self = .other(typeAttribute)
            }
        }

        /// Whether a supply of this kind being online means the machine runs on external power.
        public var isExternalPower: Bool {
            switch self {
            case .mains, .usb, .wireless: true
            case .battery, .ups, .other: false
            }
        }
    }

    /// A battery's charging state (its `status` attribute).
    public enum Status: String, Hashable, Sendable {
        /// Being charged: external power is connected.
        case charging = "Charging"
        /// Running the machine: no external power.
        case discharging = "Discharging"
        /// Full, with external power still connected.
        case full = "Full"
        /// External power is connected but the battery is held where it is (a charge threshold, too hot).
        case notCharging = "Not charging"
        /// The driver cannot tell.
        case unknown = "Unknown"
    }

    /// The folder name (`BAT0`, `AC`, `ucsi-source-psy-USBC000:001`...).
    public var name: String
    /// What kind of supply it is.
    public var kind: Kind
    /// Whether the supply is connected and providing power (`online`); nil when it does not say.
    public var online: Bool?
    /// Charge in percent (`capacity`, or `energy_now`/`energy_full` or `charge_now`/`charge_full` when a battery
    /// lacks `capacity`); nil when unknown.
    public var capacity: Int?
    /// The charging state; nil when the supply has no `status`.
    public var status: Status?
    /// Whether the supply powers another device (`scope` is `Device`: a mouse, a keyboard, a game pad) rather than
    /// the machine itself.
    public var powersOtherDevice: Bool
    /// Whether a battery is in its slot (`present`); false for an empty second-battery bay.
    public var present: Bool
    /// What the battery holds when full as it has aged (`energy_full` in µWh, else `charge_full` in µAh), used to
    /// weigh several batteries; nil when absent.
    public var fullAmount: FullAmount?

    /// How much a full battery holds, in the unit its driver reports.
    public enum FullAmount: Hashable, Sendable {
        /// `energy_full`, in µWh.
        case energy(Int)
        /// `charge_full`, in µAh.
        case charge(Int)
    }

    /// Creates a supply.
    public init(
        name: String,
        kind: Kind,
        online: Bool? = nil,
        capacity: Int? = nil,
        status: Status? = nil,
        powersOtherDevice: Bool = false,
        present: Bool = true,
        fullAmount: FullAmount? = nil
    ) {
        self.name = name
        self.kind = kind
        self.online = online
        self.capacity = capacity
        self.status = status
        self.powersOtherDevice = powersOtherDevice
        self.present = present
        self.fullAmount = fullAmount
    }

    /// Reads the supply in `folder`; nil when the folder has no readable `type` (not a supply).
    init?(folder: SysfsFolder, name: String) {
        guard let type = folder.text("type") else { return nil }
        let capacity =
            folder.integer("capacity")
            ?? Self.percent(folder.integer("energy_now"), of: folder.integer("energy_full"))
            ?? Self.percent(folder.integer("charge_now"), of: folder.integer("charge_full"))
        let fullAmount: FullAmount? =
            if let energy = folder.integer("energy_full"), energy > 0 {
                .energy(energy)
            } else if let charge = folder.integer("charge_full"), charge > 0 {
                .charge(charge)
            } else {
                nil
            }
        self.init(
            name: name,
            kind: Kind(typeAttribute: type),
            online: folder.integer("online").map { $0 != 0 },
            capacity: capacity.map { min(100, max(0, $0)) },
            status: folder.text("status").map { Status(rawValue: $0) ?? .unknown },
            // Absent means System: only peripherals' drivers set a scope.
            powersOtherDevice: folder.text("scope") == "Device",
            present: folder.integer("present").map { $0 != 0 } ?? true,
            fullAmount: fullAmount
        )
    }

    /// `now` as a percentage of `full`, rounded; nil when either is missing or `full` is not positive.
    private static func percent(_ now: Int?, of full: Int?) -> Int? {
        guard let now, let full, full > 0 else { return nil }
        return Int((Double(now) * 100 / Double(full)).rounded())
    }
}
