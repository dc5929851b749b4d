import Foundation
import Glibc

/// A private PostgreSQL server in a temporary folder, for tests (the multi-device push gateway's, SPEC NT-5): the
/// machine's `initdb` and `pg_ctl`, a cluster with trust authentication for the role `offstage`, listening on
/// 127.0.0.1 on a free port and on a socket in the folder. ``stop()`` ends exactly its postmaster, by the pid in
/// `postmaster.pid`, and removes the folder.
///
/// `initdb` refuses to run as root, so as root (here and in CI) both programs run as the user `postgres` through
/// `runuser`, in a folder that user owns; Debian's package makes that user.
///
/// ```swift
/// let server = try PostgresServer.start()
/// defer { server.stop() }
/// let url = try server.createDatabase("t1")   // postgres://offstage@127.0.0.1:PORT/t1
/// ```
public final class PostgresServer: @unchecked Sendable {  // immutable after init
    /// PostgreSQL could not be found, started or used.
    public struct ServerError: Error, CustomStringConvertible {
        /// What went wrong, and the fix.
        public let description: String
        /// An error saying `description`.
        public init(_ description: String) { self.description = description }
    }

    /// The role the cluster is made for (its superuser).
    public static let user = "offstage"

    /// The cluster's folder: data, the socket, the log.
    public let folder: String
    /// The TCP port on 127.0.0.1.
    public let port: Int
    /// The postmaster's pid.
    public let pid: pid_t
    private let binaries: String

    /// The URL of the `postgres` database.
    public var url: String { url(database: "postgres") }

    /// The URL of `database` on this server.
    public func url(database: String) -> String { "postgres://\(Self.user)@127.0.0.1:\(port)/\(database)" }

    /// The folder holding `initdb`, `pg_ctl` and `createdb`: the one on PATH, else the newest under
    /// /usr/lib/postgresql; throws naming the Debian package when there is none.
    public static func binaryFolder() throws -> String {
        if let initdb = SpawnedProcess.executable("initdb") {
            let resolved = URL(fileURLWithPath: initdb).resolvingSymlinksInPath().deletingLastPathComponent().path
            if FileManager.default.isExecutableFile(atPath: resolved + "/pg_ctl") { return resolved }
        }
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap(Int.init).sorted(by: >)
        for version in versions where FileManager.default.isExecutableFile(atPath: "\(root)/\(version)/bin/initdb") {
            return "\(root)/\(version)/bin"
        }
        throw ServerError("PostgreSQL is not installed (no initdb on PATH or under \(root)); install the Debian package postgresql (scripts/ensure-packages does).")
    }

    /// Makes a cluster and starts it; returns once it accepts connections. `options` are more `-c name=value`
    /// settings for the server.
    public static func start(options: [String: String] = [:]) throws -> PostgresServer {
        try PostgresServer(options: options)
    }

    private init(options: [String: String]) throws {
        binaries = try Self.binaryFolder()
        var template = Array("/tmp/offstage-postgres-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw ServerError("mkdtemp failed: errno \(errno)") }
        folder = String(cString: made)
        do {
            if getuid() == 0 {
                guard let account = getpwnam("postgres") else {
                    throw ServerError("Running as root, PostgreSQL must run as the user postgres, which does not exist; install the Debian package postgresql.")
                }
                guard chown(folder, account.pointee.pw_uid, account.pointee.pw_gid) == 0 else {
                    throw ServerError("chown of \(folder) to postgres failed: errno \(errno)")
                }
            }
            try Self.run(binaries + "/initdb", ["-D", folder + "/data", "-A", "trust", "-U", Self.user, "--no-sync", "-E", "UTF8"], in: folder)
            (pid, port) = try Self.startCluster(binaries: binaries, folder: folder, options: options)
        } catch {
            try? FileManager.default.removeItem(atPath: folder)
            throw error
        }
    }

    /// Starts the cluster in `folder` on a free port (trying another when the port was taken meanwhile).
    private static func startCluster(binaries: String, folder: String, options: [String: String]) throws -> (pid_t, Int) {
        var lastError: (any Error)?
        for _ in 0..<3 {
            let port = try FreePort.loopback()
            var settings = ["listen_addresses": "127.0.0.1", "fsync": "off", "unix_socket_directories": folder]
            settings.merge(options) { _, given in given }
            let serverOptions = (["-p \(port)"] + settings.sorted { $0.key < $1.key }.map { "-c \($0.key)=\($0.value)" })
                .joined(separator: " ")
            do {
                try run(
                    binaries + "/pg_ctl", ["-D", folder + "/data", "-l", folder + "/server.log", "-w", "-t", "60", "-o", serverOptions, "start"],
                    in: folder)
            } catch {
                lastError = error
                continue
            }
            guard let pid = postmasterPID(folder + "/data") else {
                throw ServerError("pg_ctl started a server but \(folder)/data/postmaster.pid names no pid")
            }
            return (pid, port)
        }
        throw lastError ?? ServerError("PostgreSQL did not start")
    }

    /// Creates database `name` (owned by ``user``) and returns its URL.
    @discardableResult
    public func createDatabase(_ name: String) throws -> String {
        try Self.run(binaries + "/createdb", ["-h", "127.0.0.1", "-p", String(port), "-U", Self.user, name], in: folder, asPostgres: false)
        return url(database: name)
    }

    /// The server's log so far (for a failing test's message).
    public var log: String { (try? String(contentsOfFile: folder + "/server.log", encoding: .utf8)) ?? "" }

    /// Ends the postmaster (SIGINT: fast shutdown), waits until it is gone, and removes the folder.
    public func stop() {
        Self.end(pid, folder: folder)
        try? FileManager.default.removeItem(atPath: folder)
    }

    private static func end(_ pid: pid_t, folder: String) {
        kill(pid, SIGINT)
        let deadline = Date().addingTimeInterval(30)
        while isAlive(pid), Date() < deadline { usleep(10_000) }
        if isAlive(pid) {
            kill(pid, SIGKILL)
            while isAlive(pid), Date() < deadline.addingTimeInterval(10) { usleep(10_000) }
        }
    }

    /// Whether `pid` still runs (a zombie does not: the postmaster is not our child, init reaps it).
    private static func isAlive(_ pid: pid_t) -> Bool {
        guard kill(pid, 0) == 0 else { return false }
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        guard let close = stat.lastIndex(of: ")") else { return false }
        return !stat[close...].hasPrefix(") Z")
    }

    private static func postmasterPID(_ data: String) -> pid_t? {
        let text = (try? String(contentsOfFile: data + "/postmaster.pid", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").first.flatMap { pid_t($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// Runs `program` to its end (as postgres when we are root and `asPostgres`); throws with its output when it
    /// fails.
    private static func run(_ program: String, _ arguments: [String], in folder: String, asPostgres: Bool = true) throws {
        let output = folder + "/command.out"
        let process: SpawnedProcess
        if getuid() == 0, asPostgres {
            process = try SpawnedProcess("/usr/sbin/runuser", ["-u", "postgres", "--", program] + arguments, output: output, truncate: true)
        } else {
            process = try SpawnedProcess(program, arguments, output: output, truncate: true)
        }
        let code = process.exitCode()
        guard code == 0 else {
            let said = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            throw ServerError("\((program as NSString).lastPathComponent) exited \(code): \(said.suffix(1500))")
        }
    }
}
