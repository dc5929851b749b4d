import Foundation

/// gpsfake feeding a real gpsd with a committed NMEA log, on a port that was free a moment ago. Started and ended by
/// pid: `stop()` ends gpsfake and the gpsd it started (its children, read from /proc), never anything by name.
final class GpsFake {
    static let gpsfake = "/usr/bin/gpsfake"
    static let gpsd = "/usr/sbin/gpsd"
    /// The committed NMEA log.
    static let walk = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Data/location/walk.nmea").path

    /// Why gpsfake cannot run here, or nil when it can.
    static var unavailable: String? {
        FileManager.default.isExecutableFile(atPath: gpsfake) && FileManager.default.isExecutableFile(atPath: gpsd)
            ? nil : "gpsd or gpsfake is not installed (Debian packages gpsd and gpsd-clients)"
    }

    let process = Process()
    let port: Int
    let log: URL
    private var children: Set<Int32> = []

    /// Starts gpsfake on `log`, replaying every `cycle` seconds, once.
    init(folder: URL, cycle: Double = 0.2) throws {
        port = try Self.freePort()
        log = folder.appendingPathComponent("gpsfake.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: Self.gpsfake)
        process.arguments = ["-P", String(port), "-1", "-c", String(cycle), "-q", Self.walk]
        let output = try FileHandle(forWritingTo: log)
        process.standardOutput = output
        process.standardError = output
        try process.run()
    }

    /// What gpsfake said, for a skip message.
    var said: String { String(((try? String(contentsOf: log, encoding: .utf8)) ?? "").suffix(500)) }

    /// Remembers gpsfake's children (its gpsd) while they can still be found under it.
    func noteChildren() { children.formUnion(Self.children(of: process.processIdentifier)) }

    /// Ends gpsfake and its gpsd, by pid.
    func stop() {
        let pid = process.processIdentifier
        noteChildren()
        // gpsd first, while gpsfake is there to reap it (else it would be left a zombie under init).
        for child in children {
            for signal in [SIGTERM, SIGKILL] {
                guard Self.alive(child) else { break }
                kill(child, signal)
                for _ in 0..<10 where Self.alive(child) { usleep(100_000) }
            }
        }
        // Foundation's Process passes on the test runner's signal mask, in which SIGTERM may be blocked: SIGKILL
        // follows when a process is still there a second later.
        for signal in [SIGTERM, SIGKILL] where process.isRunning {
            kill(pid, signal)
            for _ in 0..<10 where process.isRunning { usleep(100_000) }
        }
        if !process.isRunning { process.waitUntilExit() }
        // gpsfake leaves its control socket behind when it does not exit by itself.
        try? FileManager.default.removeItem(atPath: "/tmp/gpsfake-\(pid).sock")
    }

    /// Whether `pid` is still a process that has not been reaped or become a zombie.
    static func alive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(close, offsetBy: 2)] != "Z"
    }

    /// The pids whose parent is `parent`, read from /proc.
    static func children(of parent: Int32) -> Set<Int32> {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        var found: Set<Int32> = []
        for entry in entries {
            guard let pid = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, Int32(fields[1]) == parent { found.insert(pid) }
        }
        return found
    }

    /// A TCP port on 127.0.0.1 that the kernel just handed out and that is free again.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw HarnessError("cannot find a free port: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
