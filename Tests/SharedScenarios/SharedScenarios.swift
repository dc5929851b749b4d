import Foundation

/// The acceptance scenarios of SCENARIOS.md whose every expectation is a decision of the system (S3–S9), written once:
/// each runs on a ``ScenarioDevice`` and returns what it observed, and the tests compare that with the scenario's one
/// expected value — on the test kit (`KitScenarioTests`) and on the real daemon (`IntegrationTests`), so the same
/// expectations hold on both (KIT-4). S1 and S2 are about what the shell does to a process (CPU time stops when it is
/// frozen): the daemon's own scenario tests check them.
public enum SharedScenarios {
    /// The settings both devices run with: the defaults' timings shortened by five, ratios kept (30 s budget → 6 s,
    /// 5 s warning → 1 s, suspension 1 s → 0.2 s), task runtimes shortened (refresh 6 s, processing 3 s).
    public static let settings: [String: Double] = [
        "backgroundTaskBudget": 6, "expirationWarning": 1, "suspendDelay": 0.2, "didEnterBackgroundTimeout": 1,
        "willTerminateTimeout": 1, "callbackTimeout": 1, "terminationGrace": 0.4, "reattachTimeout": 4,
        "refreshRuntime": 6, "processingRuntime": 3, "taskExpirationGrace": 1,
    ]

    // MARK: The apps

    static let finiteTask = ScenarioApp(example: "FiniteTask", id: "com.example.finite-task")
    static let exitsOnSuspend = ScenarioApp(
        example: "ExitsOnSuspend", id: "com.example.exits-on-suspend", exitsOnSuspend: true)
    /// Its fetch takes no time of its own: what S6 is about is the system's part.
    static let news = ScenarioApp(
        example: "NewsApp", id: "com.example.news", backgroundModes: ["fetch"], arguments: ["--fetch-seconds", "0"])
    static let refreshID = "com.example.refresh"
    static func refresh(_ arguments: [String]) -> ScenarioApp {
        ScenarioApp(
            example: "RefreshApp", id: "com.example.refresh-app", backgroundModes: ["fetch"], taskIdentifiers: [refreshID],
            arguments: arguments)
    }
    static let processingID = "com.example.processing"
    static let processing = ScenarioApp(
        example: "ProcessingApp", id: "com.example.processing-app", backgroundModes: ["processing"],
        taskIdentifiers: [processingID], arguments: ["--items", "1000", "--step-ms", "50"])

    // MARK: S3

    /// What S3 observed.
    public struct S3: Sendable, Hashable {
        public var callbacks: [String]
        public var endedOrKilled: Bool
        public var state: String
    }

    /// S3 (BT-5): back in the foreground a third of the budget after leaving, with the task still open (ended in
    /// will-enter-foreground, as the cookbook recipe does); then past where the budget would have ended.
    public static let s3Expected = S3(
        callbacks: ["will-resign-active", "did-enter-background", "will-enter-foreground", "did-become-active"],
        endedOrKilled: false, state: "active")

    public static func s3(on device: some ScenarioDevice) async throws -> S3 {
        var app = finiteTask
        app.arguments = ["--end-on-foreground"]
        try await device.install(app)
        try await device.perform(["open", app.id])
        try await device.waitFor(app.id, "active")
        let left = try await device.mark(app.id)
        try await device.perform(["home"])
        try await device.wait(2)
        try await device.perform(["open", app.id])
        try await device.waitFor(app.id, "active")
        try await device.wait(6)
        let log = try await device.log(app.id, after: left)
        return S3(
            callbacks: log.filter { $0.kind == "callback" }.map(\.message),
            endedOrKilled: log.contains { ["kill", "watchdog", "exit"].contains($0.kind) },
            state: try await device.state(of: app.id))
    }

    // MARK: S4

    /// What S4 observed.
    public struct S4: Sendable, Hashable {
        public var dismissed: [String]
        public var accepted: [String]
        public var finally: String
    }

