import Foundation
import OffstageProtocol

/// A real `offstaged` in a folder of the harness's own, driven through the real `offstage` CLI.
final class HarnessDaemon {
    /// The built executables: beside this program.
    static let products = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()

    let root: String
    var socket: String { root + "/offstaged.sock" }
    var state: String { root + "/state" }
    private(set) var process: Process?
    /// When each kill -9 happened (seconds since the epoch), to see where they fell against due times.
    private(set) var killTimes: [Double] = []
    /// When each start first answered: with `killTimes`, when the daemon was down.
    private(set) var answerTimes: [Double] = []

    init(root: String, settings: [String: Double]) throws {
        self.root = root
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try JSONEncoder().encode(settings).write(to: URL(fileURLWithPath: root + "/config.json"))
    }

    /// The same with any settings, objects included.
    init(root: String, json settings: [String: Any]) throws {
        self.root = root
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try JSONSerialization.data(withJSONObject: settings).write(to: URL(fileURLWithPath: root + "/config.json"))
    }

    /// Starts the daemon and kills it `seconds` later, before or after it first answers: a kill in the middle of its
    /// start-up (reading the store back, re-adopting the apps, firing what fell due while it was down).
    func startAndCrash(after seconds: Double) throws {
        let (process, _) = try spawn()
        usleep(UInt32(seconds * 1_000_000))
        guard process.isRunning else { throw HarnessFailure("offstaged exited at start; see \(root)/daemon.log") }
        crash()
    }

    /// Starts the daemon; returns the seconds from spawning it to its first answer on the socket.
    func start() throws -> Double {
        let (process, started) = try spawn()
        // A bare Varlink call, polled: a CLI process per try would add its own start-up to the figure.
        while Date().timeIntervalSince(started) < 30 {
            if let connection = try? VarlinkConnection(path: socket) {
                defer { connection.close() }
                if (try? connection.call(
                    ControlInterface.Method.status, VarlinkEmpty(), as: ControlInterface.StatusReply.self,
                    timeout: .seconds(5))) != nil
                {
                    answerTimes.append(Date().timeIntervalSince1970)
                    return Date().timeIntervalSince(started)
                }
            }
            guard process.isRunning else { throw HarnessFailure("offstaged exited at start; see \(root)/daemon.log") }
            usleep(1_000)
        }
        throw HarnessFailure("offstaged did not answer within 30 s")
    }

    /// Spawns the daemon; returns it and when it was spawned.
    private func spawn() throws -> (Process, Date) {
        let process = Process()
        process.executableURL = Self.products.appendingPathComponent("offstaged")
        process.arguments = ["--state-dir", state, "--socket", socket, "--config", root + "/config.json", "--log-level", "notice"]
        // Notices: each resume of a transfer logs the bytes it fetches again, which the transfer checks read.
        // No desktop session: a run started from one must not put its thousand notifications on the user's screen
        // (the checks read the daemon's delivered list, not a desktop).
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = nil
        process.environment = environment
        if !FileManager.default.fileExists(atPath: root + "/daemon.log") {
            _ = FileManager.default.createFile(atPath: root + "/daemon.log", contents: nil)
        }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: root + "/daemon.log"))
        log.seekToEndOfFile()
        process.standardOutput = log
        process.standardError = log
        let started = Date()
        try process.run()
        self.process = process
        return (process, started)
    }

    /// `kill -9`.
    func crash() {
        guard let process, process.isRunning else { return }
        killTimes.append(Date().timeIntervalSince1970)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }

    /// SIGTERM and wait.
    func stop() {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        self.process = nil
    }

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Starts `offstage ARGS` and returns at once.
    func startCLI(_ arguments: [String]) throws -> (Process, Pipe, Pipe) {
        let cli = Process()
        cli.executableURL = Self.products.appendingPathComponent("offstage")
        cli.arguments = ["--socket", socket] + arguments
        let (out, err) = (Pipe(), Pipe())
        cli.standardOutput = out
        cli.standardError = err
        try cli.run()
        return (cli, out, err)
    }

    /// Waits for a CLI started with ``startCLI(_:)``.
    func finish(_ started: (Process, Pipe, Pipe)) -> Output {
        let (cli, out, err) = started
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        cli.waitUntilExit()
        return Output(
            status: cli.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// Runs `offstage ARGS` to the end.
    func cli(_ arguments: [String]) throws -> Output { finish(try startCLI(arguments)) }

    /// Runs `offstage --json ARGS`, requires success and decodes the reply.
    func json<Reply: Decodable>(_ arguments: [String], as type: Reply.Type) throws -> Reply {
        let output = try cli(["--json"] + arguments)
        guard output.status == 0 else {
            throw HarnessFailure("offstage \(arguments.joined(separator: " ")) failed (\(output.status)): \(output.stderr)")
        }
        return try JSONDecoder().decode(type, from: Data(output.stdout.utf8))
    }

    func apps() throws -> [ControlInterface.App] { try json(["apps"], as: [ControlInterface.App].self) }

    func settings(app: String?) throws -> [String: Bool] {
        let list = try json(["settings"] + (app.map { ["--app", $0] } ?? []), as: [ControlInterface.Setting].self)
        return Dictionary(uniqueKeysWithValues: list.map { ($0.name, $0.value) })
    }

    func pendingRequests() throws -> Set<String> {
        let tasks = try json(["tasks"], as: [ControlInterface.TaskMessage].self)
        return Set(tasks.filter { $0.state == "pending" && $0.kind != "fetch" }.map { $0.app + "/" + $0.identifier })
    }
}

struct HarnessFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
