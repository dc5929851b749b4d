import Foundation
import Glibc

/// `transfer_fault_server.py`, beside this file, run with python3 in a temporary folder `/tmp/offstage-faults-XXXXXX`
/// on a free port of 127.0.0.1: an HTTP server that does on purpose what nginx cannot be made to do, for the
/// transfer engine's tests (SPEC TR-4). It serves the files under ``root``:
/// - `/drop/NAME?after=N`: the first GET of NAME announces the whole file but sends N body bytes and closes the
///   connection; later GETs are answered in full, ranges (with If-Range) honoured, with a strong ETag (not on a 206
///   with `&bare=1`);
/// - `/stall/NAME?after=N`: the head and N body bytes, then silence until the client goes away;
/// - `/busy?seconds=S`: 429 with Retry-After as an HTTP-date S seconds from now;
/// - `/upload/NAME`: POST stores the body as NAME under ``root`` and answers 201 with `stored N bytes\n`;
/// - `/echo/NAME`: POST stores the body as NAME under ``root`` and answers 200 with the same bytes as its body.
///
/// ``stop()`` ends exactly its process, by pid, and removes the folder.
public final class TransferFaultServer: @unchecked Sendable {  // immutable after init
    /// The server could not be started.
    public struct ServerError: Error, CustomStringConvertible {
        /// What went wrong, and the fix.
        public let description: String
    }

    /// One request the server logged.
    public struct Request: Equatable, Sendable {
        /// `GET`, `POST`.
        public var method: String
        /// The path, without the query.
        public var path: String
        /// The status answered.
        public var status: Int
        /// The body bytes sent.
        public var bodyBytesSent: Int64
        /// The Range header received, or nil.
        public var range: String?
        /// The If-Range header received, or nil.
        public var ifRange: String?
    }

    /// The server's script, beside this file.
    public static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("transfer_fault_server.py").path

    /// The folder: the served files (``root``), the port file, the request log, the server's output.
    public let folder: String
    /// Where the served (and uploaded) files are.
    public var root: String { folder + "/www" }
    /// The TCP port on 127.0.0.1.
    public let port: Int
    /// The python3 process.
    public let process: SpawnedProcess

    /// `http://127.0.0.1:PORT` + `path`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Starts the server; returns once it listens.
    public static func start() throws -> TransferFaultServer { try TransferFaultServer() }

    private init() throws {
        guard let python = SpawnedProcess.executable("python3") else {
            throw ServerError(description: "python3 is not on PATH; install the Debian package python3")
        }
        var template = Array("/tmp/offstage-faults-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw ServerError(description: "mkdtemp failed: errno \(errno)") }
        folder = String(cString: made)
        do {
            try FileManager.default.createDirectory(atPath: folder + "/www", withIntermediateDirectories: true)
            let portFile = folder + "/port"
            process = try SpawnedProcess(
                python, [Self.script, "--root", folder + "/www", "--port-file", portFile, "--log", folder + "/requests.log"],
                output: folder + "/server.out", truncate: true)
            port = try Self.waitForPort(portFile, process: process, folder: folder)
        } catch {
            try? FileManager.default.removeItem(atPath: folder)
            throw error
        }
    }

    /// The port the server wrote once it listened; throws with its output when it exits first or 30 s pass.
    private static func waitForPort(_ portFile: String, process: SpawnedProcess, folder: String) throws -> Int {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8), let port = Int(text) { return port }
            guard process.isRunning else {
                let output = (try? String(contentsOfFile: folder + "/server.out", encoding: .utf8)) ?? ""
                throw ServerError(description: "transfer_fault_server.py exited at start: \(output.suffix(1500))")
            }
            usleep(10_000)
        }
        process.terminate()
        throw ServerError(description: "transfer_fault_server.py did not listen within 30 s")
    }

    /// The requests logged so far, in order (each is logged before its connection is closed).
    public func requests() -> [Request] {
        let text = (try? String(contentsOfFile: folder + "/requests.log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", maxSplits: 5).map(String.init)
            guard fields.count == 6, let status = Int(fields[2]), let bytes = Int64(fields[3]) else { return nil }
            return Request(
                method: fields[0], path: fields[1], status: status, bodyBytesSent: bytes, range: fields[4] == "-" ? nil : fields[4],
                ifRange: fields[5] == "-" ? nil : fields[5])
        }
    }

    /// Ends the server (SIGTERM, then SIGKILL after 5 s), reaps it, and removes the folder.
    public func stop() {
        process.terminate()
        try? FileManager.default.removeItem(atPath: folder)
    }
}
