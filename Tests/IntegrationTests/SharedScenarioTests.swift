import Foundation
import OffstageProtocol
import SharedScenarios
import Testing

/// The real daemon as a scenario's device: the example apps installed as bundles and run as real processes, driven
/// with the built CLI's own words, read from `offstage log` and `offstage apps`.
final class DaemonScenarioDevice: ScenarioDevice, @unchecked Sendable {
    let daemon: DaemonHarness

    init(_ daemon: DaemonHarness) { self.daemon = daemon }

    /// The scenarios' settings, as the daemon's configuration file.
    static var settings: [String: JSONValue] { SharedScenarios.settings.mapValues { .number($0) } }

    func install(_ app: ScenarioApp) async throws {
        var keys: [String: Any] = [:]
        if let modes = app.backgroundModes { keys["UIBackgroundModes"] = modes }
        if let identifiers = app.taskIdentifiers { keys["BGTaskSchedulerPermittedIdentifiers"] = identifiers }
        if let exits = app.exitsOnSuspend { keys["UIApplicationExitsOnSuspend"] = exits }
        if !app.arguments.isEmpty { keys["OffstageLinux"] = ["Arguments": app.arguments] }
        try daemon.install(app.example, id: app.id, keys)
    }

    func perform(_ words: [String]) async throws { _ = try daemon.ok(words) }

    func wait(_ seconds: Double) async throws { usleep(useconds_t(seconds * 1_000_000)) }

    func waitUntil(_ what: String, within seconds: Double, _ condition: @Sendable () async throws -> Bool) async throws {
        let end = DaemonHarness.now() + seconds
        while try await !condition() {
            guard DaemonHarness.now() < end else { throw HarnessError("\(what): not within \(seconds) s") }
            usleep(20_000)
        }
    }

    func log(_ app: String) async throws -> [ScenarioLogLine] {
        try daemon.log(app).map { ScenarioLogLine(at: $0.at, kind: $0.kind, message: $0.message) }
    }

    func state(of app: String) async throws -> String { try daemon.app(app).state }

    func explain(_ app: String, _ identifier: String) async throws -> ScenarioExplanation {
        let reply = try JSONDecoder().decode(
            ControlInterface.ExplainReply.self, from: Data(try daemon.ok("--json", "explain", app, identifier).utf8))
        guard let task = reply.tasks.first else { throw HarnessError("explain \(app) \(identifier): nothing to explain") }
        return ScenarioExplanation(controllers: task.holds.map(\.controller), summary: task.summary)
    }
}

/// SCENARIOS.md S3–S9 on the real daemon, with the scripts and expected values the test kit's run holds itself to
/// (`KitScenarioTests`): the same expectations hold on both (KIT-4).
@Suite("The shared acceptance scenarios on the real daemon (KIT-4)")
struct SharedScenarioTests {
    /// Runs `scenario` on a daemon of its own with the scenarios' settings, ending it and its apps after.
    func onDaemon<Observed>(_ scenario: (DaemonScenarioDevice) async throws -> Observed) async throws -> Observed {
        let harness = try DaemonHarness(settings: DaemonScenarioDevice.settings)
        defer { harness.tearDown() }
        try harness.start()
        return try await scenario(DaemonScenarioDevice(harness))
    }

    @Test("KIT-4: each shared scenario observes on the real daemon what it expects", arguments: SharedScenarios.all)
    func scenario(_ scenario: Scenario) async throws {
        let (observed, expected) = try await onDaemon { try await scenario.run($0) }
        #expect(observed == expected)
    }
}
