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
        let data = try encoder.encode(value)
        return String(decoding: pretty ? compactingEmptyContainers(Array(data)) : Array(data), as: UTF8.self)
    }

    /// Foundation's pretty printer writes an empty array or object over three lines (`[`, a blank line, `  ]`): they
    /// are written `[]` and `{}`. Only the structure holds raw line breaks (in strings they are escaped), so a bracket
    /// followed by two line breaks is always an empty container. One pass: `log --json` may be 20 MB.
    static func compactingEmptyContainers(_ bytes: [UInt8]) -> [UInt8] {
        let (newline, space) = (UInt8(ascii: "\n"), UInt8(ascii: " "))
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            result.append(byte)
            index += 1
            guard byte == UInt8(ascii: "[") || byte == UInt8(ascii: "{"), index + 1 < bytes.count,
                bytes[index] == newline, bytes[index + 1] == newline
            else { continue }
            var end = index + 2
            while end < bytes.count, bytes[end] == space { end += 1 }
            let close = byte == UInt8(ascii: "[") ? UInt8(ascii: "]") : UInt8(ascii: "}")
            if end < bytes.count, bytes[end] == close {
                result.append(close)
                index = end + 1
            }
        }
        return result
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
