import Foundation
import OffstageDaemon
import Testing

/// A bare Unix-socket client that writes whatever bytes a test wants (garbage included) and reads one reply.
struct RawClient {
    let fd: Int32

    init(path: String) throws {
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
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
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
        let pid = try #require(try app(id).pid)
        let lines = try String(contentsOfFile: "/proc/\(pid)/cgroup", encoding: .utf8).split(separator: "\n")
        guard let line = lines.first(where: { $0.hasPrefix("0::") }), let unified = CgroupMounts.current().unified?.mountPoint else {
            throw HarnessError("no cgroup v2 membership for \(id)")
        }
        let cgroup = unified + String(line.dropFirst(3))
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
}

