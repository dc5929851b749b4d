import Foundation
import Testing

/// The short, seeded run of the crash harness (`Tests/CrashHarness`): fifty kill -9 of a real daemon under a mix of
/// operations, half of them in the middle of a call, with local notifications added from inside a real app and kills
/// aimed at their Add calls, their due times and bursts, and pushes sent by an app server to the daemon's gateway for a
/// real app, with kills while its requests are in flight, background downloads of two real apps from a private nginx
/// cut by the kills, and continued-processing exports of two real Exporter apps that the user starts, cancels and
/// force-quits; every invariant checked after each restart. Long runs are
/// the same program with more cycles and other seeds (see RELIABILITY.md).
@Suite("Crash harness, short run (SPEC §11 reliability, MAN-3, SCH-10, SCH-11, LC-8, NT-1, NT-2, NT-3..5, TR-1..6)", .serialized)
struct CrashHarnessTests {
    @Test("§11: fifty kill -9 under load lose no acknowledged change, notification, push, download or usage shown, deliver none twice, leave nothing behind")
    func shortSeededRun() async throws {
        let (status, text) = try await runHarness(["--cycles", "50", "--seed", "1"])
        #expect(status == 0, "\(text)")
        #expect(text.contains("50 kill -9") && text.contains("violations: 0"), "\(text)")
        #expect(text.contains("notifications lost: 0, duplicated: 0,"), "\(text)")
        // The notifications were really exercised: some acknowledged, some fired, some Add calls cut by a kill.
        #expect(number(before: " acknowledged (", in: text) > 0, "\(text)")
        #expect(number(after: "notifications fired: ", in: text) > 0, "\(text)")
        #expect(number(before: " in the middle of Add calls", in: text) > 0, "\(text)")
        // Pushes too (NT-3..5): some acknowledged, some handlers called, kills with requests in flight, none lost or
        // delivered twice.
        #expect(text.contains("pushes lost: 0, duplicated: 0, alerts shown twice: 0, stored though refused or unknown: 0, outcome against the handler's calls: 0"), "\(text)")
        #expect(number(before: " pushes acknowledged", in: text) > 0, "\(text)")
        #expect(number(before: " handler calls", in: text) > 0, "\(text)")
        #expect(number(before: " during accepts", in: text) > 0, "\(text)")
        // Downloads (TR-1..6): some started, completed and cut by a kill; none lost or told twice; every kept file
        // byte-identical; each resume within one checkpoint (the harness reports a violation otherwise).
        #expect(text.contains("lost: 0, duplicated: 0\n"), "\(text)")
        #expect(number(before: " opens of a downloader", in: text) > 0, "\(text)")
        #expect(number(before: " downloads completed", in: text) > 0, "\(text)")
        #expect(number(before: " resumes after a kill", in: text) > 0, "\(text)")
        // Continued processing (SCH-11, SCH-10): exports submitted, started, finished and taken up again by a restarted
        // daemon; none lost, run or ended twice, back after a cancel or a force-quit, or with its progress going back.
        #expect(text.contains("continued lost: 0, run twice: 0, ended twice: 0, came back: 0, progress backwards: 0"), "\(text)")
        #expect(number(before: " exports submitted", in: text) > 0, "\(text)")
        #expect(number(before: " finished, ", in: text) > 0, "\(text)")
        #expect(number(before: " taken up again after a restart", in: text) > 0, "\(text)")
        // Usage (SET-3): compared after every restart, and none of what was shown went down or away.
        #expect(number(after: "usage: ", in: text) >= 50, "\(text)")
        #expect(number(before: " rows at the last", in: text) > 0, "\(text)")
    }

    @Test("MEM-1, §11: kill -9 in the middle of the answer to memory pressure, some aimed at the instant an app's process is gone, kills no app twice and loses no record of one ended for memory")
    func memoryEpisodes() async throws {
        let (status, text) = try await runHarness(["--memory-episodes", "8", "--seed", "1"])
        #expect(status == 0, "\(text)")
        #expect(text.contains("memory episodes: 8 kill -9") && text.contains("memory violations: 0"), "\(text)")
        // The kills really fell in the middle: some viewers were ended before one, some after the restart.
        #expect(number(before: " aimed at an app's end", in: text) > 0, "\(text)")
        #expect(number(before: " viewers ended before a kill", in: text) > 0, "\(text)")
        #expect(number(before: " after the restart", in: text) > 0, "\(text)")
    }

    /// Runs the harness with `arguments` to its end; its exit status and everything it printed. Waited for on a thread of
    /// its own: for its minutes of run, the test holds none of the few threads the other tests run on.
    func runHarness(_ arguments: [String]) async throws -> (status: Int32, text: String) {
        let harness = Process()
        harness.executableURL = DaemonHarness.products.appendingPathComponent("CrashHarness")
        harness.arguments = arguments
        let output = Pipe()
        harness.standardOutput = output
        harness.standardError = output
        try harness.run()
        return await withCheckedContinuation { continuation in
            Thread {
                let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                harness.waitUntilExit()
                continuation.resume(returning: (harness.terminationStatus, text))
            }.start()
        }
    }

    /// The number just before `label` in the harness's summary, or -1.
    func number(before label: String, in text: String) -> Int {
        guard let range = text.range(of: label) else { return -1 }
        return Int(text[..<range.lowerBound].split(separator: " ").last ?? "") ?? -1
    }

    /// The number just after `label` in the harness's summary, or -1.
    func number(after label: String, in text: String) -> Int {
        guard let range = text.range(of: label) else { return -1 }
        return Int(text[range.upperBound...].prefix { $0.isNumber }) ?? -1
    }
}