    /// S4 (LC-2): a dismissed interruption resigns and restores active, never the background; an accepted one sends
    /// the app to the background, and it is suspended as usual (its task expires first).
    public static let s4Expected = S4(
        dismissed: ["will-resign-active", "did-become-active"], accepted: ["will-resign-active", "did-enter-background"],
        finally: "suspended")

    public static func s4(on device: some ScenarioDevice) async throws -> S4 {
        let app = finiteTask
        try await device.install(app)
        try await device.perform(["open", app.id])
        try await device.waitFor(app.id, "active")
        let first = try await device.mark(app.id)
        try await device.perform(["interrupt"])
        try await device.waitFor(app.id, "inactive")
        try await device.perform(["interrupt", "--dismiss"])
        try await device.waitFor(app.id, "active")
        try await device.wait(0.3)
        let dismissed = try await device.callbacks(app.id, after: first)
        let second = try await device.mark(app.id)
        try await device.perform(["interrupt", "--accept"])
        try await device.waitUntil("the app is in the background", within: 10) { try await device.state(of: app.id) != "active" }
        let accepted = Array(try await device.callbacks(app.id, after: second).prefix(2))
        try await device.waitFor(app.id, "suspended")
        return S4(dismissed: dismissed, accepted: accepted, finally: try await device.state(of: app.id))
    }

    // MARK: S5

    /// What S5 observed.
    public struct S5: Sendable, Hashable {
        public var leaving: [String]
        public var stateAfter: String
        public var reopening: [String]
    }

    /// S5 (LC-7): an app that exits on suspend gets will-resign-active and will-terminate (no did-enter-background),
    /// its process ends, and opening it again is a fresh launch.
    public static let s5Expected = S5(
        leaving: ["will-resign-active", "will-terminate"], stateAfter: "notRunning",
        reopening: ["did-finish-launching", "did-become-active"])

    public static func s5(on device: some ScenarioDevice) async throws -> S5 {
        let app = exitsOnSuspend
        try await device.install(app)
        try await device.perform(["open", app.id])
        try await device.waitFor(app.id, "active")
        let left = try await device.mark(app.id)
        try await device.perform(["home"])
        try await device.waitFor(app.id, "notRunning", within: 5)
        let leaving = try await device.callbacks(app.id, after: left)
        let stateAfter = try await device.state(of: app.id)
        let back = try await device.mark(app.id)
        try await device.perform(["open", app.id])
        try await device.waitFor(app.id, "active")
        return S5(leaving: leaving, stateAfter: stateAfter, reopening: try await device.callbacks(app.id, after: back))
    }

    // MARK: S6

    /// What S6 observed of the simulated fetch.
    public struct S6: Sendable, Hashable {
        public var callbacks: [String]
        public var launchedForFetch: Bool
        public var completedWithData: Bool
        public var finally: String
    }

    /// S6 (SCH-4, LC-2): `offstage fetch` launches the not-running news app into the background for fetch —
    /// did-finish-launching then perform-fetch, no did-become-active —, its handler completes with new data or no data,
    /// and it is suspended after.
    public static let s6Expected = S6(
        callbacks: ["did-finish-launching", "perform-fetch"], launchedForFetch: true, completedWithData: true,
        finally: "suspended")

    public static func s6(on device: some ScenarioDevice) async throws -> S6 {
        let app = news
        try await device.install(app)
        let start = try await device.mark(app.id)
        try await device.perform(["fetch", app.id])
        try await device.waitUntil("the fetch completed", within: 10) {
            try await device.log(app.id).contains { $0.kind == "taskDone" }
        }
        try await device.waitFor(app.id, "suspended")
        let log = try await device.log(app.id)
        let done = log.last { $0.kind == "taskDone" }?.message ?? ""
        return S6(
            callbacks: try await device.callbacks(app.id, after: start),
            launchedForFetch: log.contains { $0.kind == "launch" && $0.message.contains("(fetch)") },
            completedWithData: done.contains("newData") || done.contains("noData"), finally: try await device.state(of: app.id))
    }

