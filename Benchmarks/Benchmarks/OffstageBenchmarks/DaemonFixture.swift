import Foundation
import OffstageBenchKit
import OffstageProtocol

/// Where the built executables are: next to the benchmark executable, since the benchmark target depends on the
/// daemon, the probe app and the helper, and SwiftPM builds all of them into the same folder.
enum Products {
    static let directory: String = {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return executable.deletingLastPathComponent().path
    }()

    /// The executable `name`; `OFFSTAGE_BENCH_OFFSTAGED` names another `offstaged` to measure (an earlier build, to
    /// compare two trees on the same machine in the same hour).
    static func path(_ name: String) throws -> String {
        let other = name == "offstaged" ? ProcessInfo.processInfo.environment["OFFSTAGE_BENCH_OFFSTAGED"] : nil
        let path = other ?? directory + "/" + name
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw BenchError("\(path) is missing; build with `swift package --package-path Benchmarks benchmark`")
        }
        return path
    }
}

/// A benchmark failure with a message that says what to check.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A real `offstaged` in a fresh temporary folder, driven over its real socket with the same `io.offstage.Control`
/// calls the `offstage` CLI makes (made in-process, so a CLI process start is not part of any figure). It ends
/// what it started, by pid: the daemon with SIGTERM (which ends its apps and removes its cgroups), then any app
/// or helper still alive.
final class DaemonFixture: @unchecked Sendable {
    let root: String
    let socket: String
    let stateDirectory: String
    private(set) var daemon: ChildProcess?
    private var helpers: [ChildProcess] = []
    private var connection: VarlinkConnection?
    private var appPids: Set<Int32> = []
    /// Arguments the next daemon started gets besides its folders (`--log-level info`).
    var extraArguments: [String] = []

    /// Creates the folder and writes the daemon's configuration file with `settings` (keys of `--config`: numbers,
    /// or whatever JSON value a key takes).
    init(settings: [String: Any] = [:]) throws {
        var template = Array("/tmp/offstage-bench-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw SystemCallError("mkdtemp")
        }
        root = String(cString: made)
        socket = root + "/offstaged.sock"
        stateDirectory = root + "/state"
        let config = try JSONSerialization.data(withJSONObject: settings, options: [.sortedKeys])
        try config.write(to: URL(fileURLWithPath: root + "/config.json"))
    }

    /// Starts the daemon and waits until it answers `Status`.
    func start() throws {
        let process = try spawn()
        let deadline = MonotonicClock.now() + 30_000_000_000
        while MonotonicClock.now() < deadline {
            if (try? status()) != nil { return }
            guard process.isRunning else { break }
            connection?.close()
            connection = nil
            MonotonicClock.sleep(milliseconds: 20)
        }
        let log = (try? String(contentsOfFile: root + "/daemon.log", encoding: .utf8)) ?? ""
        throw BenchError("offstaged did not answer within 30 s; its output:\n\(log)")
    }

    /// Starts the daemon's process and returns at once, without waiting for it to answer (the restart benchmark
    /// times from here).
    @discardableResult
    func spawn() throws -> ChildProcess {
        let process = try ChildProcess(
            try Products.path("offstaged"),
            ["--state-dir", stateDirectory, "--socket", socket, "--config", root + "/config.json"] + extraArguments,
            outputPath: root + "/daemon.log")
        daemon = process
        return process
    }

    /// Stops the daemon gracefully (SIGTERM) and waits for it; `start()` starts it again on the same state.
    func stop() {
        connection?.close()
        connection = nil
        daemon?.stop(grace: 30)
        daemon = nil
    }

    /// kill -9 of the daemon, then reaps it: its apps live on, its cgroups stay, and a daemon started next on the
    /// same state folder re-adopts them (SPEC LC-8).
    func crash() {
        connection?.close()
        connection = nil
        guard let daemon else { return }
        daemon.signal(SIGKILL)
        daemon.wait(seconds: 10)
    }

    /// The daemon's pid.
    var pid: pid_t { daemon?.pid ?? 0 }

    /// Starts a helper process that `tearDown` ends.
    func spawnHelper(_ arguments: [String], output: String) throws -> ChildProcess {
        let helper = try ChildProcess(try Products.path("OffstageBenchHelper"), arguments, outputPath: root + "/" + output)
        helpers.append(helper)
        return helper
    }

