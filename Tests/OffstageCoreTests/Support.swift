import OffstageCore
import OffstageSimulator
import Testing

let appA: AppID = "com.example.a"
let appB: AppID = "com.example.b"

func manifest(_ id: AppID, modes: Set<BackgroundMode> = [], exitsOnSuspend: Bool = false) -> Manifest {
    Manifest(id: id, executable: "app", backgroundModes: modes, exitsOnSuspend: exitsOnSuspend)
}

/// A simulation with the defaults of the specification and apps A and B installed.
func makeSimulation(
    configuration: CoreConfiguration = .init(), a: AppBehavior = .init(), b: AppBehavior = .init()
) -> Simulation {
    var simulation = Simulation(configuration: configuration)
    simulation.install(manifest(appA), behavior: a)
    simulation.install(manifest(appB), behavior: b)
    return simulation
}

extension Simulation {
    /// Opens an app and lets its launch finish.
    mutating func openAndSettle(_ id: AppID) throws {
        try open(id)
        run(for: .milliseconds(100))
    }

    /// Seconds from `start` to the first `event` of `id` after `start`.
    func seconds(from start: Instant, to event: TraceRecord.Event, of id: AppID) -> Double? {
        trace.first { $0.app == id && $0.event == event && $0.at >= start }.map { ($0.at - start).inSeconds }
    }

    /// The events of `id` from `start` on, without the returns of callbacks.
    func events(of id: AppID, since start: Instant) -> [TraceRecord.Event] {
        trace.filter { record in
            guard record.app == id, record.at >= start else { return false }
            if case .callbackReturned = record.event { return false }
            return true
        }.map(\.event)
    }

    /// The log lines of `id` of one kind.
    func logLines(of id: AppID, _ kind: LogEntry.Kind) -> [String] {
        log.filter { $0.app == id && $0.kind == kind }.map(\.message)
    }
}

func approximately(_ value: Double?, _ expected: Double, within tolerance: Double = 0.05) -> Bool {
    guard let value else { return false }
    return abs(value - expected) <= tolerance
}
