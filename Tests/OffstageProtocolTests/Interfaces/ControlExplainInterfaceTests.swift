import Foundation
import OffstageCore
@testable import OffstageProtocol
import Testing

/// `io.offstage.Control.Explain` (SPEC SCH-8, §5): the reply, with the app's transfers, has exactly the IDL's fields.
@Suite("io.offstage.Control.Explain")
struct ControlExplainInterfaceTests {
    @Test("SCH-8, TR-4: Explain's reply and its Transfer type have exactly the IDL's fields, nulls included")
    func explainMatchesIDL() throws {
        let text = ControlInterface.definition
        var task = TransferTask(
            id: 3, app: "com.example.a", session: "s",
            request: TransferRequest(kind: .download, url: "https://example.com/a", filename: "a"), at: .epoch)
        task.bytesExpected = nil
        let explanation = TransferExplanation(
            task: task, holds: [.retryBackoff(until: .epoch + .seconds(5))], summary: "waiting: the retry wait")
        let message = ControlInterface.TransferExplanationMessage(explanation)
        #expect(message.bytesExpected == nil && message.holds.count == 1)
        #expect(try IDLFields.keys(of: message) == Set(try #require(IDLFields.type("Transfer", in: text)).keys))
        let reply = ControlInterface.ExplainReply(
            tasks: [], transfers: [message],
            conditions: ControlInterface.Conditions(
                DeviceConditions(batteryLevel: 80, charging: false, network: .unmetered, idle: false, lowPowerMode: false)),
            modeHolds: ["audio"], suspendedBecause: "it left the foreground")
        let output = try #require(IDLFields.method("Explain", in: text)).output
        #expect(try IDLFields.keys(of: reply) == Set(output.keys))
    }
}
