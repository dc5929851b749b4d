import Foundation

/// One line of the system's event log, as `offstage log --json` gives it.
public struct ScenarioLogLine: Sendable, Hashable {
    /// When, in seconds since 1970 on the device's clock.
    public var at: Double
    /// `callback`, `launch`, `taskRun`, `taskDone`, `exit`, `kill` …
    public var kind: String
    /// The line.
    public var message: String

    public init(at: Double, kind: String, message: String) {
        self.at = at
        self.kind = kind
        self.message = message
    }
}

/// What `offstage explain APP IDENTIFIER` says of one request.
public struct ScenarioExplanation: Sendable, Hashable {
    /// The controller of each hold (`time-window`, `power`, `data` …).
    public var controllers: [String]
    /// The sentence for people.
    public var summary: String

    public init(controllers: [String], summary: String) {
        self.controllers = controllers
        self.summary = summary
    }
}

/// A device a scenario runs on: the test kit on virtual time, or the real daemon with the example apps' real
/// processes. The scenario says what the user and the world do in the `offstage` CLI's own words, and reads what
/// happened from the system's event log and state, so one script, with one set of expectations, runs on both (KIT-4).
///
/// Both run with ``SharedScenarios/settings``: the defaults' timings shortened by five, with their ratios.
public protocol ScenarioDevice: AnyObject, Sendable {
    /// Installs `app`: its example's `Info.plist` with the scenario's keys replaced, running its real delegate.
    func install(_ app: ScenarioApp) async throws
    /// What the user or the world does, as `offstage` would be told: `["open", id]`, `["home"]`, `["interrupt"]`,
    /// `["interrupt", "--dismiss"]`, `["interrupt", "--accept"]`, `["fetch", id]`, `["run-task", id, identifier]`,
    /// `["device", "--charging", "on", "--idle", "on"]`, `["device", "--network", "metered"]`,
    /// `["settings", "--app", id, "background-data=off"]`.
    func perform(_ words: [String]) async throws
    /// Lets `seconds` of the device's time pass.
    func wait(_ seconds: Double) async throws
    /// Lets time pass until `condition` holds; fails naming `what` after `seconds`.
    func waitUntil(_ what: String, within seconds: Double, _ condition: @Sendable () async throws -> Bool) async throws
    /// The app's lines of the event log, oldest first.
    func log(_ app: String) async throws -> [ScenarioLogLine]
    /// The app's state: `notRunning`, `inactive`, `active`, `background` or `suspended`.
    func state(of app: String) async throws -> String
    /// What explain says of the app's request `identifier` (`fetch` for the legacy fetch).
    func explain(_ app: String, _ identifier: String) async throws -> ScenarioExplanation
}

extension ScenarioDevice {
    /// Waits until `app` is in `state`.
    public func waitFor(_ app: String, _ state: String, within seconds: Double = 10) async throws {
        try await waitUntil("\(app) is \(state)", within: seconds) { try await self.state(of: app) == state }
    }

    /// A mark in the app's log: what comes after it is what happened from now on. (A count of lines, not a time: on
    /// virtual time several steps happen at one instant.)
    public func mark(_ app: String) async throws -> Int { try await log(app).count }

    /// The app's log lines after `mark`.
    public func log(_ app: String, after mark: Int) async throws -> [ScenarioLogLine] {
        Array(try await log(app).dropFirst(mark))
    }

    /// The callbacks `app` received after `mark`, by their wire names, in order.
    public func callbacks(_ app: String, after mark: Int) async throws -> [String] {
        try await log(app, after: mark).filter { $0.kind == "callback" }.map(\.message)
    }
}

/// An example app as a scenario installs it.
public struct ScenarioApp: Sendable, Hashable {
    /// The example (`Examples/<name>`).
    public var example: String
    /// Its bundle identifier.
    public var id: String
    /// `UIBackgroundModes`, replacing the example's when given.
    public var backgroundModes: [String]?
    /// `BGTaskSchedulerPermittedIdentifiers`, replacing the example's when given.
    public var taskIdentifiers: [String]?
    /// `UIApplicationExitsOnSuspend`, when given.
    public var exitsOnSuspend: Bool?
    /// The arguments its process gets (`OffstageLinux` `Arguments`).
    public var arguments: [String]

    public init(
        example: String, id: String, backgroundModes: [String]? = nil, taskIdentifiers: [String]? = nil,
        exitsOnSuspend: Bool? = nil, arguments: [String] = []
    ) {
        self.example = example
        self.id = id
        self.backgroundModes = backgroundModes
        self.taskIdentifiers = taskIdentifiers
        self.exitsOnSuspend = exitsOnSuspend
        self.arguments = arguments
    }
}

/// Why a scenario could not go on: a wait that never ended, a step a device does not know.
public struct ScenarioError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
