import ArgumentParser
import Foundation
import OffstageProtocol

/// `offstage voip …`: VoIP apps' keep-alive handlers and handed-off sockets (SPEC MODE-2, CLI-1).
struct VoIP: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "voip",
        abstract: "See VoIP apps' keep-alive handlers and handed-off sockets, and simulate data on a socket.",
        subcommands: [VoIPApps.self, VoIPData.self],
        defaultSubcommand: VoIPApps.self)
}

struct VoIPApps: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "List apps with a keep-alive handler, a handed-off socket (and whether it is watched) or a pending relaunch.")
    @OptionGroup var globals: GlobalOptions

    func run(with client: ControlClient) throws {
        let reply = try client.call(
            ModesControlInterface.Method.voipApps, NoParameters(), as: ModesControlInterface.VoIPAppsReply.self)
        try client.output(reply, text: Table.voipApps(reply))
    }
}

struct VoIPData: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "data",
        abstract: "As if data arrived on a suspended app's VoIP socket: the app is woken and its handler runs.",
        discussion: """
            For tests without a signalling server: the same effects as real data, marked forced in the log. The app \
            must be suspended with its socket watched (`offstage voip` shows it). --closed simulates the peer \
            hanging up instead: the app is woken and the daemon stops watching the socket.
            """)
    @OptionGroup var globals: GlobalOptions
    @Argument(help: ArgumentHelp("The app's id.", valueName: "APP_ID")) var app: String
    @Flag(help: "Simulate a hang-up instead of data.") var closed = false

    func run(with client: ControlClient) throws {
        let reply = try client.call(
            ModesControlInterface.Method.voipSocketEvent,
            ModesControlInterface.VoIPSocketEventParameters(app: app, closed: closed), as: ModesControlInterface.VoIPAppsReply.self)
        try client.output(reply, text: "\(closed ? "hang-up" : "data") on \(app)'s socket (forced): the app is woken")
    }
}
