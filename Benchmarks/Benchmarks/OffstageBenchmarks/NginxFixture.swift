import Foundation
import OffstageBenchKit

/// A private nginx for the transfer benchmark: the machine's nginx (Debian's `nginx-light`) in the foreground, a
/// child of the benchmark, serving `root` with sendfile on 127.0.0.1 on a free port; its configuration, pid file,
/// logs and temporary paths in a fresh `/tmp/offstage-bench-nginx-XXXXXX` folder. ``stop()`` ends exactly its master
/// by pid (SIGTERM: nginx's fast shutdown, which ends its worker) and removes the folder.
final class NginxFixture: @unchecked Sendable {  // immutable after init
    let folder: String
    /// The served files.
    var root: String { folder + "/www" }
    let port: Int
    let process: ChildProcess

    /// `http://127.0.0.1:PORT` + `path`.
    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Starts nginx; returns once it accepts connections. `locations` goes into the server block (`location /slow/ {
    /// limit_rate 1m; … }`); with `accessLog` every request is logged to `access.log` as
    /// `METHOD URI STATUS BODY_BYTES_SENT "RANGE"` (see ``requests()``).
    init(locations: String = "", accessLog: Bool = false) throws {
        let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let nginx else { throw BenchError("nginx is not installed; install the Debian package nginx-light (scripts/ensure-packages does)") }
        var template = Array("/tmp/offstage-bench-nginx-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!).map { String(cString: $0) } }) else {
            throw SystemCallError("mkdtemp")
        }
        folder = made
        do {
            try FileManager.default.createDirectory(atPath: folder + "/www", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: folder + "/temp", withIntermediateDirectories: true)
            port = try LoopbackPort.free()
            // As root the worker would run as `nobody`, which cannot enter the 0700 folder: it stays root.
            let user = getuid() == 0 ? "user root;\n" : ""
            let configuration = """
                \(user)daemon off;
                worker_processes 1;
                pid \(folder)/nginx.pid;
                error_log \(folder)/error.log warn;
                events { worker_connections 64; }
                http {
                    log_format transfer '$request_method $uri $status $body_bytes_sent "$http_range"';
                    access_log \(accessLog ? "\(made)/access.log transfer" : "off");
                    client_body_temp_path \(folder)/temp/body;
                    proxy_temp_path \(folder)/temp/proxy;
                    fastcgi_temp_path \(folder)/temp/fastcgi;
                    uwsgi_temp_path \(folder)/temp/uwsgi;
                    scgi_temp_path \(folder)/temp/scgi;
                    default_type application/octet-stream;
                    sendfile on;
                    tcp_nopush on;
                    server {
                        listen 127.0.0.1:\(port);
                        root \(folder)/www;
                        \(locations)
                    }
                }

                """
            try configuration.write(toFile: folder + "/nginx.conf", atomically: true, encoding: .utf8)
            process = try ChildProcess(
                nginx, ["-p", folder, "-c", folder + "/nginx.conf", "-e", folder + "/error.log"], outputPath: folder + "/nginx.out")
            let deadline = MonotonicClock.now() + 30_000_000_000
            while !LoopbackPort.accepts(port) {
                guard process.isRunning, MonotonicClock.now() < deadline else {
                    process.stop()
                    let log = (try? String(contentsOfFile: folder + "/error.log", encoding: .utf8)) ?? ""
                    throw BenchError("nginx did not start on 127.0.0.1:\(port): \(log.suffix(1500))")
                }
                MonotonicClock.sleep(milliseconds: 10)
            }
        } catch {
            try? FileManager.default.removeItem(atPath: folder)
            throw error
        }
    }

    /// One line of the access log.
    struct Request {
        var uri: String
        var status: Int
        var bodyBytesSent: Int64
        /// The first byte of a `bytes=N-` range; 0 without one.
        var rangeStart: Int64
    }

    /// The requests logged so far, oldest first.
    func requests() -> [Request] {
        let text = (try? String(contentsOfFile: folder + "/access.log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", maxSplits: 4)
            guard fields.count == 5, let status = Int(fields[2]), let sent = Int64(fields[3]) else { return nil }
            let range = fields[4].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            var start: Int64 = 0
            if range.hasPrefix("bytes="), let dash = range.firstIndex(of: "-") {
                start = Int64(range[range.index(range.startIndex, offsetBy: 6)..<dash]) ?? 0
            }
            return Request(uri: String(fields[1]), status: status, bodyBytesSent: sent, rangeStart: start)
        }
    }

    /// Ends nginx and removes the folder.
    func stop() {
        process.stop(grace: 10)
        try? FileManager.default.removeItem(atPath: folder)
    }
}
