import ArgumentParser
import Foundation
import OffstageProtocol

/// The CLI's side of `io.offstage.Control`: one call per verb, errors turned into one line and an exit code.
struct ControlClient {
    let socketPath: String
    let json: Bool

    /// The largest reply the CLI reads. The protocol's default (1 MiB) is too small for what a full phone lists:
    /// `tasks` with 10,000 pending requests is about 6 MB, a full event log (100,000 entries) about 20 MB.
    static let maximumReplySize = 64 << 20

    func call<Parameters: Encodable, Reply: Decodable>(
        _ method: String, _ parameters: Parameters, as type: Reply.Type = EmptyReply.self
    ) throws -> Reply {
        let connection = try VarlinkConnection(path: socketPath, maximumMessageSize: Self.maximumReplySize)
        defer { connection.close() }
        return try connection.call(method, parameters, as: type, timeout: .seconds(60))
    }

    /// A long-lived call whose replies arrive as they happen (`log --follow`).
    func stream<Parameters: Encodable, Reply: Decodable>(
        _ method: String, _ parameters: Parameters, as type: Reply.Type, _ body: (Reply) throws -> Void
    ) throws {
        let connection = try VarlinkConnection(path: socketPath, maximumMessageSize: Self.maximumReplySize)
        defer { connection.close() }
        let replies = try connection.callMore(method, parameters, as: type)
        while let reply = try replies.next() { try body(reply) }
    }

    /// Prints `value` as JSON (with --json) or `text` otherwise.
    func output<Value: Encodable>(_ value: Value, text: @autoclosure () -> String) throws {
        if json {
            print(try Self.encode(value))
        } else {
            let body = text()
            if !body.isEmpty { print(body) }
        }
    }

    static func encode<Value: Encodable>(_ value: Value, pretty: Bool = true) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Writes one line to stderr for `error` and returns the exit code for it.
    func fail(_ error: any Error) -> ExitCode {
        let line: String
        let code: Int32
        if let error = error as? VarlinkError {
            let message = error.stringParameter("message") ?? error.name
            let fix = error.stringParameter("fix")
            line = fix.map { "\(message); \($0)" } ?? describe(error)
            code = switch error.name.split(separator: ".").last ?? "" {
            case "AppNotInstalled": 3
            case "InvalidBundle": 4
            case "NoSuchTask", "NoSuchNotification": 5
            case "NotPermitted": 6
            default: 1
            }
            if json {
                var object: [String: String] = ["error": error.name, "message": message]
                object["fix"] = fix
                writeError((try? Self.encode(object, pretty: false)) ?? line)
                return ExitCode(code)
            }
        } else if error is VarlinkConnectionError {
            line = "\(error)"
            code = 69
        } else {
            line = "\(error)"
            code = 1
        }
        if json {
            writeError((try? Self.encode(["error": "offstage.Error", "message": line], pretty: false)) ?? line)
        } else {
            writeError("offstage: \(line)")
        }
        return ExitCode(code)
    }

    private func describe(_ error: VarlinkError) -> String {
        if let parameter = error.stringParameter("parameter") {
            return "\(error.name): parameter '\(parameter)'"
        }
        return error.description
    }

    private func writeError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
