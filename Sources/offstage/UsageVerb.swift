import ArgumentParser
import Foundation
import OffstageCore
import OffstageProtocol

struct UsageCommand: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "usage",
        abstract: "Show what each app used: data, CPU, background runtime, wake-ups and memory, beside its switches.",
        discussion: """
            Without an app, one line per installed app, the heaviest first (--sort), with totals: every byte it \
            used (its own sockets and the daemon's transfers for it), the bytes on metered networks and in the \
            background, CPU in total and in the background, its time running in the background, its background \
            wake-ups, its memory now and at its peak, and its switches that differ from the defaults (background \
            data off, unrestricted data, background activity off, …), so you can see which app to restrict: \
            `offstage settings --app APP_ID background-data=off`. With an app, one line per day. The bytes of the apps' own \
            sockets are counted where the data controls are enforced (see `offstage status`). Figures are per local \
            day; the window starts 29 days ago unless --since says otherwise. For example: `offstage usage --sort cpu`, \
            `offstage usage com.example.feedsync --since 7d`.
            """)
    @OptionGroup var globals: GlobalOptions
    @Argument(help: ArgumentHelp("One app's id: its usage day by day.", valueName: "APP_ID")) var app: String?
    // Unconditional: a negative value is a wrong value to report as such, not a missing one.
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Where the window starts: a duration back from now (90s, 30m, 2h, 7d) or a date (2025-01-31, local "
                + "time). Days count whole. Default: the start of the day 29 days ago.",
            valueName: "DURATION|DATE"))
    var since: String?
    @Option(help: ArgumentHelp("What the apps are sorted by, heaviest first: data, cpu, wakeups or memory.", valueName: "KEY"))
    var sort: UsageSort = .data

    func validate() throws {
        guard let since else { return }
        _ = try HistorySince.validated(since, option: "--since")
    }

    func run(with client: ControlClient) throws {
        let start = try since.map { try HistorySince.validated($0, option: "--since") }
        let reply = try client.call(
            ControlInterface.Method.usage, ControlInterface.UsageParameters(app: app, since: start),
            as: ControlInterface.UsageReply.self)
        try client.output(reply, text: app == nil ? Table.usage(reply, sortedBy: sort) : Table.usageByDay(reply))
    }
}

/// What `offstage usage` sorts apps by.
enum UsageSort: String, ExpressibleByArgument, CaseIterable {
    case data, cpu, wakeups, memory
}
