import OffstageCore

/// What background work costs a phone, in joules. The numbers are documented one by one; those marked
/// **assumption** could not be checked against a published measurement and are order-of-magnitude choices.
///
/// The screen's own power is left out: every policy is compared on the same screen-on time, so it cancels.
public struct EnergyModel: Hashable, Sendable {
    /// The energy of one device wake-up: resuming from suspend, the minimum time the kernel stays awake, and
    /// suspending again. **Assumption**: 0.3 J (about 300 ms at about 1 W).
    public var wakeUpEnergy: Double
    /// The power of the CPU while background work runs, in watts. **Assumption**: 1.0 W (a mid-frequency big core
    /// of a recent phone).
    public var cpuPower: Double
    /// The extra CPU time of a cold launch (creating the process, loading code, initialising the app) over
    /// resuming a suspended app. **Assumption**: 1 s. For scale, Android vitals flags cold starts of 5 s or
    /// more as excessive (developer.android.com, "App startup time").
    public var coldLaunchCPUTime: Duration
    /// The radio that network work uses.
    public var radio: RadioPowerModel

    /// Creates a model; the defaults are documented on each property.
    public init(
        wakeUpEnergy: Double = 0.3, cpuPower: Double = 1.0, coldLaunchCPUTime: Duration = .seconds(1),
        radio: RadioPowerModel = .lte
    ) {
        self.wakeUpEnergy = wakeUpEnergy
        self.cpuPower = cpuPower
        self.coldLaunchCPUTime = coldLaunchCPUTime
        self.radio = radio
    }

    /// The default model on LTE.
    public static let lte = EnergyModel()

    /// The default model on Wi-Fi.
    public static let wifi = EnergyModel(radio: .wifi)

    /// The extra energy of one cold launch, in joules.
    public var coldLaunchEnergy: Double { coldLaunchCPUTime.inSeconds * cpuPower }
}
