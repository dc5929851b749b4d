import Foundation
import OffstageDaemon
import OffstageProtocol
import Synchronization
import Testing

/// A real `offstaged` in a temporary folder, with the example apps as real bundles, driven through the real
/// `offstage` CLI. It ends exactly the processes it started, by pid.
final class DaemonHarness: @unchecked Sendable {
    /// Where the built executables are (next to the test bundle).
    static let products: URL = {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return executable.deletingLastPathComponent()
    }()

    /// Timings shortened by five, keeping the ratios of the defaults (30 s budget, 5 s warning, 1 s suspend…).
    static let fastTimings: [String: JSONValue] = [
        "backgroundTaskBudget": 6, "expirationWarning": 1, "suspendDelay": 0.2, "didEnterBackgroundTimeout": 1,
        "willTerminateTimeout": 1, "callbackTimeout": 1, "terminationGrace": 0.4, "reattachTimeout": 4,
    ]

    let root: URL
    let socket: String
    let stateDirectory: String
    /// Variables the daemon gets on top of the test process's environment.
    let environment: [String: String]
    private(set) var daemon: Process?
    private var started: [Int32] = []
    /// Every app pid `apps()` has returned.
    private let seen = Mutex(Set<Int32>())
    /// How many waits are evaluating their condition now (``waitUntil(_:timeout:_:)``): while one is, `apps()` reads the
    /// list over the socket in this process instead of running the CLI.
    private let polling = Mutex(0)

    /// The machine's memory pressure as the daemons under test read it: PSI's thresholds out of reach and the
    /// available-memory fallback off, unless a test sets them. The tests share one machine, and those that take an
    /// app to its memory limit make the machine's PSI jump for a second or two; read at the defaults, that would warn
    /// every other test's running apps, and a photo viewer warned in front frees its photos, so a test of memory
    /// pressure set by hand or of a background limit would see less memory than its apps hold. Memory pressure is
    /// then what a test sets: with `offstage device` or an app memory budget.
    static let machinePressureOutOfReach: [String: JSONValue] = [
        "psiSomeWarning": 100, "psiSomeCritical": 100, "psiFullCritical": 100, "availableWarning": 0, "availableCritical": 0,
    ]

