import ArgumentParser
import Foundation
import OffstageCore
import OffstageProtocol

struct Install: DaemonCommand {
    static let configuration = CommandConfiguration(
        abstract: "Install an app bundle, or upgrade the installed app with the same id.",
        discussion: "BUNDLE_DIR holds Info.plist (or Info.json) and the executable it names. The daemon copies it.")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: ArgumentHelp("The bundle folder.", valueName: "BUNDLE_DIR")) var bundle: String

    func run(with client: ControlClient) throws {
        let path = URL(fileURLWithPath: bundle).standardizedFileURL.path
        let reply = try client.call(
            ControlInterface.Method.install, ControlInterface.InstallParameters(path: path),
            as: ControlInterface.InstallReply.self)
        try client.output(reply, text: "\(reply.outcome) \(reply.id)")
    }
}

struct Uninstall: DaemonCommand {
    static let configuration = CommandConfiguration(
        abstract: "Uninstall an app and remove everything the daemon kept for it.",
        discussion: "Returns once the app's process has ended (at most the will-terminate limit and the SIGTERM grace).")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: ArgumentHelp("The app's id.", valueName: "APP_ID")) var app: String

    func run(with client: ControlClient) throws {
        _ = try client.call(ControlInterface.Method.uninstall, ControlInterface.AppParameters(id: app))
        try client.output(["uninstalled": app], text: "uninstalled \(app)")
    }
}

struct Apps: DaemonCommand {
    static let configuration = CommandConfiguration(
        abstract: "List installed apps with their state, pid, memory, band, background tasks and time remaining.",
        discussion: """
            BAND is where a running app stands when memory is short (SPEC MEM-1): foreground, background-user (audio, \
            location, continued processing), background-work (a task, a run, a handler) or suspended, and its place \
            in the order apps are ended, #1 first: suspended apps least recently used first, then background work, \
            then background for the user, then apps the user keeps in memory ("kept"), the app in front last.
            """)
    @OptionGroup var globals: GlobalOptions

    func run(with client: ControlClient) throws {
        let reply = try client.call(ControlInterface.Method.listApps, NoParameters(), as: ControlInterface.AppsReply.self)
        try client.output(reply.apps, text: Table.apps(reply.apps))
    }
}

struct Open: DaemonCommand {
    static let configuration = CommandConfiguration(
        abstract: "Open an app, as the user tapping its icon.",
        discussion: """
            Returns as soon as the daemon has begun bringing the app to the front. With --wait, returns once the app \
            is active (its did-become-active handler has returned), so the next command finds it in front.
            """)
    @OptionGroup var globals: GlobalOptions
    @Argument(help: ArgumentHelp("The app's id.", valueName: "APP_ID")) var app: String
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Wait up to this many seconds for the app to be active.", valueName: "SECONDS"))
    var wait: Double?

    func validate() throws {
        if let wait, !(0...3600).contains(wait) { throw ValidationError("--wait must be 0 to 3600 seconds; got \(wait)") }
    }

    func run(with client: ControlClient) throws {
        var reply = try client.call(
            ControlInterface.Method.open, ControlInterface.AppParameters(id: app), as: ControlInterface.OpenReply.self)
        if let wait { reply.app = try waitUntilActive(client, seconds: wait, opened: reply.app) }
        let text: String
        switch (reply.app.state, reply.app.pid) {
        case ("active", let pid?): text = "opened \(app) (pid \(pid)): active"
        case ("inactive", let pid?): text = "opened \(app) (pid \(pid)): coming to the front"
        case ("inactive", nil): text = "opened \(app): launching"
        default: text = "opened \(app): it opens once its previous process has exited"
        }
        try client.output(reply.app, text: text)
    }

    /// Polls the app until it is active; fails naming its state (and how it ended, if it did) at the deadline.
    private func waitUntilActive(
        _ client: ControlClient, seconds: Double, opened: ControlInterface.App
    ) throws -> ControlInterface.App {
        let deadline = Date().addingTimeInterval(seconds)
        var app = opened
        while app.state != "active" {
            guard Date() < deadline else {
                let ended = app.lastTermination.map { "; it last ended: \($0)" } ?? ""
                throw NotActive(
                    description: "\(QuotedText.quote(self.app)) is \(app.state), not active after \(seconds) s\(ended); "
                        + "see `offstage log --app \(self.app)`")
            }
            usleep(10_000)
            let apps = try client.call(ControlInterface.Method.listApps, NoParameters(), as: ControlInterface.AppsReply.self)
            guard let current = apps.apps.first(where: { $0.id == self.app }) else {
                throw NotActive(description: "\(QuotedText.quote(self.app)) was uninstalled while it opened")
            }
            app = current
        }
        return app
    }

