import OffstageCore

/// Reads how hot the device is (SPEC SCH-11) as the platform's thermal states, from the kernel's thermal zones
/// (`/sys/class/thermal/thermal_zone*`): each zone's `temp` against its own trip points (`trip_point_N_temp`,
/// `trip_point_N_type`), all in millidegrees Celsius. The hottest zone decides:
///
/// - critical: a `hot` or `critical` trip point is reached (the kernel is about to shut down or act);
/// - serious: a `passive` trip point is reached (the kernel throttles), or a hot or critical one is within the margin;
/// - fair: an `active` trip point is reached (a fan runs), or a passive one is within the margin;
/// - nominal otherwise.
///
/// A machine without thermal zones (a virtual machine, a container) is nominal. Zones whose temperature cannot be
/// read (a sensor that is off) are left out; trip points at or below 0 °C are taken as disabled.
public struct ThermalReader: Sendable {
    /// The kernel's thermal class folder.
    public static let systemRoot = "/sys/class/thermal"

    /// A trip point of a zone.
    public struct TripPoint: Hashable, Sendable {
        /// `active`, `passive`, `hot` or `critical` (the kernel's words).
        public var type: String
        /// Millidegrees Celsius.
        public var temperature: Int

        public init(type: String, temperature: Int) {
            self.type = type
            self.temperature = temperature
        }
    }

    /// One thermal zone as read.
    public struct Zone: Hashable, Sendable {
        /// The folder's name, e.g. `thermal_zone0`.
        public var name: String
        /// What it measures (`type`), e.g. `x86_pkg_temp`, `cpu-thermal`; empty when unreadable.
        public var type: String
        /// Millidegrees Celsius.
        public var temperature: Int
        public var tripPoints: [TripPoint]

        public init(name: String, type: String, temperature: Int, tripPoints: [TripPoint]) {
            self.name = name
            self.type = type
            self.temperature = temperature
            self.tripPoints = tripPoints
        }
    }

    /// The folder read.
    public let root: String
    /// The margin below trip points.
    public let settings: MachinePressureSettings

    /// A reader of `root`; tests pass a fixture folder laid out like sysfs.
    public init(root: String = ThermalReader.systemRoot, settings: MachinePressureSettings = .init()) {
        self.root = root
        self.settings = settings
    }

    /// The zones under the root, in name order; zones whose temperature cannot be read are left out.
    public func zones() -> [Zone] {
        let folder = SysfsFolder(root)
        return folder.entries().filter { $0.hasPrefix("thermal_zone") }.compactMap { name in
            let zone = folder.child(name)
            guard let temperature = zone.integer("temp") else { return nil }
            var trips: [TripPoint] = []
            for index in 0..<64 {
                guard let type = zone.text("trip_point_\(index)_type") else { break }
                guard let trip = zone.integer("trip_point_\(index)_temp") else { continue }
                trips.append(TripPoint(type: type, temperature: trip))
            }
            return Zone(name: name, type: zone.text("type") ?? "", temperature: temperature, tripPoints: trips)
        }
    }

    /// The thermal state now; nil when zones exist but none can be read.
    public func read() -> ThermalState? {
        reading().state
    }

    /// The state and what it was read from: for the daemon's start-up log line.
    public func reading() -> (state: ThermalState?, source: String) {
        let names = SysfsFolder(root).entries().filter { $0.hasPrefix("thermal_zone") }
        guard !names.isEmpty else { return (.nominal, "no thermal zones in \(root)") }
        let zones = zones()
        guard !zones.isEmpty else {
            return (nil, "none of the \(names.count) thermal zones in \(root) has a readable temperature")
        }
        return (Self.state(of: zones, margin: settings.thermalMargin), "\(zones.count) thermal zone(s) in \(root)")
    }

    /// The state of the hottest zone, as described on the type.
    public static func state(of zones: [Zone], margin: Double) -> ThermalState {
        zones.map { state(of: $0, margin: margin) }.max() ?? .nominal
    }

    /// One zone's state.
    public static func state(of zone: Zone, margin: Double) -> ThermalState {
        let marginMilli = Int((margin * 1000).rounded())
        var state = ThermalState.nominal
        for trip in zone.tripPoints where trip.temperature > 0 {
            let reached = zone.temperature >= trip.temperature
            let near = zone.temperature >= trip.temperature - marginMilli
            let level: ThermalState
            switch trip.type {
            case "critical", "hot": level = reached ? .critical : near ? .serious : .nominal
            case "passive": level = reached ? .serious : near ? .fair : .nominal
            case "active": level = reached ? .fair : .nominal
            default: level = .nominal
            }
            state = max(state, level)
        }
        return state
    }
}
