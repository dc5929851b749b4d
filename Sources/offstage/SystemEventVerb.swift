import ArgumentParser
import OffstageProtocol

/// `offstage system-event KIND`: a system notification, as the machine would post it (SPEC LC-4, CLI-1).
struct SystemEventVerb: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "system-event",
        abstract: "Post a system event to every running and suspended app, as the machine would.",
        discussion: """
            KIND is one of significant-time-change, time-zone-change, locale-change, settings-change, \
            battery-level-change, battery-state-change, network-change, accessory-connect, accessory-disconnect. \
            A running app hears it at once; a suspended app hears it when it runs again, before anything else, \
            once per kind however often it was posted. The daemon posts battery, network and settings changes by \
            itself when they happen.
            """)
    @OptionGroup var globals: GlobalOptions
    @Argument(help: ArgumentHelp("What happened.", valueName: "KIND")) var kind: String

    func run(with client: ControlClient) throws {
        let reply = try client.call(
            ModesControlInterface.Method.systemEvent, ModesControlInterface.SystemEventParameters(kind: kind),
            as: ModesControlInterface.SystemEventReply.self)
        try client.output(reply, text: "\(kind) posted to \(reply.apps) app(s)")
    }
}
