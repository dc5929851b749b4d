import Foundation
import Glibc

/// A private nginx in a temporary folder `/tmp/offstage-nginx-XXXXXX`, for the transfer engine's tests and benchmark
/// (SPEC TR-4): the machine's nginx (Debian's `nginx-light`), in the foreground (`daemon off`) as a child of the
/// test, listening on 127.0.0.1 on a free port, with its configuration, pid file, logs and temporary files all in
/// the folder. ``stop()`` ends exactly its master process, by pid, and removes the folder.
///
/// Its locations, under ``root`` (files the test writes, served with ETag, Last-Modified and byte ranges):
/// - `/…`: the files as they are;
/// - `/norange/…`: the same files, ranges ignored (`max_ranges 0`: always a 200 with the whole file);
/// - `/flaky/…`: 503 with `Retry-After: 7` until ``flakyReadyFile`` exists, then the files;
/// - `/limited/…`: always 429 with `Retry-After: 30`;
/// - `/upload/…`: PUT stores the body as the file at that path under ``root`` (the dav module);
/// - `/moved/…`: a 302 to `/…`;
/// - `/deeper/…`: a 302 to `/deeper/x…`, without end (each URL another: a redirect limit, not a cycle).
///
/// With `tls` names, it also listens with TLS on a second port of 127.0.0.1 (``tlsPort``, ``tlsURL(_:)``), same
/// locations, with a self-signed certificate (``certificate``, PEM) for those names that the test makes with the
/// `openssl` command in the folder: no client trusts it unless told to.
///
/// Its access log (``requests()``) says, per request, the method, path, status, body bytes sent, and the Range and
/// If-Range headers received.
///
/// ```swift
/// let nginx = try NginxServer.start()
/// defer { nginx.stop() }
/// try data.write(to: URL(fileURLWithPath: nginx.root + "/big.bin"))
/// let url = nginx.url("/big.bin")   // http://127.0.0.1:PORT/big.bin
/// ```
public final class NginxServer: @unchecked Sendable {  // immutable after init
    /// nginx could not be found or started.
    public struct ServerError: Error, CustomStringConvertible {
        /// What went wrong, and the fix.
        public let description: String
        /// An error saying `description`.
        public init(_ description: String) { self.description = description }
    }

    /// One line of the access log.
    public struct Request: Equatable, Sendable, CustomStringConvertible {
        /// `GET`, `PUT`…
        public var method: String
        /// The path, without the query.
        public var path: String
        /// The status answered.
        public var status: Int
        /// The body bytes nginx sent (of the response; not counting the head).
        public var bodyBytesSent: Int64
        /// Every byte nginx sent of the response, head included.
        public var bytesSent: Int64 = 0
        /// The Range header received, or nil.
        public var range: String?
        /// The If-Range header received, or nil.
        public var ifRange: String?

        public var description: String {
            "\(method) \(path) → \(status), \(bodyBytesSent) body bytes; Range \(range ?? "-"), If-Range \(ifRange ?? "-")"
        }
    }

    /// The folder: configuration, logs, pid file, temporary paths, and by default the served files.
    public let folder: String
    /// Where the served files are.
    public let root: String
    /// The TCP port on 127.0.0.1.
    public let port: Int
    /// The TLS port on 127.0.0.1, when started with `tls` names.
    public let tlsPort: Int?
    /// The self-signed certificate (PEM) nginx presents on ``tlsPort``, when started with `tls` names.
    public var certificate: String? { tlsPort == nil ? nil : folder + "/cert.pem" }
    /// The master process (nginx in the foreground, a child of this process).
    public let process: SpawnedProcess
    /// The master's pid.
    public var pid: pid_t { process.pid }
    /// While this file is missing, `/flaky/…` answers 503.
    public var flakyReadyFile: String { folder + "/flaky-ready" }

    /// `http://127.0.0.1:PORT` + `path`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// `https://HOST:TLSPORT` + `path` (HOST 127.0.0.1 unless given); nil without TLS.
    public func tlsURL(_ path: String, host: String = "127.0.0.1") -> String? {
        tlsPort.map { "https://\(host):\($0)\(path)" }
    }

    /// The nginx program: the one on PATH, else Debian's `/usr/sbin/nginx`; throws naming the package when there is none.
    public static func executable() throws -> String {
        if let found = SpawnedProcess.executable("nginx") { return found }
        if FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx") { return "/usr/sbin/nginx" }
        throw ServerError("nginx is not installed (not on PATH nor at /usr/sbin/nginx); install the Debian package nginx-light (scripts/ensure-packages does).")
    }