    /// What S6 observed of an app whose fetch interval is still never.
    public struct S6Never: Sendable, Hashable {
        public var controllers: [String]
        public var summarySaysWhy: Bool
        public var state: String
    }

    /// S6: an app that declares fetch but never sets an interval is not woken by the policy, and explain says why.
    public static let s6NeverExpected = S6Never(controllers: ["time-window"], summarySaysWhy: true, state: "notRunning")

    public static func s6Never(on device: some ScenarioDevice) async throws -> S6Never {
        var app = finiteTask
        app.backgroundModes = ["fetch"]
        try await device.install(app)
        try await device.wait(2)
        let explained = try await device.explain(app.id, "fetch")
        return S6Never(
            controllers: explained.controllers,
            summarySaysWhy: explained.summary.contains("'never'") && explained.summary.contains("setMinimumBackgroundFetchInterval"),
            state: try await device.state(of: app.id))
    }

    // MARK: S7

    /// What S7 observed.
    public struct S7: Sendable, Hashable {
        public var callbacks: [String]
        public var completedWithNewData: Bool
        public var finally: String
    }

    /// S7 (SCH-1..3, SCH-9): the refresh app's request, run now with `offstage run-task` while it is suspended: its
    /// handler runs in the background (resumed, not launched, no did-become-active), completes with new data, and
    /// the app is suspended again.
    public static let s7Expected = S7(callbacks: ["run-task"], completedWithNewData: true, finally: "suspended")

    public static func s7(on device: some ScenarioDevice) async throws -> S7 {
        let app = refresh([])
        try await device.install(app)
        try await device.perform(["open", app.id])
        try await device.waitUntil("the app submitted its request", within: 10) {
            try await device.log(app.id).contains { $0.kind == "schedule" }
        }
        try await device.perform(["home"])
        try await device.waitFor(app.id, "suspended")
        let before = try await device.mark(app.id)
        try await device.perform(["run-task", app.id, refreshID])
        try await device.waitUntil("the task completed", within: 10) {
            try await device.log(app.id, after: before).contains { $0.kind == "taskDone" }
        }
        try await device.waitFor(app.id, "suspended")
        let done = try await device.log(app.id).last { $0.kind == "taskDone" }?.message ?? ""
        return S7(
            callbacks: try await device.callbacks(app.id, after: before), completedWithNewData: done.contains("newData"),
            finally: try await device.state(of: app.id))
    }

    // MARK: S8

    /// What S8 observed.
    public struct S8: Sendable, Hashable {
        public var waitsForPower: Bool
        public var explainSaysPower: Bool
        public var endedByItsRuntime: Bool
        public var finally: String
    }

    /// S8 (SCH-2, SCH-6, SCH-8): processing that needs external power waits on battery, and explain names power;
    /// charging and idle, it runs until its runtime is over, its expiration handler checkpoints, and the run ends as
    /// failed (cut off); the app is suspended.
    public static let s8Expected = S8(waitsForPower: true, explainSaysPower: true, endedByItsRuntime: true, finally: "suspended")

    public static func s8(on device: some ScenarioDevice) async throws -> S8 {
        let app = processing
        try await device.install(app)
        try await device.perform(["device", "--charging", "off", "--idle", "off"])
        try await device.perform(["open", app.id])
        try await device.waitUntil("the app submitted", within: 10) { try await device.log(app.id).contains { $0.kind == "schedule" } }
        try await device.perform(["home"])
        try await device.waitFor(app.id, "suspended")
        let waiting = try await device.explain(app.id, processingID)
        try await device.perform(["device", "--charging", "on", "--idle", "on"])
        try await device.waitUntil("the run ended", within: 15) { try await device.log(app.id).contains { $0.kind == "taskDone" } }
        try await device.waitFor(app.id, "suspended")
        let done = try await device.log(app.id).last { $0.kind == "taskDone" }?.message ?? ""
        return S8(
            waitsForPower: waiting.controllers.contains("power"), explainSaysPower: waiting.summary.contains("power"),
            endedByItsRuntime: done.contains("failed"), finally: try await device.state(of: app.id))
    }

