import OffstageCore
import OffstageSimulator
import Testing

/// Where the virtual device's barcode scanner appears when it is plugged in.
let scannerPath = "/dev/ttyACM0"

/// An accessory app: as it launches it registers its scanner and hands off a session to it (SPEC MODE-4).
let scannerApp = AppBehavior().on(
    "didFinishLaunching", .registerAccessory(name: "scanner", path: scannerPath, mode: .externalAccessory),
    .openAccessorySession(name: "scanner"))

/// App A with the modes and behaviour given (an accessory app by default), app B plain.
func accessorySimulation(
    a: AppBehavior = scannerApp, aModes: Set<BackgroundMode> = [.externalAccessory],
    configuration: CoreConfiguration = .init()
) -> Simulation {
    var simulation = Simulation(configuration: configuration)
    simulation.install(manifest(appA, modes: aModes), behavior: a)
    simulation.install(manifest(appB), behavior: AppBehavior())
    return simulation
}

extension Simulation {
    /// The path the simulated shell watches for the app's accessory `name`, if it watches it.
    func watchedPath(_ id: AppID, _ name: String) -> String? {
        accessoryWatches.first { $0.key.app == id && $0.key.name == name }?.value
    }

    /// The token of the session the app handed off (the only socket it has), if any.
    func sessionToken(of id: AppID) -> UInt64? {
        sockets.first { $0.value.app == id }?.key
    }

    /// The core's record of the app's accessory `name`.
    func link(_ id: AppID, _ name: String = "scanner") -> Accessories.Link? {
        core.modes.accessories.links[id]?[name]
    }

    /// The pid of the app's current process (-1 when it has none, which the core refuses).
    func pid(of id: AppID) -> Int32 { core.apps[id]?.process?.pid ?? -1 }

    /// Feeds the core one input by hand, carries out its actions, and returns them for a test to read.
    mutating func actions(_ body: (inout OffstageCore, Instant) throws -> [CoreAction]) rethrows -> [CoreAction] {
        var returned: [CoreAction] = []
        try input { core, now in
            returned = try body(&core, now)
            return returned
        }
        return returned
    }

    /// The error the app's request to register `registration` gets, or nil when it is accepted.
    mutating func register(_ id: AppID, _ registration: AccessoryRegistration) -> CoreError? {
        let present = pluggedAccessories.contains(registration.path)
        let pid = pid(of: id)
        do {
            try input { core, now in try core.registerAccessory(id, pid: pid, registration, present: present, at: now) }
            return nil
        } catch {
            return error as? CoreError
        }
    }

    /// The core's mode log lines about the app's accessories since `start`.
    func accessoryLines(of id: AppID, since start: Instant) -> [String] {
        log.filter { $0.app == id && $0.kind == .mode && $0.at >= start && $0.message.contains("accessory") }
            .map(\.message)
    }
}

extension [CoreAction] {
    /// The shell's accessory and session actions among these, in order (what a test compares).
    var accessoryShellActions: [CoreAction] {
        filter {
            switch $0 {
            case .watchAccessory, .unwatchAccessory, .watchSocket, .closeSocket: true
            default: false
            }
        }
    }

    /// Whether the app's state is saved.
    func saves(_ id: AppID) -> Bool { contains(.saveApp(id)) }
}
