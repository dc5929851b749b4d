import Foundation
import Testing

/// The short, seeded run of the crash harness (`Tests/CrashHarness`): fifty kill -9 of a real daemon under a mix of
/// operations, half of them in the middle of a call, with every invariant checked after each restart. Long runs are
/// the same program with more cycles and other seeds (see RELIABILITY.md).
@Suite("Crash harness, short run (SPEC §11 reliability, MAN-3, SCH-10, LC-8)", .serialized)
struct CrashHarnessTests {
    @Test("§11: fifty kill -9 under load lose no acknowledged change and leave no copy, process or freeze behind")
    func shortSeededRun() throws {
        let harness = Process()
        harness.executableURL = DaemonHarness.products.appendingPathComponent("CrashHarness")
        harness.arguments = ["--cycles", "50", "--seed", "1"]
        let output = Pipe()
        harness.standardOutput = output
        harness.standardError = output
        try harness.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        harness.waitUntilExit()
        #expect(harness.terminationStatus == 0, "\(text)")
        #expect(text.contains("50 kill -9") && text.contains("violations: 0"), "\(text)")
    }
}
