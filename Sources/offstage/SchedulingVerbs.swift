import ArgumentParser
import Foundation
import OffstageCore
import OffstageProtocol

/// `on`, `off`, or `auto` (back to what the machine reports).
enum Switch: String, ExpressibleByArgument, CaseIterable {
    case on, off, auto
}

/// A network kind, or `auto`.
enum NetworkChoice: String, ExpressibleByArgument, CaseIterable {
    case none, unmetered, metered, auto
}

/// A memory pressure level, or `auto`.
enum MemoryPressureChoice: String, ExpressibleByArgument, CaseIterable {
    case normal, warning, critical, auto
}

/// A thermal state, or `auto`.
enum ThermalChoice: String, ExpressibleByArgument, CaseIterable {
    case nominal, fair, serious, critical, auto
}

struct Device: DaemonCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show or set the device's power, network, idle state, memory pressure and temperature.",
        discussion: """
            Without options, prints the conditions, what the machine reports, and what was set by hand. Each option \
            sets a condition by hand, overriding the machine, until set to auto again. For example: \
            `offstage device --charging off --network metered`. Memory pressure and the thermal state end \
            continued-processing work when they reach the configured levels (critical, serious): \
            `offstage device --memory-pressure critical`, then `--memory-pressure auto`. The time zone follows the \
            machine's until set by hand, and again once the machine's changes: `offstage device --time-zone Europe/Berlin`.
            """)
    @OptionGroup var globals: GlobalOptions
    // Unconditional: `--battery -5` is a wrong value to report as such, not a missing one.
    @Option(parsing: .unconditional, help: ArgumentHelp("Battery charge in percent (0-100), or auto.", valueName: "N|auto"))
    var battery: String?
    @Option(help: "External power connected: on, off or auto.") var charging: Switch?
    @Option(help: "Network kind: none, unmetered, metered or auto.") var network: NetworkChoice?
    @Option(name: .customLong("low-power"), help: "Low power mode: on or off.") var lowPower: Switch?
    @Option(help: "Device idle (not in use): on, off or auto (idle once locked long enough).") var idle: Switch?
    @Option(
        name: .customLong("memory-pressure"),
        help: ArgumentHelp(
            "Memory pressure set by hand, or auto to read it from the machine (PSI, else /proc/meminfo).",
            valueName: "normal|warning|critical|auto"))
    var memoryPressure: MemoryPressureChoice?
    @Option(
        help: ArgumentHelp(
            "Thermal state set by hand, or auto to read it from the machine (thermal zones against their trip points).",
            valueName: "nominal|fair|serious|critical|auto"))
    var thermal: ThermalChoice?
    @Option(
        name: .customLong("time-zone"),
        help: ArgumentHelp(
            "The device's time zone, an IANA name such as Europe/Berlin: notifications set for a time of day follow it.",
            valueName: "NAME"))
    var timeZone: String?

    func validate() throws {
        if let battery, battery != "auto", Int(battery).map({ (0...100).contains($0) }) != true {
            throw ValidationError("--battery must be a percentage from 0 to 100, or auto; got \(QuotedText.quote(battery))")
        }
        if lowPower == .auto { throw ValidationError("--low-power is a setting: give on or off") }
        if let timeZone, timeZone.isEmpty || timeZone.contains(where: \.isWhitespace) {
            throw ValidationError(
                "--time-zone must be an IANA time zone name such as Europe/Berlin; got \(QuotedText.quote(timeZone))")
        }
    }

    func run(with client: ControlClient) throws {
        let changes = [
            battery != nil, charging != nil, network != nil, lowPower != nil, idle != nil, timeZone != nil,
            memoryPressure != nil, thermal != nil,
        ].contains(true)
        let reply: ControlInterface.DeviceReply
        if changes {
            var clear: [String] = []
            var parameters = ControlInterface.SetDeviceParameters()
            if battery == "auto" { clear.append("batteryLevel") } else { parameters.batteryLevel = battery.flatMap(Int.init) }
            switch charging {
            case .auto: clear.append("charging")
            case .on, .off: parameters.charging = charging == .on
            case nil: break
            }
            switch network {
            case .auto: clear.append("network")
            case .some(let kind): parameters.network = kind.rawValue
            case nil: break
            }
            switch idle {
            case .auto: clear.append("idle")
            case .on, .off: parameters.idle = idle == .on
            case nil: break
            }
            switch memoryPressure {
            case .auto: clear.append("memoryPressure")
            case .some(let level): parameters.memoryPressure = level.rawValue
            case nil: break
            }
            switch thermal {
            case .auto: clear.append("thermalState")
            case .some(let state): parameters.thermalState = state.rawValue
            case nil: break
            }
            if let lowPower { parameters.lowPowerMode = lowPower == .on }
            parameters.timeZone = timeZone
            parameters.clear = clear
            reply = try client.call(ControlInterface.Method.setDevice, parameters, as: ControlInterface.DeviceReply.self)
        } else {
            reply = try client.call(ControlInterface.Method.getDevice, NoParameters(), as: ControlInterface.DeviceReply.self)
        }
        try client.output(reply, text: Table.device(reply))
    }
}

