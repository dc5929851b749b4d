import Foundation
import OffstageCore
@testable import OffstageProtocol
import Testing

/// `io.offstage.Control.ExplainHistory` (SPEC SCH-8, looking back): the Swift types and the IDL text cannot drift.
@Suite("io.offstage.Control.ExplainHistory")
struct ControlHistoryInterfaceTests {
    @Test("SCH-8: ExplainHistory's parameters, reply, TaskHistory, RunHistory and HeldTotal have exactly the IDL's fields, nulls included")
    func historyMatchesIDL() throws {
        let text = ControlInterface.definition
        let start = Instant(secondsSinceEpoch: 1_800_000_000)
        let running = RunRecord(
            app: "com.example.a", identifier: "com.example.refresh", kind: .appRefresh, run: 4, startedAt: start,
            forced: true, start: .launched)
        let report = TaskHistoryReport(
            app: "com.example.a", identifier: "com.example.refresh", kind: .appRefresh, runs: [running], waited: 60,
            held: [.init(reason: .noNetwork, seconds: 60)], interrupted: false)
        let message = ControlInterface.TaskHistoryMessage(report, now: start + .seconds(5))
        #expect(message.runs.first?.seconds == 5 && message.runs.first?.outcome == nil)
        #expect(message.held.first?.controller == "network" && message.held.first?.label == "no network")
        #expect(try IDLFields.keys(of: message) == Set(try #require(IDLFields.type("TaskHistory", in: text)).keys))
        #expect(try IDLFields.keys(of: try #require(message.runs.first)) == Set(try #require(IDLFields.type("RunHistory", in: text)).keys))
        #expect(try IDLFields.keys(of: try #require(message.held.first)) == Set(try #require(IDLFields.type("HeldTotal", in: text)).keys))
        let method = try #require(IDLFields.method("ExplainHistory", in: text))
        let reply = ControlInterface.ExplainHistoryReply(app: "com.example.a", from: 1, to: 2, keptSeconds: 3, tasks: [message])
        #expect(try IDLFields.keys(of: reply) == Set(method.output.keys))
        let parameters = ControlInterface.ExplainHistoryParameters(app: "com.example.a", identifier: "x", since: 1)
        #expect(try IDLFields.keys(of: parameters) == Set(method.input.keys))
    }
}
