import Benchmark
import Foundation
import OffstageBenchKit

/// Figure (SPEC TR-6, §11: after a crash of the daemon a download fetches again at most one chunk, 1 MiB by default):
/// the bytes written again per kill -9, over many kill points of real downloads, against what nginx sent again.
///
/// A private nginx serves files of random bytes at 3 MiB/s (`limit_rate`, so kills land in the middle of a body,
/// checkpoints inside nginx's bursts). The probe app (`--transfers`) downloads each in its background session and is
/// sent home (suspended). While a download runs the daemon is killed with -9 and started again on the same state
/// folder, ``killsPerDownload`` times: each kill once the journal holds its planned point (spread evenly from 2 MiB to
/// 6 MiB before the end) and at least 1 MiB more than at the restart before it, plus a delay that turns over 0–297 ms,
/// so kills land at different points of a chunk. Per kill:
///
/// - *written again by the daemon*: its part file past the last journaled checkpoint, which it logs on resuming
///   (`offstage.transfer.refetched`);
/// - *sent again by nginx* (the baseline: what the network carried twice): from the access log, how far each cut
///   request got against where the next one resumed; it also counts what sat in the sockets' buffers at the kill.
///
/// Each file must come out byte-identical (SHA-256 against the served file), with exactly one completion event.
enum TransferKillBenchmark {
    static let downloads = 2
    static let killsPerDownload = 12
    static let fileBytes = 48 << 20
    static let chunk: Int64 = 1 << 20
    static let id = "bench.transfer.kill"

    struct Kill {
        var download: Int
        /// Bytes the journal held when the kill was decided.
        var journaled: Int64
        var delayMilliseconds: UInt64
    }

