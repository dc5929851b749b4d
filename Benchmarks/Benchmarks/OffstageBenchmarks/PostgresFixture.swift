import Foundation
import OffstageBenchKit

/// A private PostgreSQL for the push cluster benchmarks: the machine's `initdb` and `pg_ctl` make a cluster in a
/// fresh `/tmp/offstage-bench-pg-XXXXXX` folder, with trust authentication for the role `offstage`, listening on
/// 127.0.0.1 on a free port. The server keeps PostgreSQL's durability defaults (`fsync` on, `synchronous_commit` on)
/// unless `settings` says otherwise. ``stop()`` ends exactly its postmaster, by the pid in `postmaster.pid`, and
/// removes the folder.
///
/// `initdb` refuses to run as root, so as root both programs run as the user `postgres` (`runuser`), in a folder that
/// user owns; Debian's `postgresql` package makes that user.
final class PostgresFixture: @unchecked Sendable {  // immutable after init
    static let user = "offstage"

    let folder: String
    let port: Int
    let pid: pid_t
    private let binaries: String

    /// Makes the cluster and starts it with `settings` (`-c name=value`); returns once it accepts connections.
    init(settings: [String: String] = [:]) throws {
        binaries = try Self.binaryFolder()
        var template = Array("/tmp/offstage-bench-pg-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!).map { String(cString: $0) } }) else {
            throw SystemCallError("mkdtemp")
        }
        folder = made
        do {
            if getuid() == 0 {
                guard let account = getpwnam("postgres") else {
                    throw BenchError("as root, PostgreSQL runs as the user postgres, which does not exist; install the Debian package postgresql")
                }
                guard chown(folder, account.pointee.pw_uid, account.pointee.pw_gid) == 0 else { throw SystemCallError("chown \(folder)") }
            }
            try Self.run(binaries + "/initdb", ["-D", folder + "/data", "-A", "trust", "-U", Self.user, "-E", "UTF8"], in: folder)
            port = try LoopbackPort.free()
            let options = (["-p \(port)", "-c listen_addresses=127.0.0.1", "-c unix_socket_directories=\(folder)"]
                + settings.sorted { $0.key < $1.key }.map { "-c \($0.key)=\($0.value)" }).joined(separator: " ")
            try Self.run(
                binaries + "/pg_ctl", ["-D", folder + "/data", "-l", folder + "/server.log", "-w", "-t", "60", "-o", options, "start"],
                in: folder)
            let text = (try? String(contentsOfFile: folder + "/data/postmaster.pid", encoding: .utf8)) ?? ""
            guard let pid = text.split(separator: "\n").first.flatMap({ pid_t($0.trimmingCharacters(in: .whitespaces)) }) else {
                throw BenchError("pg_ctl started a server but \(folder)/data/postmaster.pid names no pid")
            }
            self.pid = pid
        } catch {
            try? FileManager.default.removeItem(atPath: folder)
            throw error
        }
    }

    /// Creates database `name` and returns its URL.
    func createDatabase(_ name: String) throws -> String {
        _ = try sql("CREATE DATABASE \(name)")
        return "postgres://\(Self.user)@127.0.0.1:\(port)/\(name)"
    }

    /// Runs `statement` with `psql` in the `postgres` database and returns what it printed (unaligned, no headers).
    @discardableResult
    func sql(_ statement: String) throws -> String {
        try Self.run(
            binaries + "/psql", ["-h", "127.0.0.1", "-p", String(port), "-U", Self.user, "-d", "postgres", "-Atc", statement],
            in: folder, asPostgres: false
        ).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// CPU time of the server so far, ns: the postmaster, its live children (the backends, the WAL writer, the
    /// checkpointer…) and the children it has reaped.
    func cpu() -> UInt64 {
        var total = Self.stat(pid).map { $0.own + $0.reaped } ?? 0
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let child = pid_t(entry), let stat = Self.stat(child), stat.parent == pid else { continue }
            total += stat.own
        }
        return total
    }

    /// Ends the postmaster (SIGINT: fast shutdown; SIGKILL after 30 s), waits until it is gone, removes the folder.
    func stop() {
        kill(pid, SIGINT)
        let deadline = MonotonicClock.now() + 30_000_000_000
        while Self.isAlive(pid), MonotonicClock.now() < deadline { MonotonicClock.sleep(milliseconds: 10) }
        if Self.isAlive(pid) {
            kill(pid, SIGKILL)
            while Self.isAlive(pid) { MonotonicClock.sleep(milliseconds: 10) }
        }
        try? FileManager.default.removeItem(atPath: folder)
    }

    // MARK: Helpers

    /// The folder holding `initdb`, `pg_ctl` and `psql`: the newest under /usr/lib/postgresql.
    private static func binaryFolder() throws -> String {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted(by: >)
        for version in versions where FileManager.default.isExecutableFile(atPath: "\(root)/\(version)/bin/initdb") {
            return "\(root)/\(version)/bin"
        }
        throw BenchError("PostgreSQL is not installed (no \(root)/VERSION/bin/initdb); install the Debian package postgresql")
    }

    /// Runs `program` to its end (as postgres when we are root and `asPostgres`) and returns its output; throws
    /// with it when the program fails.
    @discardableResult
    private static func run(_ program: String, _ arguments: [String], in folder: String, asPostgres: Bool = true) throws -> String {
        let output = folder + "/command.out"
        try? FileManager.default.removeItem(atPath: output)
        let asUser = getuid() == 0 && asPostgres
        let process = try ChildProcess(
            asUser ? "/usr/sbin/runuser" : program, (asUser ? ["-u", "postgres", "--", program] : []) + arguments, outputPath: output)
        process.wait(seconds: 120)
        let said = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard process.exitCode == 0 else {
            throw BenchError("\((program as NSString).lastPathComponent) failed (\(process.exitCode.map(String.init) ?? "still running")): \(said.suffix(1500))")
        }
        return said
    }

    /// From /proc/PID/stat: the parent, the process's own CPU and its reaped children's, ns.
    private static func stat(_ pid: pid_t) -> (parent: pid_t, own: UInt64, reaped: UInt64)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        // After the name: state 0, ppid 1, utime 11, stime 12, cutime 13, cstime 14.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 14, let parent = pid_t(fields[1]) else { return nil }
        let ticks = fields[11...14].map { UInt64($0) ?? 0 }
        let scale = 1_000_000_000 / UInt64(sysconf(Int32(_SC_CLK_TCK)))
        return (parent, (ticks[0] + ticks[1]) * scale, (ticks[2] + ticks[3]) * scale)
    }

    /// Whether `pid` still runs (a zombie does not: the postmaster is not the benchmark's child).
    private static func isAlive(_ pid: pid_t) -> Bool {
        guard kill(pid, 0) == 0 else { return false }
        return ProcReader.state(pid).map { $0 != "Z" } ?? false
    }
}
