import ArgumentParser
import OffstageProtocol

/// `offstage audio …`: the audio sessions and system audio interruptions (SPEC MODE-1, CLI-1).
struct Audio: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "See every app's audio session, and interrupt the audio as an incoming call does.",
        subcommands: [AudioSessions.self, AudioInterrupt.self],
        defaultSubcommand: AudioSessions.self)
}

struct AudioSessions: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "sessions",
        abstract: "List every app's audio session: category, active, playing, and whether it keeps the app running.")
    @OptionGroup var globals: GlobalOptions

    func run(with client: ControlClient) throws {
        let reply = try client.call(
            ModesControlInterface.Method.audioSessions, NoParameters(), as: ModesControlInterface.AudioSessionsReply.self)
        try client.output(reply, text: Table.audioSessions(reply))
    }
}

struct AudioInterrupt: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "interrupt",
        abstract: "Begin or end a system audio interruption, as an incoming call or an alarm does.",
        discussion: """
            --begin interrupts every active audio session: each app is told (audio interruption began) and its \
            players pause, so background players are suspended. --end tells the interrupted apps they may resume and \
            wakes those that were playing. This interrupts the audio only; `offstage interrupt` interrupts the app \
            in front (an incoming call does both).
            """)
    @OptionGroup var globals: GlobalOptions
    @Flag(help: "Begin the interruption.") var begin = false
    @Flag(help: "End the interruption.") var end = false

    func validate() throws {
        if begin == end { throw ValidationError("give exactly one of --begin or --end") }
    }

    func run(with client: ControlClient) throws {
        let reply = try client.call(
            ModesControlInterface.Method.audioInterruption, ModesControlInterface.AudioInterruptionParameters(begin: begin),
            as: ModesControlInterface.AudioSessionsReply.self)
        let sessions = reply.sessions.isEmpty ? "" : "\n" + Table.audioSessions(reply)
        try client.output(reply, text: (begin ? "audio interruption began" : "audio interruption ended") + sessions)
    }
}
