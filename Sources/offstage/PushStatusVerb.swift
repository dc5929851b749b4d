import ArgumentParser
import Dispatch
import Foundation
import OffstageProtocol
import OffstagePush
import Synchronization

// `offstage push`, `push-keys` and `push-status` (one file each, with their shared checks in PushArguments.swift): the push
// gateway as an app server and its operator see it
// (SPEC NT-3..5, CLI-1). This file does not import OffstageCore: its `PushType` would hide the gateway's.

// MARK: Status

/// `offstage push-status [APP_ID]`: the gateway, the apps' tokens and budgets, and what became of recent pushes.
struct PushStatus: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "push-status",
        abstract: "Show the push gateway, each app's token, held push and budget, and the newest push records.",
        discussion: """
            Records are newest first: each push's type, priority and collapse id, when the gateway accepted it, its \
            state (accepted, held, handed to the app's handler, done) and, once done, its outcome (handled, shown, \
            coalesced, expired, not-delivered, cut-off) with why. With --json, the reply as it is.
            """)
    @OptionGroup var globals: GlobalOptions
    @Argument(help: ArgumentHelp("Only this app's.", valueName: "APP_ID")) var app: String?
    // Unconditional: a negative value is a wrong value to report as such, not a missing one.
    @Option(parsing: .unconditional, help: ArgumentHelp("At most this many records (100 by default).", valueName: "N"))
    var limit: Int?

    func validate() throws {
        if app?.isEmpty == true { throw ValidationError("APP_ID is empty; give an app's id, or leave it out for all") }
        if let limit, !(0...10_000).contains(limit) { throw ValidationError("--limit must be 0 to 10000; got \(limit)") }
    }

    func run(with client: ControlClient) throws {
        let reply = try client.pushCall(
            PushControlInterface.Method.status, PushControlInterface.StatusParameters(app: app, limit: limit),
            as: PushControlInterface.StatusReply.self)
        try client.output(reply, text: Table.pushStatus(reply, app: app))
    }
}
