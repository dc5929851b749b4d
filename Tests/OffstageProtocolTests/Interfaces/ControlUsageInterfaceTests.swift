import Foundation
import OffstageCore
@testable import OffstageProtocol
import Testing

/// `io.offstage.Control.Usage` (SPEC SET-3): the Swift types and the IDL text cannot drift.
@Suite("io.offstage.Control.Usage")
struct ControlUsageInterfaceTests {
    @Test("SET-3: Usage's parameters, reply, UsageRow, UsageMemory and UsageApp have exactly the IDL's fields, nulls included")
    func usageMatchesIDL() throws {
        let text = ControlInterface.definition
        let app: AppID = "com.example.a"
        let row = ControlInterface.UsageRow(
            UsageKey(app: app, day: 20_786, foreground: false, metered: true),
            UsageFigures(received: 1, sent: 2, transferReceived: 3, transferSent: 4, cpuMicroseconds: 1_500_000, seconds: 6, wakeUps: 7))
        #expect(row.date == "2026-11-29" && row.cpuSeconds == 1.5 && row.figures.cpuMicroseconds == 1_500_000)
        let memory = ControlInterface.UsageMemory(UsageDay(app: app, day: 0), MemoryFigures(last: 5, peak: 9))
        #expect(memory.date == "1970-01-01" && memory.peakBytes == 9)
        let summed = ControlInterface.UsageRow(UsageKey(app: app, day: 1, foreground: true, metered: false), UsageFigures(), summed: true)
        let summedKeys = try IDLFields.keys(of: summed)
        #expect(summed.date == nil && summedKeys.contains("date"), "a null date is written, not left out")
        let usageApp = ControlInterface.UsageApp(app, AppSettings(), state: .suspended, memoryBytes: nil)
        #expect(try IDLFields.keys(of: row) == Set(try #require(IDLFields.type("UsageRow", in: text)).keys))
        #expect(try IDLFields.keys(of: memory) == Set(try #require(IDLFields.type("UsageMemory", in: text)).keys))
        #expect(try IDLFields.keys(of: usageApp) == Set(try #require(IDLFields.type("UsageApp", in: text)).keys))
        let method = try #require(IDLFields.method("Usage", in: text))
        let reply = ControlInterface.UsageReply(
            from: 1, to: 2, daysKept: 31, bytesCounted: "enforced", rows: [row], memory: [memory], apps: [usageApp])
        #expect(try IDLFields.keys(of: reply) == Set(method.output.keys))
        #expect(try IDLFields.keys(of: ControlInterface.UsageParameters(app: "x", since: 1)) == Set(method.input.keys))
    }

    @Test("SET-3: day numbers are local dates, across leap years and before 1970")
    func dates() {
        #expect(UsageDate.text(ofDay: 0) == "1970-01-01")
        #expect(UsageDate.text(ofDay: -1) == "1969-12-31")
        #expect(UsageDate.text(ofDay: 11_016) == "2000-02-29")
        #expect(UsageDate.text(ofDay: 20_513) == "2026-03-01")
    }
}