    static func run(_ benchmark: Benchmark) throws {
        let nginx = try NginxFixture(
            locations: "location /medium/ { limit_rate 3m; rewrite ^/medium/(.*)$ /$1 break; }", accessLog: true)
        defer { nginx.stop() }
        let daemon = try DaemonFixture(settings: ["suspendDelay": 0])
        defer { daemon.tearDown() }
        try daemon.start()
        let reportPath = daemon.root + "/report.sock"
        let reports = try UnixSocket.bindDatagram(path: reportPath)
        defer { close(reports) }
        let plan = daemon.root + "/plan"
        try daemon.install(try daemon.probeBundle(id: id, arguments: ["--transfers", plan, "--report", reportPath]))
        let appLog = { (try? String(contentsOfFile: daemon.stateDirectory + "/logs/\(id).log", encoding: .utf8)).map { String($0.suffix(2_000)) } ?? "" }

        var kills: [Kill] = []
        var digests: [(served: String, kept: String)] = []
        let loadAtStart = NotificationLatenessBenchmark.loadAverage()
        let started = MonotonicClock.now()
        for download in 0..<downloads {
            let name = "d\(download).bin"
            try TransferPlan.writeRandom(nginx.root + "/" + name, bytes: fileBytes)
            try TransferPlan.write(plan, generation: "g\(download)", ["download-keep \(nginx.url("/medium/" + name))"])
            try daemon.open(id)
            let created = try TransferPlan.await(reports, "created g\(download)", timeoutSeconds: 30) { appLog() }
            guard created.count == 1, let task = UInt64(created[0]) else { throw BenchError("the app created \(created)") }
            try daemon.home()

            var restartedAt: Int64 = 0
            for index in 0..<killsPerDownload {
                let journaled = try waitJournaled(daemon, task, atLeast: max(planned(index), restartedAt + chunk))
                guard journaled < Int64(fileBytes) - 2 * chunk else { break }
                let delay = UInt64((index * 7 + download * 3) % 10) * 33
                MonotonicClock.sleep(milliseconds: delay)
                daemon.crash()
                kills.append(Kill(download: download, journaled: journaled, delayMilliseconds: delay))
                try daemon.start()
                restartedAt = try daemon.transfers(app: id).first { $0.id == task }?.bytesDone ?? journaled
            }

            // Completed, handed to the app once, byte-identical.
            let deadline = MonotonicClock.now() + 120_000_000_000
            var lines: [Substring] = []
            while MonotonicClock.now() < deadline {
                TransferPlan.drain(reports)
                lines = daemon.completions(id).filter { $0.hasPrefix("completed \(task) ") || $0.hasPrefix("failed \(task) ") }
                if !lines.isEmpty { break }
                MonotonicClock.sleep(milliseconds: 50)
            }
            try daemon.waitFor(id, "suspended", timeout: 60)
            lines = daemon.completions(id).filter { $0.hasPrefix("completed \(task) ") || $0.hasPrefix("failed \(task) ") }
            let fields = lines.first?.split(separator: " ") ?? []
            guard lines.count == 1, fields.count == 4, fields[0] == "completed", fields[2] == "\(fileBytes)" else {
                throw BenchError("download \(task) of \(name): \(lines.count) completion events \(lines), expected one with \(fileBytes) bytes; the app said: \(appLog())")
            }
            let served = try TransferPlan.sha256(nginx.root + "/" + name)
            let kept = try TransferPlan.sha256(String(fields[3]))
            guard served == kept else { throw BenchError("download \(task) is not byte-identical: served \(served), kept \(kept)") }
            digests.append((served, kept))
            try? FileManager.default.removeItem(atPath: String(fields[3]))
        }
        let elapsed = Double(MonotonicClock.now() - started) / 1e9
        let loadAtEnd = NotificationLatenessBenchmark.loadAverage()

        let written = writtenAgain(daemon.daemonOutput)
        guard written.count == kills.count else {
            throw BenchError("\(kills.count) kills but \(written.count) resumes logged by the daemon: \(written)")
        }
        var sent: [Int64] = []
        for download in 0..<downloads {
            let requests = nginx.requests().filter { $0.uri.hasSuffix("/d\(download).bin") }
            let cut = kills.filter { $0.download == download }.count
            guard requests.count == cut + 1 else {
                throw BenchError("download \(download): \(cut) kills but \(requests.count) requests in nginx's log: \(requests)")
            }
            for (request, next) in zip(requests, requests.dropFirst()) {
                guard next.status == 206, next.rangeStart > 0 else { throw BenchError("download \(download) restarted instead of resuming: \(next)") }
                sent.append(request.rangeStart + request.bodyBytesSent - next.rangeStart)
            }
        }

        Report.record(benchmark, Metrics.transferKillWritten, written.map { UInt64(max(0, $0)) })
        Report.record(benchmark, Metrics.transferKillSent, sent.map { UInt64(max(0, $0)) })
        func summary(_ values: [Int64]) -> String {
            let sorted = values.sorted()
            let p50 = sorted.isEmpty ? 0 : sorted[sorted.count / 2]
            return "p50 \(p50)  max \(sorted.last ?? 0)  min \(sorted.first ?? 0)  (n=\(values.count)) bytes"
        }
        let maximum = written.max() ?? 0
        Report.heading("Transfer: bytes fetched again after kill -9 of the daemon, \(kills.count) kills over \(downloads) downloads of \(fileBytes >> 20) MiB")
        Report.line("nginx at 127.0.0.1:\(nginx.port), 3 MiB/s; checkpoint chunk \(chunk) bytes (the default); \(String(format: "%.1f", elapsed)) s; load average \(loadAtStart) at the start, \(loadAtEnd) at the end")
        Report.line("kill points (journaled MiB when decided, + delay ms): " + kills.map { String(format: "%.1f+%d", Double($0.journaled) / 1_048_576, $0.delayMilliseconds) }.joined(separator: ", "))
        Report.line("written again by the daemon, per kill:  " + summary(written))
        Report.line("baseline: sent again by nginx, per kill: " + summary(sent))
        Report.line("per kill, daemon / nginx: " + zip(written, sent).map { "\($0)/\($1)" }.joined(separator: " "))
        Report.line("every file byte-identical (SHA-256 \(digests.map { String($0.served.prefix(12)) }.joined(separator: ", ")) …), one completion event each")
        Report.line("§11 at most one chunk (\(chunk) bytes) written again per kill: \(Report.verdict(maximum <= chunk)) (max \(maximum))")
    }

    /// Where kill `index` of a download is due at the earliest: spread evenly from 2 MiB to 6 MiB before the end.
    static func planned(_ index: Int) -> Int64 {
        let first = 2 * chunk
        let last = Int64(fileBytes) - 6 * chunk
        return first + (last - first) * Int64(index) / Int64(killsPerDownload - 1)
    }

    /// Polls the transfers list until task `task` has at least `bytes` journaled; returns what it has.
    static func waitJournaled(_ daemon: DaemonFixture, _ task: UInt64, atLeast bytes: Int64) throws -> Int64 {
        let deadline = MonotonicClock.now() + 60_000_000_000
        var last: Int64 = -1
        while MonotonicClock.now() < deadline {
            if let transfer = try daemon.transfers(app: id).first(where: { $0.id == task }) {
                last = transfer.bytesDone
                if transfer.bytesDone >= bytes || transfer.state == "completed" { return transfer.bytesDone }
            }
            MonotonicClock.sleep(milliseconds: 10)
        }
        throw BenchError("transfer \(task) did not reach \(bytes) journaled bytes within 60 s (it has \(last))")
    }

    /// The bytes past the last journaled checkpoint each resume fetched again, from the daemon's log, in order.
    static func writtenAgain(_ log: String) -> [Int64] {
        log.split(separator: "\n").compactMap { line in
            guard line.contains("transfer resumes from its last checkpoint"),
                let field = line.split(separator: " ").first(where: { $0.hasPrefix("offstage.transfer.refetched=") })
            else { return nil }
            return Int64(field.dropFirst("offstage.transfer.refetched=".count))
        }
    }
}
