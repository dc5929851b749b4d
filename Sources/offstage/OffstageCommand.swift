import ArgumentParser
import Foundation
import OffstageCore
import OffstageProtocol

/// `offstage`: act as the user of an Offstage device, change its settings, and inspect what it does.
@main
struct OffstageCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offstage",
        abstract: "Drive and inspect the Offstage background-execution daemon.",
        discussion: """
            The daemon socket is --socket, else $OFFSTAGE_SOCKET, else $XDG_RUNTIME_DIR/offstage/offstaged.sock, \
            else offstaged.sock in the daemon's default state folder ($OFFSTAGE_STATE_DIR, else \
            $XDG_STATE_HOME/offstage, else ~/.local/state/offstage): the same place the daemon picks when started \
            with the same environment. Every verb prints plain text, or JSON with --json. \
            Exit status: 0 success; 1 the daemon refused the request; 3 no such app; \
            4 invalid bundle; 5 no such task, transfer or notification; 6 not permitted by the app's manifest; 64 bad usage; 69 the daemon is unreachable.
            """,
        version: offstageVersion,
        subcommands: [
            Install.self, Uninstall.self, Apps.self, Open.self, Home.self, Lock.self, Unlock.self, Interrupt.self,
            ForceQuit.self, MemoryWarningVerb.self, Settings.self, Log.self, Status.self, Device.self, Tasks.self, Explain.self,
            RunTask.self, ExpireTask.self, CancelTask.self, Fetch.self, Audio.self, VoIP.self, LocationCommand.self, AccessoryCommand.self,
            NotificationsCommand.self, PushSend.self, PushKeys.self, PushStatus.self, TransfersCommand.self,
            SystemEventVerb.self, UsageCommand.self, Metrics.self, MakeBundle.self,
        ]
    )

    /// Global options may come before the verb (`offstage --json apps`) as well as after it: they are moved
    /// after the verb, where each verb's option group parses them.
    static func main() {
        SignalMask.unblockAll()
        let arguments = Self.movingGlobalOptions(Array(CommandLine.arguments.dropFirst()))
        if let verb = arguments.first, !verb.hasPrefix("-"), !verbNames.contains(verb) {
            // Said here, naming the verb: the parser would blame the global option in front of it instead.
            FileHandle.standardError.write(
                Data("offstage: \(QuotedText.quote(verb)) is not a verb; run `offstage --help` for the list\n".utf8))
            Foundation.exit(ExitCode.validationFailure.rawValue)
        }
        if let problem = negativeNumberProblem(arguments) {
            FileHandle.standardError.write(Data("offstage: \(problem)\n".utf8))
            Foundation.exit(ExitCode.validationFailure.rawValue)
        }
        main(arguments)
    }

    /// A negative number where the parser reads an option (`transfers cancel -5`, `location set -33.9 18.4`): the
    /// parser would say that an argument is missing or that `-5` is no option. Said here instead, naming the number
    /// and the fix; nil when the arguments parse, and for the value of an option (`--limit -1` is the option's value,
    /// which the verb checks and refuses in its own words).
    static func negativeNumberProblem(_ arguments: [String]) -> String? {
        let options = Array(arguments.prefix { $0 != "--" })
        let isNegativeNumber = { (token: String) in token.count > 1 && token.hasPrefix("-") && Double(token) != nil }
        guard
            let index = options.indices.first(where: { index in
                isNegativeNumber(options[index]) && !(index > 0 && options[index - 1].hasPrefix("--") && !options[index - 1].contains("="))
            })
        else { return nil }
        do {
            _ = try parseAsRoot(arguments)
            return nil
        } catch {
            let verb = arguments.prefix { !$0.hasPrefix("-") }.joined(separator: " ")
            let more = options.count > index + 1 ? " …" : ""
            return "\(options[index]) is read as an option; give negative numbers after --, behind every option: "
                + "`offstage \(verb) [OPTIONS] -- \(options[index])\(more)`"
        }
    }

    /// The verbs, and `help`.
    static var verbNames: Set<String> {
        Set(configuration.subcommands.map { $0._commandName } + ["help"])
    }

    static func movingGlobalOptions(_ arguments: [String]) -> [String] {
        var leading: [String] = []
        var rest = arguments[...]
        while let first = rest.first {
            if first == "--json" {
                leading.append(first)
                rest = rest.dropFirst()
            } else if first == "--socket", rest.count >= 2 {
                leading += rest.prefix(2)
                rest = rest.dropFirst(2)
            } else if first.hasPrefix("--socket=") {
                leading.append(first)
                rest = rest.dropFirst()
            } else {
                break
            }
        }
        guard let verb = rest.first, !verb.hasPrefix("-") else { return arguments }
        // A verb group (`audio sessions`): the options go after the whole path, to the verb that parses them.
        var path = [verb]
        rest = rest.dropFirst()
        var command = configuration.subcommands.first { $0._commandName == verb }
        while let group = command, let next = rest.first,
            let sub = group.configuration.subcommands.first(where: { $0._commandName == next })
        {
            path.append(next)
            rest = rest.dropFirst()
            command = sub
        }
        return path + leading + rest
    }
}

/// Options every verb takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The daemon's socket.", valueName: "PATH"))
    var socket: String?

    @Flag(name: .long, help: "Print machine-readable JSON.")
    var json = false
}

/// A verb that talks to the daemon.
protocol DaemonCommand: ParsableCommand {
    var globals: GlobalOptions { get }
    func run(with client: ControlClient) throws
}

extension DaemonCommand {
    func run() throws {
        let client = ControlClient(socketPath: socketPath, json: globals.json)
        do {
            try run(with: client)
        } catch let error as ExitCode {
            throw error
        } catch {
            throw client.fail(error)
        }
    }

    var socketPath: String {
        let environment = ProcessInfo.processInfo.environment
        return OffstageSocketPath.resolve(
            explicit: globals.socket, environment: environment,
            stateDirectory: OffstageSocketPath.defaultStateDirectory(environment: environment))
    }
}
