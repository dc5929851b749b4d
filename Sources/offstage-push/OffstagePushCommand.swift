import ArgumentParser
import Foundation
import OffstagePushService

/// `offstage-push`: the multi-device push gateway on PostgreSQL (SPEC NT-5, decision 0036): serve a node, and
/// manage its database's provider keys and devices.
@main
struct OffstagePushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offstage-push",
        abstract: "The multi-device push gateway: APNs provider API, Web Push and the device link, on PostgreSQL.",
        discussion: """
            Every verb takes --database postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE, or the environment \
            variable OFFSTAGE_PUSH_DATABASE. Several nodes may serve one database.
            """,
        subcommands: [Serve.self, Migrate.self, Keys.self, Devices.self, Status.self])
}

/// Where the database is.
struct DatabaseOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The PostgreSQL database, e.g. postgres://offstage@127.0.0.1:5432/offstage (default: $OFFSTAGE_PUSH_DATABASE).",
            valueName: "URL"))
    var database: String?

    /// The database address, from the option or the environment; throws naming what to give.
    func resolve() throws -> PushDatabase {
        guard let url = database ?? ProcessInfo.processInfo.environment["OFFSTAGE_PUSH_DATABASE"], !url.isEmpty else {
            throw PushStoreError(
                "No database given; pass --database postgres://USER@HOST:PORT/DATABASE or set OFFSTAGE_PUSH_DATABASE.")
        }
        return try PushDatabase(url: url)
    }
}

/// `--json`, and how a verb prints its result or its error.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print JSON instead of text (errors too, on standard error).") var json = false

    /// Runs `body`; an error is printed (as `{"error": …}` with --json) and the verb exits 1.
    func run(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let exit as ExitCode {
            throw exit
        } catch {
            let message = PushStoreError.explain(error)
            if json {
                FileHandle.standardError.write(Data((Self.encode(["error": message]) + "\n").utf8))
            } else {
                FileHandle.standardError.write(Data("offstage-push: \(message)\n".utf8))
            }
            throw ExitCode(1)
        }
    }

    /// Prints `value` as JSON with --json, else `text`.
    func print<Value: Encodable>(_ value: Value, text: @autoclosure () -> String) {
        let line = json ? Self.encode(value) : text()
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func encode<Value: Encodable>(_ value: Value) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}

/// `offstage-push migrate`.
struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bring the database's schema up to date (serve and every other verb do it too).")
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        try await output.run {
            let database = try database.resolve()
            let applied = try await PushStoreMigrations.run(database, logger: .init(label: "offstage.push.migrate"))
            struct Result: Encodable {
                var applied: [Int]
                var version: Int
            }
            output.print(
                Result(applied: applied, version: PushStoreMigrations.latestVersion),
                text: applied.isEmpty
                    ? "\(database.redacted) is at schema version \(PushStoreMigrations.latestVersion); nothing to do."
                    : "\(database.redacted): applied \(applied.map(String.init).joined(separator: ", ")); now at version \(PushStoreMigrations.latestVersion).")
        }
    }
}