    struct NotActive: Error, CustomStringConvertible {
        var description: String
    }
}

struct Home: DaemonCommand {
    static let configuration = CommandConfiguration(abstract: "Go to the home screen: the app in front leaves.")
    @OptionGroup var globals: GlobalOptions

    func run(with client: ControlClient) throws {
        _ = try client.call(ControlInterface.Method.home, NoParameters())
        try client.output(EmptyReply(), text: "home")
    }
}

struct Lock: DaemonCommand {
    static let configuration = CommandConfiguration(abstract: "Lock the screen: the app in front leaves, as with home.")
    @OptionGroup var globals: GlobalOptions

    func run(with client: ControlClient) throws {
        _ = try client.call(ControlInterface.Method.lock, NoParameters())
        try client.output(EmptyReply(), text: "locked")
    }
}

struct Unlock: DaemonCommand {
    static let configuration = CommandConfiguration(
        abstract: "Unlock the screen and return to the app that was in front when it was locked.")
    @OptionGroup var globals: GlobalOptions

    func run(with client: ControlClient) throws {
        _ = try client.call(ControlInterface.Method.unlock, NoParameters())
        try client.output(EmptyReply(), text: "unlocked")
    }
}

struct Interrupt: DaemonCommand {
    static let configuration = CommandConfiguration(
        abstract: "An incoming call or alert: the app in front resigns active.",
        discussion: """
            Without a flag the interruption begins. --dismiss ends it and the app becomes active again; --accept \
            ends it and the app goes to the background. With a flag and no interruption in progress, both steps \
            happen at once.
            """)
    @OptionGroup var globals: GlobalOptions
    @Flag(help: "The user accepts the call: the app goes to the background.") var accept = false
    @Flag(help: "The user dismisses it: the app becomes active again.") var dismiss = false

    func validate() throws {
        if accept && dismiss { throw ValidationError("give --accept or --dismiss, not both") }
    }

    func run(with client: ControlClient) throws {
        let resolution = accept ? "accept" : dismiss ? "dismiss" : nil
        _ = try client.call(ControlInterface.Method.interrupt, ControlInterface.InterruptParameters(resolution: resolution))
        try client.output(["interruption": resolution ?? "began"], text: "interruption \(resolution.map { $0 + "ed" } ?? "began")")
    }
}

struct ForceQuit: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "force-quit",
        abstract: "Force-quit an app: killed at once, and not launched in the background until opened again.")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: ArgumentHelp("The app's id.", valueName: "APP_ID")) var app: String

    func run(with client: ControlClient) throws {
        _ = try client.call(ControlInterface.Method.forceQuit, ControlInterface.AppParameters(id: app))
        try client.output(["forceQuit": app], text: "force-quit \(app)")
    }
}

struct MemoryWarningVerb: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "memory-warning",
        abstract: "Simulate a memory warning: the app's applicationDidReceiveMemoryWarning runs (SPEC MEM-1).",
        discussion: """
            Without APP_ID every running app is warned, as the device does when memory gets short; nothing is ended \
            (to make the device end apps, give it memory pressure: `offstage device --memory-pressure critical`). \
            A suspended app is refused: it would not be warned on a phone.
            """)
    @OptionGroup var globals: GlobalOptions
    @Argument(help: ArgumentHelp("The running app to warn; every running app if left out.", valueName: "APP_ID"))
    var app: String?

    func run(with client: ControlClient) throws {
        let reply = try client.call(
            ControlInterface.Method.memoryWarning, ControlInterface.MemoryWarningParameters(app: app),
            as: ControlInterface.MemoryWarningReply.self)
        try client.output(reply, text: "memory warning sent to \(app ?? "\(reply.warned) running app(s)")")
    }
}

