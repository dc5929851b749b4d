import Foundation
import OffstageBenchKit
import OffstageProtocol

/// What the transfer benchmarks ask the daemon and read from the probe app in `--transfers` mode: the event log, the
/// transfers list, the app's completion lines and its plan file.
extension DaemonFixture {
    /// The newest `limit` lines of the event log, of one app or of all.
    func log(app: String?, limit: Int = 200) throws -> [ControlInterface.LogLine] {
        try call(
            ControlInterface.Method.log, ControlInterface.LogParameters(app: app, limit: limit), as: ControlInterface.LogReply.self
        ).entries
    }

    /// Every app's transfers, as `offstage transfers --json` lists them.
    func transfers(app: String? = nil) throws -> [TransfersControlInterface.TransferMessage] {
        try call(
            TransfersControlInterface.Method.list, TransfersControlInterface.ListParameters(app: app),
            as: TransfersControlInterface.ListReply.self
        ).transfers
    }

    /// Runs a pending request of the app now (`offstage run-task`).
    func runTask(_ app: String, _ identifier: String) throws {
        _ = try call(
            ControlInterface.Method.runTask, ControlInterface.TaskParameters(app: app, identifier: identifier), as: EmptyReply.self)
    }

    /// The app's data folder (`OFFSTAGE_DATA_DIR`).
    func dataDirectory(_ app: String) -> String { stateDirectory + "/data/" + app }

    /// The lines the probe appended to its `completions.log`: `completed ID SIZE PATH` or `failed ID …`.
    func completions(_ app: String) -> [Substring] {
        let text = (try? String(contentsOfFile: dataDirectory(app) + "/completions.log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n")
    }

    /// The daemon's own output (every daemon started in this folder appends to it).
    var daemonOutput: String { (try? String(contentsOfFile: root + "/daemon.log", encoding: .utf8)) ?? "" }
}

/// The probe's `--transfers` plan and reports.
enum TransferPlan {
    /// Writes PLAN: the generation, then one step a line.
    static func write(_ path: String, generation: String, _ steps: [String]) throws {
        try ([generation] + steps).joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Waits for a report datagram starting with `prefix` (others are dropped); its words after the prefix.
    static func await(_ socket: Int32, _ prefix: String, timeoutSeconds: Double, what: () -> String) throws -> [String] {
        let deadline = MonotonicClock.now() + UInt64(timeoutSeconds * 1e9)
        while MonotonicClock.now() < deadline {
            let left = Int32(max(1, (deadline - min(deadline, MonotonicClock.now())) / 1_000_000))
            guard let bytes = try UnixSocket.receiveDatagram(socket, timeoutMilliseconds: left) else { break }
            let text = String(decoding: bytes, as: UTF8.self)
            if text == prefix || text.hasPrefix(prefix + " ") {
                return text.dropFirst(prefix.count).split(separator: " ").map(String.init)
            }
        }
        throw BenchError("no `\(prefix)` report within \(timeoutSeconds) s: \(what())")
    }

    /// Reads and drops every report waiting on `socket`: the app's sends block once the socket's queue is full.
    static func drain(_ socket: Int32) {
        while (try? UnixSocket.receiveDatagram(socket, timeoutMilliseconds: 0)) != nil {}
    }

    /// SHA-256 of a file, by `sha256sum`.
    static func sha256(_ path: String) throws -> String {
        let output = path + ".sha256-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let tool = ["/usr/bin/sha256sum", "/bin/sha256sum"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "sha256sum"
        let process = try ChildProcess(tool, [path], outputPath: output)
        process.wait(seconds: 120)
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard process.exitCode == 0, let digest = text.split(separator: " ").first, digest.count == 64 else {
            throw BenchError("sha256sum \(path) failed: \(text)")
        }
        return String(digest)
    }

    /// Random bytes into `path`.
    static func writeRandom(_ path: String, bytes: Int) throws {
        var generator = SystemRandomNumberGenerator()
        var data = Data(count: bytes)
        data.withUnsafeMutableBytes { buffer in
            let words = buffer.bindMemory(to: UInt64.self)
            for index in words.indices { words[index] = generator.next() }
        }
        try data.write(to: URL(fileURLWithPath: path))
    }
}