struct Tasks: DaemonCommand {
    static let configuration = CommandConfiguration(
        abstract: "List pending and running background work, with its planned time and what holds it back.")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: ArgumentHelp("Only this app's.", valueName: "APP_ID")) var app: String?

    func run(with client: ControlClient) throws {
        let reply = try client.call(
            ControlInterface.Method.tasks, ControlInterface.TasksParameters(app: app), as: ControlInterface.TasksReply.self)
        try client.output(reply.tasks, text: Table.tasks(reply.tasks))
    }
}

struct Explain: DaemonCommand {
    static let configuration = CommandConfiguration(
        abstract: "Explain when an app's background work and transfers run and, if not now, which condition or budget holds them back.",
        discussion: """
            With --history, looks back instead (a day by default, or from --since): when each request ran, for how \
            long and how each run ended (completed, expired, cancelled, cut-off, app-ended, daemon-stopped), and how \
            long each reason held it back: no network, external power, the scheduler's planned time, the app in the \
            foreground … Each reason counts on its own, so reasons that held a request at once add up to more than \
            the time it waited. For example: `offstage explain com.example.weather --history --since 6h`.
            """)
    @OptionGroup var globals: GlobalOptions
    @Argument(help: ArgumentHelp("The app's id.", valueName: "APP_ID")) var app: String
    @Argument(help: ArgumentHelp("One task identifier (or fetch).", valueName: "IDENTIFIER")) var identifier: String?
    @Flag(help: "Look back: the runs and how long each condition held the work back (SPEC SCH-8).") var history = false
    // Unconditional: a negative value is a wrong value to report as such, not a missing one.
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "With --history, where the window starts: a duration back from now (90s, 30m, 2h, 1d12h) or a date "
                + "(2025-01-31, 2025-01-31T08:00, local time). Default: a day ago.",
            valueName: "DURATION|DATE"))
    var since: String?

    func validate() throws {
        guard let since else { return }
        guard history else { throw ValidationError("--since needs --history; add --history to look back") }
        _ = try HistorySince.validated(since, option: "--since")
    }

    func run(with client: ControlClient) throws {
        if history {
            let start = since.flatMap { HistorySince.parse($0, now: Date()) }
            let reply = try client.call(
                ControlInterface.Method.explainHistory,
                ControlInterface.ExplainHistoryParameters(app: app, identifier: identifier, since: start),
                as: ControlInterface.ExplainHistoryReply.self)
            try client.output(reply, text: Table.history(reply))
            return
        }
        let reply = try client.call(
            ControlInterface.Method.explain, ControlInterface.TaskParameters(app: app, identifier: identifier),
            as: ControlInterface.ExplainReply.self)
        try client.output(reply, text: Table.explain(reply, app: app))
    }
}

struct RunTask: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "run-task",
        abstract: "Run a pending task now, whatever the conditions: the same effects as a real decision, marked forced.")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: ArgumentHelp("The app's id.", valueName: "APP_ID")) var app: String
    @Argument(help: ArgumentHelp("The task identifier (fetch for the legacy fetch).", valueName: "IDENTIFIER"))
    var identifier: String

    func run(with client: ControlClient) throws {
        _ = try client.call(ControlInterface.Method.runTask, ControlInterface.TaskParameters(app: app, identifier: identifier))
        try client.output(["app": app, "identifier": identifier, "started": "forced"], text: "started \(identifier) in \(app) (forced)")
    }
}

struct ExpireTask: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "expire-task", abstract: "Call a running task's expiration handler now.")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: ArgumentHelp("The app's id.", valueName: "APP_ID")) var app: String
    @Argument(help: ArgumentHelp("The running task's identifier.", valueName: "IDENTIFIER")) var identifier: String

    func run(with client: ControlClient) throws {
        _ = try client.call(ControlInterface.Method.expireTask, ControlInterface.TaskParameters(app: app, identifier: identifier))
        try client.output(["app": app, "identifier": identifier, "expired": "forced"], text: "expiring \(identifier) in \(app)")
    }
}

struct CancelTask: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel-task",
        abstract: "Cancel work the user started that continues in the background (a continued-processing task), as the user.",
        discussion: "A running task has its expiration handler called and must then complete; a queued one is dropped.")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: ArgumentHelp("The app's id.", valueName: "APP_ID")) var app: String
    @Argument(help: ArgumentHelp("The continued-processing task's identifier.", valueName: "IDENTIFIER")) var identifier: String

    func run(with client: ControlClient) throws {
        let reply = try client.call(
            ControlInterface.Method.cancelTask, ControlInterface.TaskParameters(app: app, identifier: identifier),
            as: ControlInterface.CancelTaskReply.self)
        try client.output(["app": app, "identifier": identifier, "message": reply.message], text: reply.message)
    }
}

struct Fetch: DaemonCommand {
    static let configuration = CommandConfiguration(
        abstract: "Simulate a background fetch: launch or resume the app and call its perform-fetch handler (forced).")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: ArgumentHelp("The app's id.", valueName: "APP_ID")) var app: String

    func run(with client: ControlClient) throws {
        _ = try client.call(ControlInterface.Method.fetch, ControlInterface.AppParameters(id: app))
        try client.output(["app": app, "fetch": "forced"], text: "fetching \(app) (forced)")
    }
}
