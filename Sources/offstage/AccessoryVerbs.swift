import ArgumentParser
import Foundation
import OffstageProtocol

/// `offstage accessory …`: registered accessories, and events simulated as if from the device (SPEC MODE-4, CLI-1).
struct AccessoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accessory",
        abstract: "See the accessories apps registered, and simulate one connecting, disconnecting or sending data.",
        subcommands: [AccessoryList.self, AccessoryEventVerb.self],
        defaultSubcommand: AccessoryList.self)
}

struct AccessoryList: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List registered accessories: path, mode, whether connected, the app's session and what it holds.")
    @OptionGroup var globals: GlobalOptions

    func run(with client: ControlClient) throws {
        let reply = try client.call(
            ModesControlInterface.Method.accessories, NoParameters(), as: ModesControlInterface.AccessoryLinksReply.self
        )
        try client.output(reply, text: Table.accessories(reply))
    }
}

struct AccessoryEventVerb: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "event",
        abstract:
            "As if an app's accessory connected, disconnected or sent data: the app is woken (or launched) for it.",
        discussion: """
            The same effects as from the device, marked forced in the log: for tests, and for accessories the daemon \
            cannot see on this machine (a Bluetooth peripheral without an adapter). A connection launches an app that \
            is not running, unless the user force-quit it or its background activity is off. Data needs no session: \
            the app's handler is told its accessory sent data.
            """)
    @OptionGroup var globals: GlobalOptions
    @Argument(help: ArgumentHelp("The app's id.", valueName: "APP_ID")) var app: String
    @Argument(help: ArgumentHelp("The app's name for the accessory (see `offstage accessory`).", valueName: "NAME"))
    var name: String
    @Argument(help: ArgumentHelp("connected, disconnected or data.", valueName: "EVENT")) var event: String

    func run(with client: ControlClient) throws {
        let reply = try client.call(
            ModesControlInterface.Method.accessoryEvent,
            ModesControlInterface.AccessoryEventParameters(app: app, name: name, event: event),
            as: ModesControlInterface.AccessoryLinksReply.self)
        try client.output(reply, text: "accessory '\(name)' of \(app): \(event) (forced)\n" + Table.accessories(reply))
    }
}
