import Foundation
import OffstageDaemon
import Testing

/// A bare Unix-socket client that writes whatever bytes a test wants (garbage included) and reads one reply.
struct RawClient {
    let fd: Int32

    /// Connects to `path`; a reply not come within `timeout` seconds counts as none.
    init(path: String, timeout: Int = 10) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else { throw HarnessError("connect \(path): errno \(errno)") }
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { return }
            offset += written
        }
    }

    func send(_ text: String) { send(Array(text.utf8) + [0]) }

    /// One NUL-terminated reply as a JSON object, or nil if the connection closed first.
    func receive() -> [String: Any]? {
        var buffer: [UInt8] = []
        var byte: UInt8 = 0
        while recv(fd, &byte, 1, 0) == 1 {
            if byte == 0 { return (try? JSONSerialization.jsonObject(with: Data(buffer))) as? [String: Any] }
            buffer.append(byte)
        }
        return nil
    }

    /// Whether a reply (or the end of the connection) is waiting to be read now, without waiting for one.
    func hasReply() -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) == 1
    }

    /// Whether the daemon closed the connection (a read returns end of file).
    func isClosedByPeer() -> Bool {
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, 0) == 0
    }

    func close() { _ = Glibc.close(fd) }

    /// Sends a call and returns the reply.
    func call(_ method: String, _ parameters: [String: Any] = [:]) throws -> [String: Any] {
        let data = try JSONSerialization.data(withJSONObject: ["method": method, "parameters": parameters])
        send(Array(data) + [0])
        guard let reply = receive() else { throw HarnessError("no reply to \(method)") }
        return reply
    }
}

extension DaemonHarness {
    /// Runs a Varlink call from a process inside app `id`'s cgroup, so the daemon sees it as that app.
    /// Python's standard library is the client: nothing of this project runs in that process.
    func callAsApp(_ id: String, _ calls: [(String, [String: Any])]) throws -> [[String: Any]] {
        let cgroup = try appCgroup(id)
        let script = """
            import json, socket, sys
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
            out = []
            for method, params in json.loads(sys.argv[2]):
                s.sendall(json.dumps({"method": method, "parameters": params}).encode() + b"\\0")
                buf = b""
                while not buf.endswith(b"\\0"):
                    chunk = s.recv(65536)
                    if not chunk: break
                    buf += chunk
                out.append(json.loads(buf[:-1]))
            print(json.dumps(out))
            """
        let payload = String(decoding: try JSONSerialization.data(withJSONObject: calls.map { [$0.0, $0.1] }), as: UTF8.self)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "echo $$ > \"$0\" && exec python3 -c \"$1\" \"$2\" \"$3\"", cgroup + "/cgroup.procs", script, socket, payload]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        track(process.processIdentifier)
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard let replies = try JSONSerialization.jsonObject(with: data) as? [[String: Any]] else {
            throw HarnessError("the app-side client printed \(String(decoding: data, as: UTF8.self))")
        }
        return replies
    }

    /// The cgroup v2 folder of app `id`'s process: a process that writes its pid to `cgroup.procs` there is the app's.
    func appCgroup(_ id: String) throws -> String {
        let pid = try #require(try app(id).pid)
        let lines = try String(contentsOfFile: "/proc/\(pid)/cgroup", encoding: .utf8).split(separator: "\n")
        guard let line = lines.first(where: { $0.hasPrefix("0::") }), let unified = CgroupMounts.current().unified?.mountPoint
        else {
            throw HarnessError("no cgroup v2 membership for \(id)")
        }
        return unified + String(line.dropFirst(3))
    }
}

/// A client inside an app's cgroup that stays running: each raw message written to it goes over a new connection,
/// so that the daemon sees the app as the caller and a message that makes it close the connection costs nothing
/// more. Python's standard library is the client; the test process stays outside the app's cgroup.
final class AppSideClient {
    private let process: Process
    private let input: FileHandle
    private let output: Int32

    /// Starts the client in the cgroup of app `id`'s process; it waits at most `timeout` seconds for each reply.
    init(_ daemon: DaemonHarness, app id: String, timeout: Double = 5) throws {
        let cgroup = try daemon.appCgroup(id)
        let script = """
            import json, socket, sys
            for line in sys.stdin:
                raw = json.loads(line).encode()
                s = socket.socket(socket.AF_UNIX); s.settimeout(float(sys.argv[2])); s.connect(sys.argv[1])
                buf = b""
                try:
                    s.sendall(raw + b"\\0")
                except OSError:
                    pass
                try:
                    while not buf.endswith(b"\\0"):
                        chunk = s.recv(65536)
                        if not chunk: break
                        buf += chunk
                except OSError:
                    pass
                s.close()
                print(json.dumps(buf[:-1].decode() if buf.endswith(b"\\0") else None), flush=True)
            """
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c", "echo $$ > \"$0\" && exec python3 -c \"$1\" \"$2\" \"$3\"",
            cgroup + "/cgroup.procs", script, daemon.socket, String(timeout),
        ]
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        daemon.track(process.processIdentifier)
        input = stdin.fileHandleForWriting
        output = stdout.fileHandleForReading.fileDescriptor
    }

    /// Sends `raw` (without its NUL) on a new connection; the reply's text, or nil if none came.
    func call(raw: String) throws -> String? {
        let line = try JSONSerialization.data(withJSONObject: raw, options: .fragmentsAllowed) + Data("\n".utf8)
        try input.write(contentsOf: line)
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(output, &byte, 1)
            guard count == 1 else { throw HarnessError("the app-side client ended") }
            if byte == UInt8(ascii: "\n") { break }
            bytes.append(byte)
        }
        return try JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed) as? String
    }

    /// Ends the client (its pid is also in the harness's list).
    func close() {
        try? input.close()
        process.waitUntilExit()
    }
}
