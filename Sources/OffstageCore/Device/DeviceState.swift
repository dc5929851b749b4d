/// The user-facing state of the device: which app is in front, the lock screen, a pending interruption.
public struct DeviceState: Hashable, Sendable, Codable {
    /// The app in the foreground (inactive or active), if any (SPEC LC-1: at most one).
    public var foregroundApp: AppID?
    /// Whether the screen is locked.
    public var locked: Bool = false
    /// The app that was in front when the screen was locked; unlocking returns to it.
    public var appBeforeLock: AppID?
    /// After an unlock, until the first open or the next lock: the next open is the first after an unlock (the
    /// scheduler learns which app the user opens first after unlocking, and when).
    public var awaitingFirstOpen = false
    /// When the user unlocks the device, counted per hour of the day like an app's opens (SPEC SCH-5: with each app's
    /// first opens after an unlock, the chance that the next unlock opens a given app first).
    public var unlocks = UsageHistory()
    /// An interruption (an incoming call, an alert) in progress, and the app it covers.
    public var interruption: Interruption?
    /// Device-wide settings.
    public var settings: DeviceSettings = .init()
    /// Since when the screen is locked (device idle is derived from it).
    public var lockedSince: Instant?
    /// Power, network, memory pressure and temperature as the machine reports them.
    public var machine: MachineReading = .init()
    /// Conditions set by hand (`offstage device`), which win over the machine's readings.
    public var overrides: ConditionOverrides = .init()

    /// An interruption in progress.
    public struct Interruption: Hashable, Sendable, Codable {
        /// The app it covers, if any was in front.
        public var covering: AppID?
    }

    /// The initial state: unlocked, at the home screen.
    public init() {}

    // A state saved by an older version lacks newer keys: they keep their defaults.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        foregroundApp = try container.decodeIfPresent(AppID.self, forKey: .foregroundApp)
        locked = try container.decodeIfPresent(Bool.self, forKey: .locked) ?? false
        appBeforeLock = try container.decodeIfPresent(AppID.self, forKey: .appBeforeLock)
        awaitingFirstOpen = try container.decodeIfPresent(Bool.self, forKey: .awaitingFirstOpen) ?? false
        unlocks = try container.decodeIfPresent(UsageHistory.self, forKey: .unlocks) ?? .init()
        interruption = try container.decodeIfPresent(Interruption.self, forKey: .interruption)
        settings = try container.decodeIfPresent(DeviceSettings.self, forKey: .settings) ?? .init()
        lockedSince = try container.decodeIfPresent(Instant.self, forKey: .lockedSince)
        machine = try container.decodeIfPresent(MachineReading.self, forKey: .machine) ?? .init()
        overrides = try container.decodeIfPresent(ConditionOverrides.self, forKey: .overrides) ?? .init()
    }
}

/// Device conditions set by hand for testing (`offstage device`); nil leaves the machine's reading in charge.
public struct ConditionOverrides: Hashable, Sendable, Codable {
    /// Battery charge in percent.
    public var batteryLevel: Int?
    /// External power connected.
    public var charging: Bool?
    /// The network kind.
    public var network: NetworkKind?
    /// The device is idle (not in use); by default it is idle once locked for the configured idle delay.
    public var idle: Bool?
    /// Memory pressure (overrides stored by an older version have none: the machine's reading is in charge).
    public var memoryPressure: MemoryPressure?
    /// The thermal state (likewise).
    public var thermalState: ThermalState?

    /// No overrides.
    public init(
        batteryLevel: Int? = nil, charging: Bool? = nil, network: NetworkKind? = nil, idle: Bool? = nil,
        memoryPressure: MemoryPressure? = nil, thermalState: ThermalState? = nil
    ) {
        self.batteryLevel = batteryLevel
        self.charging = charging
        self.network = network
        self.idle = idle
        self.memoryPressure = memoryPressure
        self.thermalState = thermalState
    }
}