    /// Starts nginx serving `root` (a fresh folder `www` inside its own when nil), with `extraConfig` added inside
    /// its `server` block (more locations); returns once it accepts connections. With `tls`, the subject alternative
    /// names of a self-signed certificate (`["DNS:localhost", "IP:127.0.0.1"]`), it also listens with TLS on
    /// ``tlsPort``.
    public static func start(root: String? = nil, extraConfig: String = "", tls: [String]? = nil) throws -> NginxServer {
        try NginxServer(root: root, extraConfig: extraConfig, tls: tls)
    }

    private init(root givenRoot: String?, extraConfig: String, tls: [String]?) throws {
        let nginx = try Self.executable()
        var template = Array("/tmp/offstage-nginx-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw ServerError("mkdtemp failed: errno \(errno)") }
        folder = String(cString: made)
        root = givenRoot ?? folder + "/www"
        do {
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: folder + "/temp", withIntermediateDirectories: true)
            if let tls { try Self.makeCertificate(names: tls, folder: folder) }
            (process, port, tlsPort) = try Self.launch(nginx, folder: folder, root: root, extraConfig: extraConfig, tls: tls != nil)
        } catch {
            try? FileManager.default.removeItem(atPath: folder)
            throw error
        }
    }

    /// A self-signed certificate and its key (`cert.pem`, `key.pem` in `folder`) for `names`, valid for a day, made
    /// with the `openssl` command.
    private static func makeCertificate(names: [String], folder: String) throws {
        guard let openssl = SpawnedProcess.executable("openssl") else {
            throw ServerError("openssl is not on PATH; install the Debian package openssl")
        }
        let common = names.first.map { String($0.drop { $0 != ":" }.dropFirst()) } ?? "offstage-test"
        let process = try SpawnedProcess(
            openssl,
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
                "-subj", "/CN=\(common)", "-addext", "subjectAltName=\(names.joined(separator: ","))",
                "-keyout", folder + "/key.pem", "-out", folder + "/cert.pem",
            ],
            output: folder + "/openssl.out", truncate: true)
        guard process.exitCode() == 0 else {
            let out = (try? String(contentsOfFile: folder + "/openssl.out", encoding: .utf8)) ?? ""
            throw ServerError("openssl could not make a certificate for \(names): \(out.suffix(1500))")
        }
    }

    /// Starts nginx on a free port (and a second for TLS), trying others when a port was taken meanwhile.
    private static func launch(
        _ nginx: String, folder: String, root: String, extraConfig: String, tls: Bool
    ) throws -> (SpawnedProcess, Int, Int?) {
        var lastError: (any Error)?
        for _ in 0..<3 {
            let port = try FreePort.loopback()
            var tlsPort = tls ? try FreePort.loopback() : nil
            if tlsPort == port { tlsPort = try FreePort.loopback() }
            let configuration = folder + "/nginx.conf"
            try configurationText(folder: folder, root: root, port: port, tlsPort: tlsPort, extraConfig: extraConfig)
                .write(toFile: configuration, atomically: true, encoding: .utf8)
            let process = try SpawnedProcess(
                nginx, ["-p", folder, "-c", configuration, "-e", folder + "/error.log"], output: folder + "/nginx.out", truncate: true)
            do {
                try waitUntilListening(port: port, process: process, folder: folder)
                if let tlsPort { try waitUntilListening(port: tlsPort, process: process, folder: folder) }
                return (process, port, tlsPort)
            } catch {
                process.terminate()
                lastError = error
            }
        }
        throw lastError ?? ServerError("nginx did not start")
    }

    /// Waits until `port` accepts a connection; throws with nginx's error log when the process exits first or 30 s
    /// pass.
    private static func waitUntilListening(port: Int, process: SpawnedProcess, folder: String) throws {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if canConnect(port: port) { return }
            guard process.isRunning else {
                let log = (try? String(contentsOfFile: folder + "/error.log", encoding: .utf8)) ?? ""
                let out = (try? String(contentsOfFile: folder + "/nginx.out", encoding: .utf8)) ?? ""
                throw ServerError("nginx exited at start: \((log + out).suffix(1500))")
            }
            usleep(10_000)
        }
        throw ServerError("nginx did not listen on 127.0.0.1:\(port) within 30 s")
    }

    private static func canConnect(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// The configuration: everything nginx writes stays in `folder`.
    static func configurationText(folder: String, root: String, port: Int, tlsPort: Int? = nil, extraConfig: String) -> String {
        let tls = tlsPort.map {
            """
            listen 127.0.0.1:\($0) ssl;
                    ssl_certificate \(folder)/cert.pem;
                    ssl_certificate_key \(folder)/key.pem;
            """
        } ?? ""
        // As root, the workers would run as `nobody` and could not enter the 0700 folder: they stay root.
        let user = getuid() == 0 ? "user root;\n" : ""
        return """
            \(user)daemon off;
            master_process on;
            worker_processes 1;
            pid \(folder)/nginx.pid;
            error_log \(folder)/error.log info;
            events { worker_connections 256; }
            http {
                log_format transfer '$request_method $uri $status $body_bytes_sent "$http_range" "$http_if_range" $bytes_sent';
                access_log \(folder)/access.log transfer;
                client_body_temp_path \(folder)/temp/body;
                proxy_temp_path \(folder)/temp/proxy;
                fastcgi_temp_path \(folder)/temp/fastcgi;
                uwsgi_temp_path \(folder)/temp/uwsgi;
                scgi_temp_path \(folder)/temp/scgi;
                default_type application/octet-stream;
                types { text/plain txt; application/json json; }
                sendfile on;
                tcp_nopush on;
                keepalive_timeout 60;
                server {
                    listen 127.0.0.1:\(port);
                    \(tls)
                    root \(root);
                    location / { }
                    location /norange/ {
                        alias \(root)/;
                        max_ranges 0;
                    }
                    location /flaky/ {
                        alias \(root)/;
                        if (!-f \(folder)/flaky-ready) {
                            add_header Retry-After 7 always;
                            return 503;
                        }
                    }
                    location /limited/ {
                        add_header Retry-After 30 always;
                        return 429;
                    }
                    location /upload/ {
                        alias \(root)/;
                        dav_methods PUT;
                        create_full_put_path on;
                        dav_access user:rw;
                        client_max_body_size 0;
                    }
                    location ~ ^/moved/(.*)$ { return 302 /$1; }
                    location ~ ^/deeper/(.*)$ { return 302 /deeper/x$1; }
            \(extraConfig)
                }
            }

            """
    }

    /// The requests nginx has logged so far, in order.
    public func requests() -> [Request] {
        let text = (try? String(contentsOfFile: folder + "/access.log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap(Self.parse)
    }

    /// The requests logged, once at least `count` are (nginx writes a line just after the response's last byte went
    /// out, so a client can be done a moment before); throws after 10 s.
    public func requests(atLeast count: Int) throws -> [Request] {
        let deadline = Date().addingTimeInterval(10)
        while true {
            let logged = requests()
            if logged.count >= count { return logged }
            guard Date() < deadline else {
                throw ServerError("nginx logged \(logged.count) requests, expected at least \(count): \(logged)")
            }
            usleep(5_000)
        }
    }

    /// `GET /a 206 5 "bytes=3-" "\"e\"" 250` → a request.
    static func parse(_ line: Substring) -> Request? {
        // method, path, status, bytes, then two quoted fields.
        let fields = line.split(separator: " ", maxSplits: 4)
        guard fields.count == 5, let status = Int(fields[2]), let bytes = Int64(fields[3]) else { return nil }
        // nginx escapes a quote or backslash inside a field (as \x22, \x5C): the quotes split the fields.
        let pieces = fields[4].split(separator: "\"", omittingEmptySubsequences: false)
        guard pieces.count >= 4 else { return nil }
        let quoted = [String(pieces[1]), String(pieces[3])]
        // nginx logs a missing header as "-".
        func header(_ value: String) -> String? {
            value == "-" ? nil : value.replacingOccurrences(of: "\\x22", with: "\"").replacingOccurrences(of: "\\x5C", with: "\\")
        }
        let whole = Int64(pieces.last?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0
        return Request(
            method: String(fields[0]), path: String(fields[1]), status: status, bodyBytesSent: bytes, bytesSent: whole,
            range: header(quoted[0]), ifRange: header(quoted[1]))
    }

    /// The error log so far (for a failing test's message).
    public var errorLog: String { (try? String(contentsOfFile: folder + "/error.log", encoding: .utf8)) ?? "" }

    /// Ends the master (SIGTERM: nginx's fast shutdown, which ends its worker; SIGKILL after 10 s), reaps it, and
    /// removes the folder.
    public func stop() {
        process.terminate(grace: 10)
        try? FileManager.default.removeItem(atPath: folder)
    }
}