    // MARK: S9

    /// What S9 observed.
    public struct S9: Sendable, Hashable {
        public var controllers: [String]
        public var summarySaysWhy: Bool
        public var ranMeanwhile: Bool
    }

    /// S9 (SET-2, SCH-6): a refresh that needs the network, for an app whose background data the user turned off, on
    /// a metered network: it waits and explain says "background data restricted on a metered network"; unmetered,
    /// it runs (the scenario fails naming that wait when it does not).
    public static let s9Expected = S9(controllers: ["data"], summarySaysWhy: true, ranMeanwhile: false)

    public static func s9(on device: some ScenarioDevice) async throws -> S9 {
        let app = refresh(["--earliest-seconds", "0"])
        try await device.install(app)
        try await device.perform(["settings", "--app", app.id, "background-data=off"])
        try await device.perform(["device", "--network", "metered"])
        try await device.perform(["open", app.id])
        try await device.waitUntil("the app submitted", within: 10) { try await device.log(app.id).contains { $0.kind == "schedule" } }
        try await device.perform(["home"])
        try await device.waitFor(app.id, "suspended")
        try await device.wait(1)
        let waiting = try await device.explain(app.id, refreshID)
        let ranMeanwhile = try await device.log(app.id).contains { $0.kind == "taskRun" }
        try await device.perform(["device", "--network", "unmetered"])
        try await device.waitUntil("the refresh ran", within: 15) { try await device.log(app.id).contains { $0.kind == "taskDone" } }
        return S9(
            controllers: waiting.controllers,
            summarySaysWhy: waiting.summary.contains("background data restricted on a metered network"),
            ranMeanwhile: ranMeanwhile)
    }
}

/// One shared scenario, for a parameterized test: its name and a run that gives what it observed and what it should
/// have, each as text (equal when the observation is).
public struct Scenario: Sendable, CustomStringConvertible {
    /// `S4 (LC-2)` …, what the test reports.
    public var description: String
    /// Runs the scenario on a device.
    public var run: @Sendable (any ScenarioDevice) async throws -> (observed: String, expected: String)

    init<Observed: Equatable & Sendable & SendableMetatype>(
        _ name: String, _ script: @escaping @Sendable (any ScenarioDevice) async throws -> Observed, expected: Observed
    ) {
        description = name
        run = { device in (String(describing: try await script(device)), String(describing: expected)) }
    }
}

extension SharedScenarios {
    /// Every shared scenario, in the specification's order.
    public static let all: [Scenario] = [
        Scenario("S3 (BT-5): back while the task is open", { try await s3(on: $0) }, expected: s3Expected),
        Scenario("S4 (LC-2): an interruption dismissed, then one accepted", { try await s4(on: $0) }, expected: s4Expected),
        Scenario("S5 (LC-7): exits on suspend, opens as a fresh launch", { try await s5(on: $0) }, expected: s5Expected),
        Scenario("S6 (SCH-4): the simulated fetch", { try await s6(on: $0) }, expected: s6Expected),
        Scenario("S6 (SCH-4): a fetch interval still never", { try await s6Never(on: $0) }, expected: s6NeverExpected),
        Scenario("S7 (SCH-1..3, SCH-9): run-task runs the refresh", { try await s7(on: $0) }, expected: s7Expected),
        Scenario("S8 (SCH-2, SCH-6, SCH-8): processing that needs power", { try await s8(on: $0) }, expected: s8Expected),
        Scenario("S9 (SET-2, SCH-6): background data restricted", { try await s9(on: $0) }, expected: s9Expected),
    ]
}