struct Settings: DaemonCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show or change device settings, or one app's settings with --app.",
        discussion: """
            Without assignments, prints the settings. With NAME=on|off assignments, changes them (all or nothing). \
            Device: multitasking. Per app: background-refresh, background-data, background-activity, \
            unrestricted-data, kept-in-memory, notifications.
            """)
    @OptionGroup var globals: GlobalOptions
    @Option(help: ArgumentHelp("Show or change this app's settings.", valueName: "APP_ID")) var app: String?
    @Argument(help: ArgumentHelp("Settings to change.", valueName: "NAME=on|off")) var assignments: [String] = []

    func validate() throws {
        for assignment in assignments where assignment.split(separator: "=", maxSplits: 1).count != 2 || assignment.hasPrefix("=") {
            throw ValidationError("\(QuotedText.quote(assignment)) is not NAME=VALUE; write for example multitasking=off")
        }
    }

    func run(with client: ControlClient) throws {
        let reply: ControlInterface.SettingsReply
        if assignments.isEmpty {
            reply = try client.call(
                ControlInterface.Method.getSettings, ControlInterface.GetSettingsParameters(app: app),
                as: ControlInterface.SettingsReply.self)
        } else {
            var changes: [String: String] = [:]
            for assignment in assignments {
                let parts = assignment.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2, !parts[0].isEmpty else {
                    throw ValidationError("\(QuotedText.quote(assignment)) is not NAME=VALUE; write for example multitasking=off")
                }
                changes[parts[0]] = parts[1]
            }
            reply = try client.call(
                ControlInterface.Method.setSettings, ControlInterface.SetSettingsParameters(app: app, changes: changes),
                as: ControlInterface.SettingsReply.self)
        }
        try client.output(reply.settings, text: Table.settings(reply.settings))
    }
}

struct Log: DaemonCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the daemon's event log; with --follow, keep printing new entries.")
    @OptionGroup var globals: GlobalOptions
    @Flag(help: "Keep printing entries as they happen.") var follow = false
    @Option(help: ArgumentHelp("Only this app's entries.", valueName: "APP_ID")) var app: String?
    // Unconditional: `--limit -1` is a wrong value to report as such, not a missing one.
    @Option(parsing: .unconditional, help: ArgumentHelp("Only the last N entries.", valueName: "N")) var limit: Int?

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more; got \(limit)") }
    }

    func run(with client: ControlClient) throws {
        let parameters = ControlInterface.LogParameters(app: app, limit: limit, follow: follow)
        if follow {
            try client.stream(ControlInterface.Method.log, parameters, as: ControlInterface.LogReply.self) { reply in
                for entry in reply.entries {
                    print(client.json ? try ControlClient.encode(entry, pretty: false) : Table.logLine(entry))
                }
                fflush(nil)
            }
        } else {
            let reply = try client.call(ControlInterface.Method.log, parameters, as: ControlInterface.LogReply.self)
            try client.output(reply.entries, text: reply.entries.map(Table.logLine).joined(separator: "\n"))
        }
    }
}

struct Status: DaemonCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the daemon: version, freezer in use and why, socket, state folder, device state.",
        discussion: "With --wait, a daemon that is starting is waited for: `offstaged & offstage status --wait 5`.")
    @OptionGroup var globals: GlobalOptions
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Wait up to this many seconds for the daemon to answer.", valueName: "SECONDS"))
    var wait: Double?

    func validate() throws {
        if let wait, !(0...3600).contains(wait) { throw ValidationError("--wait must be 0 to 3600 seconds; got \(wait)") }
    }

    func run(with client: ControlClient) throws {
        let deadline = Date().addingTimeInterval(wait ?? 0)
        var answer: ControlInterface.StatusReply?
        while answer == nil {
            do {
                answer = try client.call(ControlInterface.Method.status, NoParameters(), as: ControlInterface.StatusReply.self)
            } catch let error as VarlinkConnectionError where Date() < deadline {
                _ = error  // not listening yet: try again shortly
                usleep(50_000)
            }
        }
        let reply = answer!
        try client.output(
            reply,
            text: """
                offstaged \(reply.version), pid \(reply.pid)
                freezer:       \(reply.freezer) (\(reply.freezerReason))
                data controls: \(reply.dataControls) (\(reply.dataControlsDetail))
                network kind:  from \(reply.networkSource)
                memory limits: \(reply.memoryLimits ?? "unknown") (\(reply.memoryLimitsDetail ?? "a daemon from before memory limits"))
                memory:        \(reply.memoryPressure ?? "unknown (a daemon from before memory pressure was shown)")
                socket:        \(reply.socket)
                state folder:  \(reply.stateDirectory)
                apps:          \(reply.apps) installed; in front: \(reply.foregroundApp ?? "none")\
                \(reply.locked ? "; locked" : "")\(reply.interruption ? "; interruption in progress" : "")
                """)
    }
}
