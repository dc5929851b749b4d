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

    /// Starts nginx; returns once it accepts connections.
    init() throws {
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
                    access_log off;
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

    /// Ends nginx and removes the folder.
    func stop() {
        process.stop(grace: 10)
        try? FileManager.default.removeItem(atPath: folder)
    }
}
