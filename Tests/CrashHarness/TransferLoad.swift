import Foundation
import OffstageProtocol
import OffstageSimulator
import TestProcesses

/// Background downloads in the crash harness (SPEC TR-1..6): two real Downloader apps fetch files of random bytes
/// from a private nginx, slowed so that each download spans several kills. Now and then the harness opens one (after
/// checking and removing the file its last download left), which starts a new download, and goes home; the daemon
/// goes on downloading while the app is suspended, is killed with -9 wherever the cycle ends, and resumes.
///
/// What is checked (``checkTransfers(final:)``): every task the daemon listed ends in exactly one completion line in
/// its app's `completions.log` (the app's delegate was told once: no event lost, none delivered twice), completed,
/// with the served file's size; every file the app kept is byte-identical to the served one; each resume wrote again
/// at most one checkpoint's worth of bytes (§11), as the daemon logs it; and at the end nothing is left in the daemon's
/// transfer folders.
struct TransferLedger {
    /// The ids of the tasks the daemon listed, by app.
    var seen: [String: Set<UInt64>] = [:]
    /// How many completion lines each task has, by app.
    var completions: [String: [UInt64: Int]] = [:]
    /// Figures for the summary.
    var figures = TransferFigures()
}

/// What the transfers of a run did.
struct TransferFigures {
    /// Times a downloader was opened (each starts a download unless one is in flight).
    var opens = 0
    /// Downloads the apps were told completed.
    var completed = 0
    /// Kept files compared byte for byte with the served one.
    var verified = 0
    /// Bytes written again after each resume, as the daemon logged them.
    var refetched: [Int64] = []
    /// Completion lines beyond the first of a task.
    var duplicated = 0
    /// Tasks listed that never reached their app.
    var lost = 0

    var summary: String {
        let most = refetched.max() ?? 0
        return "transfers: \(opens) opens of a downloader, \(completed) downloads completed, \(verified) files byte-identical, "
            + "\(refetched.count) resumes after a kill (at most \(most) bytes written again, of \(CrashRun.transferChunk) allowed); "
            + "lost: \(lost), duplicated: \(duplicated)"
    }
}

extension HarnessApp {
    /// The downloaders and the files they fetch.
    static let downloads: [(id: String, file: String, size: Int)] = [
        ("com.crash.download1", "one.bin", 5 << 20 + 12_345), ("com.crash.download2", "two.bin", 7 << 20 + 777),
    ]

    /// The Downloader example, fetching `url` whenever it is opened and has no download in flight and no file.
    static func downloader(_ id: String, url: String) -> HarnessApp {
        HarnessApp(id: id, example: "Downloader", manifest: ["OffstageLinux": ["Environment": ["DOWNLOADER_URL": url]]])
    }
}

extension CrashRun {
    /// A checkpoint's worth of bytes: the most a resume may write again (§11; the daemon's default chunk).
    static let transferChunk: Int64 = 1 << 20

    /// Starts nginx with the served files, and installs the downloaders (at the first start).
    func setUpTransfers() throws {
        // 2 MiB/s: a download spans several cycles, so kills land in the middle of bodies.
        let server = try NginxServer.start(extraConfig: "location /slow/ { limit_rate 2m; rewrite ^/slow/(.*)$ /$1 break; }")
        nginx = server
        for download in HarnessApp.downloads {
            var random = SeededGenerator(seed: report.seed &+ UInt64(download.size))
            let bytes = (0..<download.size).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            try Data(bytes).write(to: URL(fileURLWithPath: server.root + "/" + download.file))
            let app = HarnessApp.downloader(download.id, url: server.url("/slow/" + download.file))
            try makeBundle(app)
            let installed = try daemon.cli(["install", bundlePath(app)])
            guard installed.status == 0 else { throw HarnessError("install \(download.id): \(installed.stderr)") }
        }
    }

    /// Now and then opens a downloader, which starts a download unless one is in flight, and goes home.
    func driveTransfers() throws {
        guard transferRandom.chance(0.4) else { return }
        let download = HarnessApp.downloads[transferRandom.index(below: HarnessApp.downloads.count)]
        let kept = dataFolder(download.id) + "/Downloads/" + download.file
        if FileManager.default.fileExists(atPath: kept) {
            // The last download's file is checked, then removed, so that opening the app downloads it again.
            if try compareWithServed(kept, download.file) { transfers.figures.verified += 1 }
            try FileManager.default.removeItem(atPath: kept)
        }
        if try daemon.cli(["open", download.id]).status == 0 { transfers.figures.opens += 1 }
        // Long enough for the app to start its download while in front, sometimes not.
        usleep(UInt32(transferRandom.uniform(0.05, 0.4) * 1_000_000))
        _ = try daemon.cli(["home"])
    }