    init(settings: [String: JSONValue] = DaemonHarness.fastTimings, environment: [String: String] = [:]) throws {
        var settings = settings
        var pressure: [String: JSONValue] = [:]
        if case .object(let given)? = settings["machinePressure"] { pressure = given }
        settings["machinePressure"] = .object(pressure.merging(Self.machinePressureOutOfReach) { given, _ in given })
        self.environment = environment
        root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("offstage-it-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        socket = root.path + "/offstaged.sock"
        stateDirectory = root.path + "/state"
        let config = try JSONEncoder().encode(settings)
        try config.write(to: root.appendingPathComponent("config.json"))
    }

    // MARK: Daemon

    /// Starts the daemon and waits until it answers.
    func start() throws {
        let process = Process()
        process.executableURL = Self.products.appendingPathComponent("offstaged")
        process.arguments = [
            "--state-dir", stateDirectory, "--socket", socket, "--config", root.path + "/config.json", "--log-level", "info",
        ]
        // The daemon shows notifications on the desktop session it is given: never the one the tests run in, only a
        // test's own bus.
        var inherited = ProcessInfo.processInfo.environment
        inherited["DBUS_SESSION_BUS_ADDRESS"] = nil
        process.environment = inherited.merging(environment) { _, given in given }
        let log = FileHandle(forWritingAtPath: try touch("daemon.log"))!
        log.seekToEndOfFile()
        process.standardOutput = log
        process.standardError = log
        try process.run()
        daemon = process
        do {
            try waitUntil("the daemon answers", timeout: 20) { (try? self.cli(["status"]))?.status == 0 }
        } catch {
            let log = (try? String(contentsOfFile: root.path + "/daemon.log", encoding: .utf8)) ?? ""
            throw HarnessError("\(error); daemon output:\n\(log)")
        }
    }

    /// Stops the daemon gracefully (SIGTERM) and waits for it.
    func stop() {
        guard let daemon, daemon.isRunning else { return }
        kill(daemon.processIdentifier, SIGTERM)
        daemon.waitUntilExit()
        self.daemon = nil
    }

    /// `kill -9` of the daemon: its apps live on.
    func crash() {
        guard let daemon, daemon.isRunning else { return }
        kill(daemon.processIdentifier, SIGKILL)
        daemon.waitUntilExit()
        self.daemon = nil
    }

    /// Ends everything this harness started, by pid, and removes the folder — also when the daemon died during the
    /// test: then its apps live on, and it cannot list them. So the processes ended are, by pid: those the daemon
    /// lists, every app pid the test ever saw, those started by hand, any process running an executable from this
    /// harness's folder, and the members of this daemon's own cgroups, which are removed after (a dead daemon leaves
    /// them; a stopped one has already removed them).
    func tearDown() {
        let listed = (try? apps().compactMap(\.pid)) ?? []
        stop()
        let groups = Self.cgroupFolders(instance: OffstageDaemonService.instanceName(for: stateDirectory))
        let members = groups.flatMap(Self.pids(inCgroup:))
        let ours = Set(listed + started + Array(seen.withLock { $0 }) + Self.processes(runningFrom: root.path) + members)
        for pid in ours where kill(pid, 0) == 0 { kill(pid, SIGKILL) }
        Self.removeCgroups(groups)
        Self.removeNetworkTable(instance: OffstageDaemonService.instanceName(for: stateDirectory))
        try? FileManager.default.removeItem(at: root)
    }

    /// The pids of processes whose executable is inside `folder`.
    static func processes(runningFrom folder: String) -> [Int32] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return names.compactMap(Int32.init).filter { pid in
            let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) ?? ""
            return exe.hasPrefix(folder + "/")
        }
    }

    /// The cgroup folders of the daemon instance `instance` (`offstage.<instance>` at each cgroup mount), its app
    /// groups first.
    static func cgroupFolders(instance: String) -> [String] {
        let mounts = CgroupMounts.current()
        return [mounts.unified, mounts.freezer, mounts.memory].compactMap { $0 }.flatMap { mount -> [String] in
            let base = mount.mountPoint + "/offstage." + instance
            guard FileManager.default.fileExists(atPath: base) else { return [] }
            let children = ((try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []).map { base + "/" + $0 }
                .filter { (try? FileManager.default.attributesOfItem(atPath: $0)[.type] as? FileAttributeType) == .typeDirectory }
            return children + [base]
        }
    }

    /// The processes in a cgroup folder (cgroup.procs, v1 and v2).
    static func pids(inCgroup folder: String) -> [Int32] {
        let text = (try? String(contentsOfFile: folder + "/cgroup.procs", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { Int32($0) }
    }

    /// Thaws (a v1 freezer holds a killed process until thawed), waits for the members to go, and removes the folders.
    /// A killed process leaves its groups only once the kernel has torn it down, which on a loaded machine can take
    /// a while: the removal is tried again until it succeeds or 15 s have passed (it returns at once when it can).
    static func removeCgroups(_ folders: [String]) {
        for folder in folders {
            try? Data("THAWED".utf8).write(to: URL(fileURLWithPath: folder + "/freezer.state"))
            try? Data("0".utf8).write(to: URL(fileURLWithPath: folder + "/cgroup.freeze"))
            let end = Date().addingTimeInterval(15)
            while rmdir(folder) != 0, errno == EBUSY, Date() < end { usleep(10_000) }
        }
    }

    /// Remembers a process the test started by hand, so tear-down ends it.
    func track(_ pid: Int32) { started.append(pid) }

    // MARK: CLI

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs the `offstage` CLI against this daemon.
    @discardableResult
    func cli(_ arguments: [String]) throws -> Output { try Client(socket: socket).run(arguments) }

    /// The built `offstage` CLI, pointed at one socket.
    struct Client {
        let socket: String

        func run(_ arguments: [String]) throws -> Output {
            let process = Process()
            process.executableURL = DaemonHarness.products.appendingPathComponent("offstage")
            process.arguments = ["--socket", socket] + arguments
            let out = Pipe()
            let err = Pipe()
            process.standardOutput = out
            process.standardError = err
            try process.run()
            let stdout = out.fileHandleForReading.readDataToEndOfFile()
            let stderr = err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return Output(
                status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                stderr: String(decoding: stderr, as: UTF8.self))
        }
    }

    /// Runs the CLI and requires success.
    @discardableResult
    func ok(_ arguments: String...) throws -> String {
        let output = try cli(arguments)
        guard output.status == 0 else {
            throw HarnessError("offstage \(arguments.joined(separator: " ")) failed (\(output.status)): \(output.stderr)")
        }
        return output.stdout
    }

    /// Every app, as `offstage apps` lists it; the pids are remembered, so tear-down can end them if the daemon dies.
    ///
    /// Inside a wait's condition the list is read over the daemon's socket in this process: the reply `offstage --json
    /// apps` prints, without a process start. A wait polls every 20 ms, and an `offstage` run costs about 45 ms of CPU
    /// in a debug build: through the CLI, the waits alone kept the machine's cores busy.
    func apps() throws -> [ControlInterface.App] {
        let apps: [ControlInterface.App]
        if polling.withLock({ $0 > 0 }) {
            apps = try inProcess(ControlInterface.Method.listApps, NoParameters(), as: ControlInterface.AppsReply.self).apps
        } else {
            apps = try JSONDecoder().decode([ControlInterface.App].self, from: Data(try ok("--json", "apps").utf8))
        }
        seen.withLock { $0.formUnion(apps.compactMap(\.pid)) }
        return apps
    }

    /// One call to the daemon's control interface from this process, as the CLI makes it.
    private func inProcess<Parameters: Encodable, Reply: Decodable>(
        _ method: String, _ parameters: Parameters, as type: Reply.Type
    ) throws -> Reply {
        let connection = try VarlinkConnection(path: socket, maximumMessageSize: 64 << 20)
        defer { connection.close() }
        return try connection.call(method, parameters, as: type, timeout: .seconds(60))
    }

    func app(_ id: String) throws -> ControlInterface.App {
        guard let app = try apps().first(where: { $0.id == id }) else { throw HarnessError("\(id) is not installed") }
        return app
    }

    /// The event log, as `offstage --json log --limit 5000 [--app ID]` prints it (read in this process inside a wait's
    /// condition, as ``apps()`` is).
    func log(_ id: String? = nil) throws -> [ControlInterface.LogLine] {
        if polling.withLock({ $0 > 0 }) {
            let parameters = ControlInterface.LogParameters(app: id, limit: 5000, follow: false)
            return try inProcess(ControlInterface.Method.log, parameters, as: ControlInterface.LogReply.self).entries
        }
        var arguments = ["--json", "log", "--limit", "5000"]
        if let id { arguments += ["--app", id] }
        return try JSONDecoder().decode([ControlInterface.LogLine].self, from: Data(try ok(arguments).utf8))
    }

    func ok(_ arguments: [String]) throws -> String {
        let output = try cli(arguments)
        guard output.status == 0 else {
            throw HarnessError("offstage \(arguments.joined(separator: " ")) failed (\(output.status)): \(output.stderr)")
        }
        return output.stdout
    }

    /// The callbacks the daemon sent to `id`, in order, by wire name.
    func callbacks(_ id: String, since: Double = 0) throws -> [String] {
        try log(id).filter { $0.kind == "callback" && $0.at >= since }.map(\.message)
    }

    /// The time of the first log entry of `id` matching `predicate`.
    func time(_ id: String, since: Double = 0, _ predicate: (ControlInterface.LogLine) -> Bool) throws -> Double? {
        try log(id).first { $0.at >= since && predicate($0) }?.at
    }

    // MARK: Bundles

    /// Deletes the daemon instance's nftables table, which a daemon killed with -9 leaves in force (decision 0051); a
    /// stopped one has already removed it.
    static func removeNetworkTable(instance: String) {
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/nft") else { return }
        // None to delete (the daemon stopped cleanly) is fine: the answer is not read.
        _ = try? PushClientInteropTests.run("/usr/sbin/nft", ["delete", "table", "inet", "offstage_" + instance])
    }

    /// The names of the `inet` tables in the kernel (none where nft is missing).
    static func networkTables() throws -> [String] {
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/nft") else { return [] }
        let result = try PushClientInteropTests.run("/usr/sbin/nft", ["list", "tables", "inet"])
        return result.output.split(separator: "\n").compactMap { line in
            line.hasPrefix("table inet ") ? String(line.dropFirst("table inet ".count)) : nil
        }
    }

    /// The examples' sources, where the resources some of them bundle live (the player's playlist).
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Examples")

    /// Builds a bundle folder for an example app with the given manifest keys (merged over the defaults), and the
    /// example's resource folders copied beside the executable.
    func bundle(_ example: String, id: String, _ keys: [String: Any] = [:], resources: [String] = []) throws -> String {
        let folder = root.appendingPathComponent("bundles/\(id)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var manifest: [String: Any] = ["CFBundleIdentifier": id, "CFBundleExecutable": example]
        manifest.merge(keys) { _, new in new }
        let data = try PropertyListSerialization.data(fromPropertyList: manifest, format: .xml, options: 0)
        try data.write(to: folder.appendingPathComponent("Info.plist"))
        let executable = folder.appendingPathComponent(example)
        try? FileManager.default.removeItem(at: executable)
        try FileManager.default.copyItem(at: Self.products.appendingPathComponent(example), to: executable)
        for resource in resources {
            let target = folder.appendingPathComponent(resource)
            try? FileManager.default.removeItem(at: target)
            try FileManager.default.copyItem(at: Self.examples.appendingPathComponent("\(example)/\(resource)"), to: target)
        }
        return folder.path
    }

    /// Installs an example app as `id`.
    func install(_ example: String, id: String, _ keys: [String: Any] = [:], resources: [String] = []) throws {
        try ok("install", try bundle(example, id: id, keys, resources: resources))
    }

    /// The folder of the installed version of `id` in the daemon's state (`bundles/<id>@<token>`).
    func installedBundle(_ id: String) throws -> String {
        let bundles = stateDirectory + "/bundles"
        let names = try FileManager.default.contentsOfDirectory(atPath: bundles).filter { $0.hasPrefix(id + "@") }
        guard names.count == 1 else { throw HarnessError("expected one installed folder of \(id), found \(names)") }
        return bundles + "/" + names[0]
    }

    /// What the daemon wrote to standard error (its log, at level info), across its starts.
    var daemonOutput: String {
        (try? String(contentsOfFile: root.path + "/daemon.log", encoding: .utf8)) ?? ""
    }

    /// The app's own output (stdout and stderr).
    func output(_ id: String) -> String {
        (try? String(contentsOfFile: stateDirectory + "/logs/\(id).log", encoding: .utf8)) ?? ""
    }

    // MARK: Waiting

    /// Waits for a condition, checking every 20 ms; fails with `what` after `timeout` seconds.
    func waitUntil(_ what: String, timeout: Double = 10, _ condition: () throws -> Bool) throws {
        polling.withLock { $0 += 1 }
        defer { polling.withLock { $0 -= 1 } }
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try condition() { return }
            usleep(20_000)
        }
        // On a loaded machine this thread may wake long after the deadline: a condition met by then still counts.
        if try condition() { return }
        throw HarnessError("timed out after \(timeout) s waiting until \(what)")
    }

    /// Waits until the app is in `state`.
    func waitFor(_ id: String, _ state: String, timeout: Double = 10) throws {
        try waitUntil("\(id) is \(state)", timeout: timeout) { try self.app(id).state == state }
    }

    private func touch(_ name: String) throws -> String {
        let path = root.path + "/" + name
        if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        return path
    }

    static func now() -> Double { Date().timeIntervalSince1970 }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs `body` with a started harness (the daemon with `environment` added to its own) and always tears it down.
func withDaemon(
    settings: [String: JSONValue] = DaemonHarness.fastTimings, environment: [String: String] = [:],
    _ body: (DaemonHarness) throws -> Void
) throws {
    let harness = try DaemonHarness(settings: settings, environment: environment)
    defer { harness.tearDown() }
    try harness.start()
    try body(harness)
}

/// What /proc says of a process: its state letter and CPU seconds.
enum ProcessProbe {
    static func stat(_ pid: Int32) -> (state: Character, cpu: Double)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        let fields = text[text.index(close, offsetBy: 2)...].split(separator: " ")
        guard fields.count > 13, let utime = Double(fields[11]), let stime = Double(fields[12]) else { return nil }
        return (fields[0].first!, (utime + stime) / Double(sysconf(Int32(_SC_CLK_TCK))))
    }

    /// CPU seconds the process and its threads used.
    static func cpu(_ pid: Int32) -> Double { stat(pid)?.cpu ?? -1 }

    /// Nanoseconds on the CPU of every thread of the process, from the scheduler's own accounting
    /// (`/proc/PID/task/TID/schedstat`): exact where `stat`'s ticks (10 ms) are too coarse for a process that does
    /// little, such as a player writing audio at its real-time pace.
    static func cpuNanoseconds(_ pid: Int32) -> UInt64 {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.reduce(0) { total, task in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8)) ?? ""
            return total + (text.split(separator: " ").first.flatMap { UInt64($0) } ?? 0)
        }
    }

    /// Whether the process's cgroup says it is frozen (cgroup v2 `frozen 1`, or v1 FROZEN), or its state is `T`.
    /// Mount points come from /proc/self/mountinfo.
    static func isFrozen(_ pid: Int32) -> Bool {
        let mounts = CgroupMounts.current()
        func path(_ mount: CgroupMounts.Mount?, _ cgroup: String) -> String? {
            guard let mount else { return nil }
            let relative = mount.root == "/" ? cgroup : String(cgroup.dropFirst(mount.root.count))
            return mount.mountPoint + relative
        }
        if let lines = try? String(contentsOfFile: "/proc/\(pid)/cgroup", encoding: .utf8) {
            for line in lines.split(separator: "\n") {
                let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
                guard parts.count == 3, parts[2].contains("offstage.") else { continue }
                if parts[0] == "0", let directory = path(mounts.unified, parts[2]),
                    let events = try? String(contentsOfFile: directory + "/cgroup.events", encoding: .utf8),
                    events.contains("frozen 1")
                {
                    return true
                }
                if parts[1] == "freezer", let directory = path(mounts.freezer, parts[2]),
                    let state = try? String(contentsOfFile: directory + "/freezer.state", encoding: .utf8),
                    state.hasPrefix("FROZEN")
                {
                    return true
                }
            }
        }
        return stat(pid)?.state == "T"
    }

    static func isAlive(_ pid: Int32) -> Bool {
        guard let state = stat(pid)?.state else { return false }
        return state != "Z"
    }
}
