@testable import ExitsOnSuspend
@testable import FiniteTask
import Foundation
@testable import NewsApp
import Offstage
import OffstageTesting
@testable import ProcessingApp
@testable import RefreshApp
import SharedScenarios

/// The test kit as a scenario's device: the example apps' real delegates on a ``TestDevice`` running with the
/// scenarios' settings, driven by the CLI's words and read from the same event log `offstage log` reads.
@MainActor
final class KitScenarioDevice: ScenarioDevice {
    let device: TestDevice
    private var apps: [String: TestApp] = [:]

    static let examples = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Examples")

    init() async throws {
        let settings = try JSONSerialization.data(withJSONObject: SharedScenarios.settings)
        device = try await TestDevice(configuration: String(decoding: settings, as: UTF8.self))
    }

    func install(_ app: ScenarioApp) async throws {
        var keys: [String: Any] = ["CFBundleIdentifier": app.id]
        if let modes = app.backgroundModes { keys["UIBackgroundModes"] = modes }
        if let identifiers = app.taskIdentifiers { keys["BGTaskSchedulerPermittedIdentifiers"] = identifiers }
        if let exits = app.exitsOnSuspend { keys["UIApplicationExitsOnSuspend"] = exits }
        if !app.arguments.isEmpty { keys["OffstageLinux"] = ["Arguments": app.arguments] }
        // A process's arguments start with its executable, as CommandLine.arguments does.
        let arguments = [app.example] + app.arguments
        let make: @MainActor () -> any ApplicationDelegate
        switch app.example {
        case "FiniteTask": make = { FiniteTaskDelegate(arguments: arguments) }
        case "ExitsOnSuspend": make = { ExitsOnSuspendDelegate() }
        case "NewsApp": make = { NewsAppDelegate(arguments: arguments) }
        case "RefreshApp": make = { RefreshAppDelegate(arguments: arguments) }
        case "ProcessingApp": make = { ProcessingAppDelegate(arguments: arguments) }
        default: throw ScenarioError("the kit's scenario device has no delegate for example \(app.example)")
        }
        let plist = Self.examples.appendingPathComponent(app.example).appendingPathComponent("Info.plist")
        apps[app.id] = try device.install(infoPlist: plist, replacing: keys) { _ in make() }
    }

    func perform(_ words: [String]) async throws {
        switch words {
        case ["home"]: try await device.home()
        case ["interrupt"]: try await device.interrupt()
        case ["interrupt", "--dismiss"], ["interrupt", "--accept"]:
            // As the CLI does: with no interruption in progress, one begins and ends.
            do {
                try await device.interrupt()
            } catch TestKitError.refused(let message, _) where message.contains("already in progress") {}
            try await device.endInterruption(accepted: words[1] == "--accept")
        default:
            guard let verb = words.first else { throw ScenarioError("no words") }
            switch verb {
            case "open": try await device.open(try app(words, 1))
            case "fetch": try await app(words, 1).fetchNow()
            case "run-task" where words.count == 3: try await app(words, 1).runTaskNow(words[2])
            case "device": try await deviceFlags(Array(words.dropFirst()))
            case "settings" where words.count == 4 && words[1] == "--app":
                let app = try app(words, 2)
                switch words[3] {
                case "background-data=off": try await app.setSettings(backgroundData: false)
                case "background-data=on": try await app.setSettings(backgroundData: true)
                default: throw ScenarioError("setting \(words[3]) is not one the kit's scenario device knows")
                }
            default: throw ScenarioError("\(words) is not a step the kit's scenario device knows")
            }
        }
    }

    /// `offstage device` flags: `--charging`, `--idle` (on, off) and `--network` (none, unmetered, metered).
    private func deviceFlags(_ flags: [String]) async throws {
        guard flags.count.isMultiple(of: 2) else { throw ScenarioError("device flags \(flags) are not pairs") }
        for index in stride(from: 0, to: flags.count, by: 2) {
            let (flag, value) = (flags[index], flags[index + 1])
            switch flag {
            case "--charging": try await device.setConditions(charging: value == "on")
            case "--idle": try await device.setIdle(value == "on")
            case "--network":
                let network: TestDevice.Network =
                    switch value {
                    case "none": .none
                    case "metered": .metered
                    default: .unmetered
                    }
                try await device.setConditions(network: network)
            default: throw ScenarioError("device flag \(flag) is not one the kit's scenario device knows")
            }
        }
    }

    private func app(_ words: [String], _ index: Int) throws -> TestApp {
        guard words.indices.contains(index), let app = apps[words[index]] else {
            throw ScenarioError("\(words): no installed app there")
        }
        return app
    }

    func wait(_ seconds: Double) async throws { try await device.advance(by: .seconds(seconds)) }

    func waitUntil(_ what: String, within seconds: Double, _ condition: @Sendable () async throws -> Bool) async throws {
        let end = device.now.addingTimeInterval(seconds)
        while try await !condition() {
            guard device.now < end else { throw ScenarioError("\(what): not within \(seconds) s of the device's time") }
            // The app's own work off its callbacks (a fetch's download on another queue) runs on real time, as on the
            // daemon: each 50 ms of the device's time gives it 2 ms of the machine's.
            try await Task.sleep(for: .milliseconds(2))
            try await device.advance(by: .milliseconds(50))
        }
    }

    func log(_ app: String) async throws -> [ScenarioLogLine] {
        (apps[app]?.events ?? []).map { ScenarioLogLine(at: $0.at.timeIntervalSince1970, kind: $0.kind, message: $0.message) }
    }

    func state(of app: String) async throws -> String { apps[app]?.state.rawValue ?? "notRunning" }

    func explain(_ app: String, _ identifier: String) async throws -> ScenarioExplanation {
        guard let explained = try apps[app]?.explain(identifier).first else {
            throw ScenarioError("explain \(app) \(identifier): nothing to explain")
        }
        return ScenarioExplanation(controllers: explained.controllers, summary: explained.summary)
    }
}
