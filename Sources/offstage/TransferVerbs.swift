import ArgumentParser
import Foundation
import OffstageCore
import OffstageProtocol

/// `offstage transfers …`: every app's background transfers as the user sees them — what each does and why it
/// waits — and pause, resume and cancel by hand (SPEC §5, CLI-1, CLI-2).
struct TransfersCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transfers",
        abstract: "List the apps' background transfers and why each waits; pause, resume or cancel one.",
        discussion: """
            `offstage transfers [APP_ID]` lists (the list verb is the default); `pause`, `resume` and `cancel` act on \
            one transfer by its id, as the ID column shows it.
            """,
        subcommands: [TransfersList.self, TransferPause.self, TransferResume.self, TransferCancel.self],
        defaultSubcommand: TransfersList.self)
}

struct TransfersList: DaemonCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List background transfers, oldest first: app, session, id, kind, state, progress and why each waits.",
        discussion: """
            State is waiting, running, paused, completed or failed. A waiting transfer names every condition that \
            holds it back (no network, a metered network, discretionary, its earliest begin, the wait before a retry) \
            or that others have the slots; a failed one names why. A finished transfer stays listed until its app \
            has heard of it. With --json, an array of the transfers: app, session, id, kind, url, state, bytesDone, \
            bytesExpected (null when unknown), discretionary, attempts, waitingFor (an array of strings), retryAt, \
            lastError, httpStatus, failure, createdAt and finishedAt (seconds since the epoch).
            """)
    @OptionGroup var globals: GlobalOptions
    @Argument(help: ArgumentHelp("Only this app's.", valueName: "APP_ID")) var app: String?

    func validate() throws {
        if app?.isEmpty == true {
            throw ValidationError("APP_ID is empty; give an app's id, or leave it out for every app")
        }
    }

    func run(with client: ControlClient) throws {
        let reply = try client.call(
            TransfersControlInterface.Method.list, TransfersControlInterface.ListParameters(app: app),
            as: TransfersControlInterface.ListReply.self)
        try client.output(reply.transfers.map(TransferJSON.init), text: Table.transfers(reply.transfers, app: app))
    }
}

/// One transfer as `--json` prints it: every key present, null when not known or not applicable, so scripts can rely
/// on each (the wire leaves such keys out).
struct TransferJSON: Encodable {
    let transfer: TransfersControlInterface.TransferMessage

    enum Key: String, CodingKey {
        case app, session, id, kind, url, state, bytesDone, bytesExpected, discretionary, attempts, waitingFor, retryAt
        case lastError, httpStatus, failure, createdAt, finishedAt
    }

    enum FailureKey: String, CodingKey { case code, status, message }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(transfer.app, forKey: .app)
        try container.encode(transfer.session, forKey: .session)
        try container.encode(transfer.id, forKey: .id)
        try container.encode(transfer.kind, forKey: .kind)
        try container.encode(transfer.url, forKey: .url)
        try container.encode(transfer.state, forKey: .state)
        try container.encode(transfer.bytesDone, forKey: .bytesDone)
        try container.encode(transfer.bytesExpected, forKey: .bytesExpected)
        try container.encode(transfer.discretionary, forKey: .discretionary)
        try container.encode(transfer.attempts, forKey: .attempts)
        try container.encode(transfer.waitingFor, forKey: .waitingFor)
        try container.encode(transfer.retryAt, forKey: .retryAt)
        try container.encode(transfer.lastError, forKey: .lastError)
        try container.encode(transfer.httpStatus, forKey: .httpStatus)
        if let failure = transfer.failure {
            var nested = container.nestedContainer(keyedBy: FailureKey.self, forKey: .failure)
            try nested.encode(failure.code, forKey: .code)
            try nested.encode(failure.status, forKey: .status)
            try nested.encode(failure.message, forKey: .message)
        } else {
            try container.encodeNil(forKey: .failure)
        }
        try container.encode(transfer.createdAt, forKey: .createdAt)
        try container.encode(transfer.finishedAt, forKey: .finishedAt)
    }
}

/// `offstage transfers pause|resume|cancel ID`: one change by hand.
protocol TransferChangeVerb: DaemonCommand {
    /// The change's name on the wire: pause, resume or cancel.
    static var change: String { get }
    var id: String { get }
    /// What happened, for people.
    static func done(_ id: UInt64) -> String
}

extension TransferChangeVerb {
    func validate() throws {
        guard UInt64(id) != nil else {
            throw ValidationError(
                "ID \(QuotedText.quote(id)) is not a transfer id; give the number in the ID column of `offstage transfers`")
        }
    }

    func run(with client: ControlClient) throws {
        let number = UInt64(id) ?? 0
        _ = try client.call(
            TransfersControlInterface.Method.change,
            TransfersControlInterface.ChangeParameters(id: number, change: Self.change))
        try client.output(TransferChanged(id: number, change: Self.change), text: Self.done(number))
    }
}

/// What `--json` prints for a change: `{"id": 7, "change": "pause"}`.
struct TransferChanged: Encodable {
    var id: UInt64
    var change: String
}

/// The ID argument's help.
private let transferIDHelp = ArgumentHelp("The transfer's id (the ID column of `offstage transfers`).", valueName: "ID")

struct TransferPause: TransferChangeVerb {
    static let configuration = CommandConfiguration(
        commandName: "pause",
        abstract: "Pause a waiting or running transfer: it keeps its bytes and waits until it is resumed.",
        discussion: #"A running transfer stops at once and resumes later from where it was. With --json, {"id", "change"}."#)
    static let change = "pause"
    @OptionGroup var globals: GlobalOptions
    @Argument(help: transferIDHelp) var id: String

    static func done(_ id: UInt64) -> String {
        "paused transfer \(id); resume it with `offstage transfers resume \(id)`"
    }
}

struct TransferResume: TransferChangeVerb {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Resume a paused transfer: it waits for its turn again, from the bytes it had.",
        discussion: #"With --json, {"id", "change"}."#)
    static let change = "resume"
    @OptionGroup var globals: GlobalOptions
    @Argument(help: transferIDHelp) var id: String

    static func done(_ id: UInt64) -> String {
        "resumed transfer \(id); it runs when nothing holds it back (see `offstage transfers`)"
    }
}

struct TransferCancel: TransferChangeVerb {
    static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract: "Cancel an unfinished transfer: it fails as cancelled, and its app hears so.",
        discussion: #"It cannot be resumed; it stays listed, failed, until its app has heard of it. With --json, {"id", "change"}."#)
    static let change = "cancel"
    @OptionGroup var globals: GlobalOptions
    @Argument(help: transferIDHelp) var id: String

    static func done(_ id: UInt64) -> String {
        "cancelled transfer \(id); its app hears that it failed as cancelled"
    }
}
