import Foundation
import Glibc
import Testing

/// A private session bus in a temporary folder, and on demand the test notification server on it (SPEC NT-2): the
/// real `dbus-daemon` and an independent D-Bus implementation (Python's dbus-fast), started and ended by pid.
///
/// The bus reads a configuration of its own with no service directories, so no notification daemon installed on the
/// machine can be activated behind the test's back. Shared by the desktop client's tests and the daemon's
/// integration tests; it knows nothing of either. A program it needs that is not installed cancels the test (a skip,
/// with the package to install), so it is for use inside a test only.
///
/// ```swift
/// let bus = try PrivateSessionBus.start()
/// defer { bus.stop() }
/// try bus.startServer()
/// … connect a client (or start a daemon) with DBUS_SESSION_BUS_ADDRESS = bus.address …
/// bus.records()                      // the Notify calls the server got
/// try bus.command("invoke 1 default") // the user clicks notification 1
/// ```
public final class PrivateSessionBus {
    /// Something went wrong with a bus or server that could start.
    public struct BusError: Error, CustomStringConvertible {
        /// What went wrong.
        public let description: String
        /// An error saying `description`.
        public init(_ description: String) { self.description = description }
    }

    /// The bus daemon this starts.
    public static let dbusDaemon = "/usr/bin/dbus-daemon"
    /// `notification_server.py`, beside this file.
    public static let serverScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("notification_server.py").path

    /// The bus's folder: configuration, sockets, the server's records and command pipe.
    public let folder: String
    /// DBUS_SESSION_BUS_ADDRESS of the private bus.
    public let address: String
    private let bus: SpawnedProcess
    private var server: SpawnedProcess?
    /// Other services started on the bus (the NetworkManager stand-in), ended by pid at stop.
    private var helpers: [SpawnedProcess] = []

    /// The name the bus also listens on in the abstract socket namespace.
    public var abstractName: String { folder + "/abstract" }
    /// Where the server appends each Notify call, one JSON object a line.
    public var recordPath: String { folder + "/notify.jsonl" }
    /// Where the server appends the id of each CloseNotification call, one a line.
    public var closeRecordPath: String { folder + "/close.txt" }
    /// The named pipe the server reads its commands from.
    public var commandPath: String { folder + "/commands" }

    /// Starts a bus and waits until it listens; cancels the test when dbus-daemon is missing (scripts/ensure-packages
    /// installs it).
    public static func start() throws -> PrivateSessionBus {
        guard FileManager.default.isExecutableFile(atPath: dbusDaemon) else {
            try Test.cancel("dbus-daemon is not installed (Debian package dbus); skipped")
        }
        return try PrivateSessionBus()
    }

