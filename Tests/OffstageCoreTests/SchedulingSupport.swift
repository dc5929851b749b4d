import OffstageCore
import OffstageSimulator
import Testing

let newsApp: AppID = "com.example.news"
let refreshApp: AppID = "com.example.refresh"
let processingApp: AppID = "com.example.processing"
let refreshID = "com.example.refresh"
let processingID = "com.example.processing"

/// A manifest that may schedule work: `fetch` and `processing` modes and both identifiers listed.
func schedulingManifest(
    _ id: AppID, modes: Set<BackgroundMode> = [.fetch, .processing],
    identifiers: [String] = [refreshID, processingID]
) -> Manifest {
    Manifest(id: id, executable: "app", backgroundModes: modes, permittedTaskIdentifiers: identifiers)
}

/// A simulation with one scheduling app installed and launched, then sent home and suspended.
func suspendedSchedulingApp(
    _ id: AppID = refreshApp, configuration: CoreConfiguration = .init(), tasks: TaskBehavior = .init(),
    policy: any SchedulingPolicy = AdaptivePolicy()
) throws -> Simulation {
    var sim = Simulation(configuration: configuration, policy: policy)
    sim.install(schedulingManifest(id), behavior: AppBehavior().with(\.tasks, tasks))
    try sim.openAndSettle(id)
    sim.home()
    sim.run(for: .seconds(2))
    #expect(sim.state(of: id) == .suspended)
    return sim
}

extension Simulation {
    /// The log lines of one kind, for every app.
    func logLines(_ kind: LogEntry.Kind) -> [String] { log.filter { $0.kind == kind }.map(\.message) }

    /// Every pending request of `id` and its holds' controllers.
    func holdControllers(_ id: AppID, _ identifier: String) throws -> [String] {
        try explain(id, identifier).first?.holds.map(\.controller) ?? []
    }

    /// The times the app's task handlers were called.
    func runTimes(of id: AppID) -> [Instant] {
        trace.filter { $0.app == id && ($0.event == .callback("runTask") || $0.event == .callback("performFetch")) }.map(\.at)
    }
}

/// A submission of the refresh identifier.
let refreshSubmission = TaskBehavior.Submission(refreshID)
