import Foundation
import TestProcesses
import Testing

/// A background session across a restart of the daemon under a running app (SPEC LC-8, TR-3): the app's SDK
/// reattaches and opens its sessions again by itself, so that progress keeps reaching the delegate while the app is in
/// front, without the app recreating the session.
@Suite("Background sessions reopen when the app reattaches (SPEC LC-8, TR-3)", .serialized)
struct TransferReattachIntegrationTests {
    typealias Transfers = TransferIntegrationTests

    /// The number of progress lines the downloader printed.
    static func progressLines(_ daemon: DaemonHarness) -> Int {
        daemon.output(Transfers.downloader).split(separator: "\n").filter { $0.contains("progress task ") }.count
    }

    @Test("LC-8, TR-3: the daemon is killed with -9 while the downloader is in front with a download running; the restarted daemon resumes the download, the app reattaches and reopens its session, and its delegate hears progress again and the completion once")
    func progressContinuesAfterTheDaemonRestarts() throws {
        let nginx = try Transfers.startNginx()
        defer { nginx.stop() }
        let digest = try Transfers.serve(nginx, "big.bin", size: 12 << 20)
        try withDaemon { daemon in
            try Transfers.startDownload(daemon, nginx.url("/slow/big.bin"))
            try daemon.waitUntil("progress is printed in front", timeout: 5) { Self.progressLines(daemon) > 0 }
            let pid = try daemon.app(Transfers.downloader).pid
            daemon.crash()
            let restarted = DaemonHarness.now()
            try daemon.start()
            try daemon.waitUntil("the app reattached") {
                try daemon.log(Transfers.downloader).contains { $0.at >= restarted && $0.message.hasPrefix("reattached") }
            }
            #expect(try daemon.app(Transfers.downloader).pid == pid, "the same process, not a relaunch")
            #expect(try daemon.app(Transfers.downloader).state == "active")
            let before = Self.progressLines(daemon)
            // 1 MiB/s with about 10 MiB to go: progress comes about once a second while the app is in front.
            try daemon.waitUntil("progress is printed again after the restart", timeout: 10) { Self.progressLines(daemon) >= before + 2 }
            try daemon.waitUntil("the completion is delivered", timeout: 30) { !Transfers.completions(daemon).isEmpty }
            let lines = Transfers.completions(daemon)
            #expect(lines.count == 1, "\(lines)")
            #expect(lines.first?.contains("sha256=\(digest)") == true, "\(lines)")
            #expect(try daemon.app(Transfers.downloader).pid == pid)
        }
    }
}