    private init() throws {
        var template = Array("/tmp/offstage-dbus-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        let folder = String(cString: made)
        self.folder = folder
        let configuration = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(folder)/bus</listen>
              <listen>unix:abstract=\(folder)/abstract</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """
        do {
            try configuration.write(toFile: folder + "/bus.conf", atomically: true, encoding: .utf8)
            bus = try SpawnedProcess(
                Self.dbusDaemon, ["--config-file=\(folder)/bus.conf", "--nofork", "--print-address=1"],
                output: folder + "/bus.out")
        } catch {
            try? FileManager.default.removeItem(atPath: folder)
            throw error
        }
        let printed = Self.waitFor(timeout: .seconds(20)) { () -> String? in
            let text = (try? String(contentsOfFile: "\(folder)/bus.out", encoding: .utf8)) ?? ""
            return text.hasSuffix("\n") ? text.split(separator: "\n").first.map(String.init) : nil
        }
        guard let printed, printed.hasPrefix("unix:") else {
            bus.terminate()
            let said = (try? String(contentsOfFile: "\(folder)/bus.out", encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(atPath: folder)
            throw BusError("dbus-daemon printed no address within 20 s: \(said.suffix(500))")
        }
        address = printed
    }

    /// Starts the test notification server and waits until it owns its name; cancels the test when python3 or its
    /// package dbus-fast is missing.
    public func startServer() throws {
        guard mkfifo(commandPath, 0o600) == 0 else { throw BusError("mkfifo failed: errno \(errno)") }
        server = try startPython(
            [Self.serverScript, address, recordPath, commandPath, closeRecordPath], output: folder + "/server.out",
            what: "the notification server")
    }

    /// `network_manager.py`, beside this file.
    public static let networkManagerScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("network_manager.py").path

    /// Starts the stand-in for NetworkManager with `Metered` at `metered` (NMMetered: 1 yes, 2 no, 3 guess-yes,
    /// 4 guess-no) and waits until it owns its name; cancels the test when python3 or dbus-fast is missing. Commands
    /// go to it with ``networkManager(_:)``.
    public func startNetworkManager(metered: UInt32) throws {
        let fifo = folder + "/network-manager"
        if access(fifo, F_OK) != 0, mkfifo(fifo, 0o600) != 0 { throw BusError("mkfifo failed: errno \(errno)") }
        let output = folder + "/network-manager.out"
        try? FileManager.default.removeItem(atPath: output)
        helpers.append(try startPython(
            [Self.networkManagerScript, address, String(metered), fifo], output: output, what: "the NetworkManager stand-in"))
    }

    /// Starts a Python service of the tests on this bus and waits until it prints "ready" (it owns its name).
    private func startPython(_ arguments: [String], output: String, what: String) throws -> SpawnedProcess {
        guard let python = SpawnedProcess.executable("python3") else {
            try Test.cancel("python3 is not installed; skipped")
        }
        let started = try SpawnedProcess(python, arguments, output: output)
        let ready = Self.waitFor(timeout: .seconds(30)) { () -> Bool? in
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            return text.contains("ready\n") || !started.isRunning ? true : nil
        }
        guard ready == true, started.isRunning else {
            started.terminate()
            let said = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            if said.contains("No module named 'dbus_fast'") {
                try Test.cancel("the Python package dbus-fast is not installed (pip install dbus-fast); skipped")
            }
            throw BusError("\(what) did not start: \(said.suffix(800))")
        }
        return started
    }

    /// Tells the NetworkManager stand-in "metered N" or "quit"; after "quit", waits until it has exited.
    public func networkManager(_ line: String) throws {
        try write(line, to: folder + "/network-manager", what: "the NetworkManager stand-in")
        if line == "quit", let last = helpers.last {
            guard Self.waitFor(timeout: .seconds(10), { last.isRunning ? nil : true }) == true else {
                throw BusError("the NetworkManager stand-in did not exit")
            }
        }
    }

    /// Tells the server to emit a signal ("invoke ID KEY" or "close ID REASON").
    public func command(_ line: String) throws {
        try write(line, to: commandPath, what: "the notification server")
    }

    /// Writes one line to a helper's command FIFO.
    private func write(_ line: String, to path: String, what: String) throws {
        // Non-blocking: a server that died must fail the test, not hang it. ENXIO while it reopens the FIFO.
        let fd = Self.waitFor(timeout: .seconds(10)) { () -> Int32? in
            let fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
            return fd >= 0 ? fd : nil
        }
        guard let fd else { throw BusError("\(what) does not read its commands") }
        defer { close(fd) }
        let bytes = Array((line + "\n").utf8)
        guard Glibc.write(fd, bytes, bytes.count) == bytes.count else { throw BusError("writing the command failed") }
    }

    /// The Notify calls the server has answered (and the one it holds unanswered, "hang"), as JSON objects, in the
    /// order they came.
    public func records() -> [[String: Any]] {
        let text = (try? String(contentsOfFile: recordPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    /// The ids the server was asked to close (CloseNotification), in order.
    public func closeRequests() -> [UInt32] {
        let text = (try? String(contentsOfFile: closeRecordPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { UInt32($0) }
    }

    /// Waits up to `timeout` until the server has recorded `count` Notify calls; returns them (fewer if it did not).
    public func waitForRecords(_ count: Int, timeout: Duration = .seconds(20)) -> [[String: Any]] {
        Self.waitFor(timeout: timeout) { () -> [[String: Any]]? in
            let records = records()
            return records.count >= count ? records : nil
        } ?? records()
    }

    /// Ends the bus (the server, if it still runs, loses its bus and exits; it is ended by pid too).
    public func stopBus() {
        bus.terminate()
    }

    /// Ends exactly the processes this bus started, by pid, and removes the folder.
    public func stop() {
        server?.terminate()
        helpers.forEach { $0.terminate() }
        bus.terminate()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Polls `condition` until it gives a value or `timeout` passes: the waits end on a condition, not a guess.
    public static func waitFor<Value>(timeout: Duration, _ condition: () -> Value?) -> Value? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let value = condition() { return value }
            if ContinuousClock.now >= deadline { return nil }
            usleep(10_000)
        }
    }
}