    /// Checks the transfers against what the apps were told (see ``TransferLedger``). With `final`, first lets every
    /// listed task finish and reach its app (opening the apps, which hands them their events), then requires that.
    func checkTransfers(final: Bool) throws {
        if final { try settleTransfers(seconds: 120) }
        for message in try listTransfers() where HarnessApp.downloads.contains(where: { $0.id == message.app }) {
            transfers.seen[message.app, default: []].insert(message.id)
            if message.state == "failed" {
                violation("transfer \(message.id) of \(message.app) failed: \(message.failure.map { "\($0)" } ?? message.lastError ?? "?")")
            }
            if let expected = message.bytesExpected, message.bytesDone > expected {
                violation("transfer \(message.id) of \(message.app) has \(message.bytesDone) of \(expected) bytes")
            }
        }
        readCompletions()
        checkRefetched()
        guard final else { return }
        for download in HarnessApp.downloads {
            let told = transfers.completions[download.id] ?? [:]
            for id in (transfers.seen[download.id] ?? []).sorted() where told[id] == nil {
                transfers.figures.lost += 1
                violation("transfer \(id) of \(download.id) never reached its app")
            }
            let leftovers = files(in: daemon.state + "/transfers/" + download.id) + files(in: dataFolder(download.id) + "/Transfers")
            if !leftovers.isEmpty { violation("files left behind for \(download.id) after every event was handled: \(leftovers)") }
        }
    }

    /// Waits until no listed task of a downloader is unfinished or unhandled, opening the apps now and then so they
    /// hear of finished ones (as the user would).
    private func settleTransfers(seconds: Double) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let pending = try listTransfers().filter { message in HarnessApp.downloads.contains { $0.id == message.app } }
            for message in pending { transfers.seen[message.app, default: []].insert(message.id) }
            if pending.isEmpty { return }
            for app in Set(pending.filter { $0.state == "completed" || $0.state == "failed" }.map(\.app)).sorted() {
                _ = try daemon.cli(["open", app])
                usleep(300_000)
                _ = try daemon.cli(["home"])
            }
            usleep(500_000)
        }
        violation("transfers still listed after \(Int(seconds)) s: \(try listTransfers().map { "\($0.app) \($0.id) \($0.state)" })")
    }

    /// Reads each downloader's completion lines: a task told twice, or told it failed, is a violation; a completed one
    /// must have the served file's size.
    private func readCompletions() {
        for download in HarnessApp.downloads {
            let before = transfers.completions[download.id] ?? [:]
            let text = (try? String(contentsOfFile: dataFolder(download.id) + "/completions.log", encoding: .utf8)) ?? ""
            var counts: [UInt64: Int] = [:]
            for line in text.split(separator: "\n") {
                // "<time> task <id> completed Downloads/<name> <size> bytes sha256=…" or "<time> task <id> failed …"
                let words = line.split(separator: " ")
                guard let at = words.firstIndex(of: "task"), at + 2 < words.count, let id = UInt64(words[at + 1]) else {
                    violation("\(download.id): a completion line that does not read: \(line)")
                    continue
                }
                counts[id, default: 0] += 1
                guard counts[id] == 1, before[id] == nil else { continue }
                if words[at + 2] != "completed" {
                    violation("\(download.id) was told task \(id) ended otherwise: \(line)")
                } else if !line.contains(" \(download.size) bytes ") {
                    violation("\(download.id) was told task \(id) completed with the wrong size: \(line)")
                } else {
                    transfers.figures.completed += 1
                }
            }
            for (id, count) in counts.sorted(by: { $0.key < $1.key }) where count > max(1, before[id] ?? 0) {
                transfers.figures.duplicated += count - max(1, before[id] ?? 0)
                violation("\(download.id) was told of task \(id) \(count) times")
            }
            transfers.completions[download.id] = counts
        }
    }

    /// Each resume's bytes written again, from the daemon's log: at most one checkpoint's worth (§11).
    private func checkRefetched() {
        let log = (try? String(contentsOfFile: daemon.root + "/daemon.log", encoding: .utf8)) ?? ""
        let all = log.split(separator: "\n").compactMap { line -> Int64? in
            guard let field = line.split(separator: " ").first(where: { $0.hasPrefix("offstage.transfer.refetched=") }) else { return nil }
            return Int64(field.dropFirst("offstage.transfer.refetched=".count))
        }
        for bytes in all.dropFirst(transfers.figures.refetched.count) where bytes > Self.transferChunk {
            violation("a resume wrote \(bytes) bytes again, more than one checkpoint (\(Self.transferChunk))")
        }
        transfers.figures.refetched = all
    }

    /// Whether the file at `path` is the served file `name`, byte for byte; a violation if not.
    private func compareWithServed(_ path: String, _ name: String) throws -> Bool {
        guard let server = nginx else { return false }
        let kept = try Data(contentsOf: URL(fileURLWithPath: path))
        let served = try Data(contentsOf: URL(fileURLWithPath: server.root + "/" + name))
        if kept != served { violation("\(path) is not the served \(name): \(kept.count) bytes against \(served.count)") }
        return kept == served
    }

    private func listTransfers() throws -> [TransfersControlInterface.TransferMessage] {
        try daemon.json(["transfers"], as: [TransfersControlInterface.TransferMessage].self)
    }

    private func dataFolder(_ app: String) -> String { daemon.state + "/data/" + app }

    private func files(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }
}

/// A failure of the harness's own set-up.
struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