    // MARK: Control calls

    /// One `io.offstage.Control` call on a connection kept open between calls.
    func call<Parameters: Encodable, Reply: Decodable>(
        _ method: String, _ parameters: Parameters, as type: Reply.Type
    ) throws -> Reply {
        if connection == nil { connection = try VarlinkConnection(path: socket) }
        do {
            return try connection!.call(method, parameters, as: type, timeout: .seconds(60))
        } catch let error as VarlinkConnectionError {
            connection?.close()
            connection = nil
            throw error
        }
    }

    func status() throws -> ControlInterface.StatusReply {
        try call(ControlInterface.Method.status, NoParameters(), as: ControlInterface.StatusReply.self)
    }

    func apps() throws -> [ControlInterface.App] {
        try call(ControlInterface.Method.listApps, NoParameters(), as: ControlInterface.AppsReply.self).apps
    }

    func app(_ id: String) throws -> ControlInterface.App {
        guard let app = try apps().first(where: { $0.id == id }) else { throw BenchError("\(id) is not installed") }
        if let pid = app.pid { appPids.insert(pid) }
        return app
    }

    @discardableResult
    func install(_ bundle: String) throws -> String {
        try call(
            ControlInterface.Method.install, ControlInterface.InstallParameters(path: bundle),
            as: ControlInterface.InstallReply.self
        ).id
    }

    func open(_ id: String) throws {
        _ = try call(ControlInterface.Method.open, ControlInterface.AppParameters(id: id), as: ControlInterface.OpenReply.self)
    }

    func home() throws {
        _ = try call(ControlInterface.Method.home, NoParameters(), as: EmptyReply.self)
    }

    /// Waits until the app is in `state` (checking every 10 ms) and returns it.
    @discardableResult
    func waitFor(_ id: String, _ state: String, timeout: Double = 30) throws -> ControlInterface.App {
        let deadline = MonotonicClock.now() + UInt64(timeout * 1e9)
        var last = ""
        while MonotonicClock.now() < deadline {
            let app = try app(id)
            if app.state == state { return app }
            last = app.state
            MonotonicClock.sleep(milliseconds: 10)
        }
        throw BenchError("\(id) did not become \(state) within \(timeout) s (it is \(last)); see \(root)/state/logs/\(id).log")
    }

    // MARK: Bundles

    /// A bundle folder for the probe app with id `id`, whose process gets `arguments`; `extra` adds manifest keys
    /// (background modes, permitted task identifiers).
    func probeBundle(id: String, arguments: [String] = [], extra: [String: Any] = [:]) throws -> String {
        let folder = root + "/bundles/" + id
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var manifest: [String: Any] = ["CFBundleIdentifier": id, "CFBundleExecutable": "OffstageBenchProbe"]
        manifest.merge(extra) { _, new in new }
        if !arguments.isEmpty { manifest["OffstageLinux"] = ["Arguments": arguments] }
        let plist = try PropertyListSerialization.data(fromPropertyList: manifest, format: .xml, options: 0)
        try plist.write(to: URL(fileURLWithPath: folder + "/Info.plist"))
        let executable = folder + "/OffstageBenchProbe"
        let source = try Products.path("OffstageBenchProbe")
        // A hard link saves a copy per bundle; the daemon copies the bundle on install anyway (decision 0005).
        if link(source, executable) != 0 {
            try FileManager.default.copyItem(atPath: source, toPath: executable)
        }
        return folder
    }

    // MARK: Tear-down

    /// Stops the daemon gracefully and waits for it, ends helpers and leftover app processes, removes the folder.
    func tearDown() {
        let pids = ((try? apps())?.compactMap(\.pid) ?? []) + Array(appPids)
        connection?.close()
        connection = nil
        if let daemon {
            // A graceful stop gives running apps will-terminate and kills suspended ones (decision 0004).
            daemon.stop(grace: 30)
        }
        for helper in helpers { helper.stop(grace: 2) }
        for pid in Set(pids) where ProcReader.isBenchProcess(pid) && ProcReader.state(pid) != "Z" {
            kill(pid, SIGKILL)
        }
        try? FileManager.default.removeItem(atPath: root)
    }
}
