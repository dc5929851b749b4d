import Crypto
import Foundation
import OffstageProtocol
import TestProcesses
import Testing

/// Background transfers end to end (SPEC TR-1, TR-3): the real `Downloader` example on the real daemon downloads from
/// a real nginx, is suspended while the daemon goes on, and is woken for its session's events, which it handles once.
@Suite("Background transfers on the real daemon (SPEC TR-1, TR-3)", .serialized)
struct TransferIntegrationTests {
    static let downloader = "com.example.downloader"
    static let session = "com.example.downloader.session"

    /// nginx with `/slow/…`: the served files at 1 MiB/s, so that a download of a few MiB lasts seconds.
    static func startNginx() throws -> NginxServer {
        try NginxServer.start(extraConfig: "location /slow/ { limit_rate 1m; rewrite ^/slow/(.*)$ /$1 break; }")
    }

    /// Writes `size` random bytes as `name` in nginx's root; returns their SHA-256 (hex).
    static func serve(_ nginx: NginxServer, _ name: String, size: Int) throws -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<size / 8).flatMap { _ in withUnsafeBytes(of: generator.next() as UInt64) { Array($0) } }
        try Data(bytes).write(to: URL(fileURLWithPath: nginx.root + "/" + name))
        return hex(SHA256.hash(data: bytes))
    }

    static func sha256(ofFile path: String) throws -> String {
        hex(SHA256.hash(data: try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    static func hex(_ digest: SHA256.Digest) -> String { digest.map { String(format: "%02x", $0) }.joined() }

    /// The lines of the downloader's `completions.log`.
    static func completions(_ daemon: DaemonHarness) -> [Substring] {
        let text = (try? String(contentsOfFile: data(daemon) + "/completions.log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n")
    }

    static func data(_ daemon: DaemonHarness) -> String { daemon.stateDirectory + "/data/" + downloader }

    /// Installs the downloader pointed at `url`, opens it, and waits until it started its download.
    static func startDownload(_ daemon: DaemonHarness, _ url: String) throws {
        try daemon.install("Downloader", id: downloader, ["OffstageLinux": ["Environment": ["DOWNLOADER_URL": url]]])
        try daemon.ok("open", downloader)
        try daemon.waitUntil("the download started") { daemon.output(downloader).contains("download started: task ") }
    }

    /// Waits until the daemon logged that the app completed its run for the session's events.
    static func waitUntilEventsHandled(_ daemon: DaemonHarness) throws {
        try daemon.waitUntil("the app completed the run") {
            try daemon.log(downloader).contains { $0.message.contains("events of session '\(session)' handled after") }
        }
    }

    @Test("TR-1, TR-3: the downloader starts a 6 MiB download and is sent home (suspended); the download completes, the app is resumed for its session's events, moves the file (byte-identical) and completes the run; one completion event")
    func downloadWhileSuspended() throws {
        let nginx = try Self.startNginx()
        defer { nginx.stop() }
        let digest = try Self.serve(nginx, "big.bin", size: 6 << 20)
        try withDaemon { daemon in
            try Self.startDownload(daemon, nginx.url("/slow/big.bin"))
            try daemon.waitUntil("progress is printed in front", timeout: 5) {
                daemon.output(Self.downloader).contains("progress task ")
            }
            try daemon.ok("home")
            try daemon.waitFor(Self.downloader, "suspended")
            let suspendedAt = DaemonHarness.now()
            #expect(Self.completions(daemon).isEmpty, "the download is not done yet (1 MiB/s)")

            try daemon.waitUntil("the completion event is handled", timeout: 30) { !Self.completions(daemon).isEmpty }
            let log = try daemon.log(Self.downloader)
            let woken = try #require(
                log.first { $0.at >= suspendedAt && $0.message.contains("handle-events-for-background-session called") },
                "\(log.suffix(20).map(\.message))")
            #expect(woken.message.contains("(resumed)") || woken.message.contains("launched into the background"))
            try Self.waitUntilEventsHandled(daemon)
            try daemon.waitFor(Self.downloader, "suspended")

            let output = daemon.output(Self.downloader)
            #expect(output.contains("handle-events-for-background-session \(Self.session)"))
            #expect(output.contains("did-finish-events \(Self.session)"))
            #expect(output.contains("sha256=\(digest)"), "the app printed the served file's digest")
            #expect(try daemon.callbacks(Self.downloader, since: suspendedAt).contains("transfer-events"))
            let lines = Self.completions(daemon)
            #expect(lines.count == 1, "\(lines)")
            #expect(lines.first?.contains("completed Downloads/big.bin \(6 << 20) bytes sha256=\(digest)") == true, "\(lines)")
            let moved = Self.data(daemon) + "/Downloads/big.bin"
            #expect(try Self.sha256(ofFile: moved) == digest, "byte-identical to the served file")
            #expect(
                try Data(contentsOf: URL(fileURLWithPath: moved)) == Data(contentsOf: URL(fileURLWithPath: nginx.root + "/big.bin")))
            let left = (try? FileManager.default.contentsOfDirectory(atPath: Self.data(daemon) + "/Transfers")) ?? []
            #expect(left.isEmpty, "nothing left where the file was handed over: \(left)")
            #expect(
                nginx.requests().filter { $0.path == "/slow/big.bin" }.allSatisfy { $0.status == 200 || $0.status == 206 })
        }
    }

    @Test("TR-3, TR-6: the daemon restarts (its apps terminated) in the middle of a download; it resumes the download, then launches the downloader into the background with reason transfer-events, which handles the event once")
    func launchedForEvents() throws {
        let nginx = try Self.startNginx()
        defer { nginx.stop() }
        let digest = try Self.serve(nginx, "big.bin", size: 4 << 20)
        try withDaemon { daemon in
            try Self.startDownload(daemon, nginx.url("/slow/big.bin"))
            daemon.stop()
            try daemon.start()
            #expect(try daemon.app(Self.downloader).state == "notRunning")
            try daemon.waitUntil("the completion event is handled", timeout: 30) { !Self.completions(daemon).isEmpty }
            try Self.waitUntilEventsHandled(daemon)
            let output = daemon.output(Self.downloader)
            #expect(output.contains("did-finish-launching (transfer-events)"), "\(output)")
            #expect(output.contains("handle-events-for-background-session \(Self.session)"))
            #expect(Self.completions(daemon).count == 1)
            #expect(try Self.sha256(ofFile: Self.data(daemon) + "/Downloads/big.bin") == digest)
        }
    }

    /// The downloader's task as `offstage transfers --json` shows it.
    static func transfer(_ daemon: DaemonHarness) throws -> [String: Any]? {
        let text = try daemon.ok("transfers", downloader, "--json")
        let list = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]]
        return list?.first
    }

    @Test("TR-6, §11: kill -9 of the daemon at four points of a 24 MiB download: it resumes each time from its last checkpoint (at most one 1 MiB chunk fetched again), the file is byte-identical, and the app hears of it once")
    func survivesKillNine() throws {
        // 3 MiB/s, so that checkpoints (every MiB) fall inside nginx's bursts, not at their ends.
        let nginx = try NginxServer.start(extraConfig: "location /medium/ { limit_rate 3m; rewrite ^/medium/(.*)$ /$1 break; }")
        defer { nginx.stop() }
        let size = 24 << 20
        let digest = try Self.serve(nginx, "big.bin", size: size)
        try withDaemon { daemon in
            try Self.startDownload(daemon, nginx.url("/medium/big.bin"))
            try daemon.ok("home")
            // Each kill comes a different time after a checkpoint, so it cuts the attempt at a different point of a chunk.
            for (threshold, after) in [(3 << 20, 0.0), (8 << 20, 0.15), (13 << 20, 0.3), (18 << 20, 0.55)] {
                try daemon.waitUntil("\(threshold) bytes are journaled", timeout: 30) {
                    ((try Self.transfer(daemon))?["bytesDone"] as? Int ?? 0) >= threshold
                }
                Thread.sleep(forTimeInterval: after)
                daemon.crash()
                try daemon.start()
            }
            try daemon.waitUntil("the completion event is handled", timeout: 60) { !Self.completions(daemon).isEmpty }
            try Self.waitUntilEventsHandled(daemon)
            #expect(Self.completions(daemon).count == 1, "one completion event: \(Self.completions(daemon))")
            #expect(try Self.sha256(ofFile: Self.data(daemon) + "/Downloads/big.bin") == digest, "byte-identical")
            // What the server sent: each attempt cut by a kill ended somewhere; the next one resumed from the last
            // checkpoint. The difference is what was fetched again (with what was in flight on the socket).
            let requests = try nginx.requests(atLeast: 5).filter { $0.path.hasSuffix("/big.bin") }
            #expect(requests.count == 5, "\(requests)")
            var refetched: [Int64] = []
            for (cut, next) in zip(requests, requests.dropFirst()) {
                let start = Self.rangeStart(cut.range)
                let resumedAt = Self.rangeStart(next.range)
                #expect(next.status == 206 && resumedAt > 0, "resumed, not restarted: \(next)")
                refetched.append(start + cut.bodyBytesSent - resumedAt)
            }
            let total = requests.reduce(0) { $0 + $1.bodyBytesSent }
            #expect(total - Int64(size) == refetched.reduce(0, +), "\(requests)")
            // What the daemon had written after its last journaled checkpoint, as it logged when it resumed: one
            // chunk (1 MiB) at most, always: the download waits for the journal rather than run further ahead.
            let written = Self.refetchedByTheDaemon(daemon.daemonOutput)
            #expect(written.count == 4, "one resume per kill: \(written)")
            for bytes in written { #expect(bytes <= 1 << 20, "written again after a kill: \(written)") }
            // The server sent besides what the kernel held in the sockets' buffers when the daemon died, bytes the
            // daemon never read: no more than both buffers can hold.
            let buffers = Self.socketBufferLimit()
            for (sent, again) in zip(refetched, written) {
                #expect(sent >= again && sent - again <= buffers, "sent again \(refetched), written again \(written), buffers \(buffers)")
            }
            print("transfer kill -9: bytes written again per kill \(written); sent again by nginx \(refetched); total sent \(total) for \(size)")
        }
    }

    /// The bytes written after the last journaled checkpoint that each resume fetched again, from the daemon's log.
    static func refetchedByTheDaemon(_ log: String) -> [Int64] {
        log.split(separator: "\n").compactMap { line in
            guard line.contains("transfer resumes from its last checkpoint"),
                let field = line.split(separator: " ").first(where: { $0.hasPrefix("offstage.transfer.refetched=") })
            else { return nil }
            return Int64(field.dropFirst("offstage.transfer.refetched=".count))
        }
    }

    /// The most a TCP connection's send and receive buffers hold together on this machine (tcp_wmem's and tcp_rmem's
    /// maximum).
    static func socketBufferLimit() -> Int64 {
        func maximum(_ name: String) -> Int64 {
            let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/" + name, encoding: .utf8)) ?? ""
            return text.split(whereSeparator: \.isWhitespace).last.flatMap { Int64($0) } ?? 0
        }
        return maximum("tcp_wmem") + maximum("tcp_rmem")
    }

    /// The first byte of a `bytes=N-` range; 0 without one.
    static func rangeStart(_ range: String?) -> Int64 {
        guard let range, range.hasPrefix("bytes="), let dash = range.firstIndex(of: "-") else { return 0 }
        return Int64(range[range.index(range.startIndex, offsetBy: 6)..<dash]) ?? 0
    }
}
