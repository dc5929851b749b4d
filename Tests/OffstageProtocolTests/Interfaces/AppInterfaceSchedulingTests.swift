import Foundation
import OffstageCore
import OffstageProtocol
import Testing

/// The scheduling messages exactly as the SDK (`Sources/Offstage`) writes and reads them: what each field left out
/// means, and what the daemon makes of each form.
@Suite("AppInterface scheduling wire forms")
struct AppInterfaceSchedulingTests {
    private func parameters(of call: Data) throws -> JSONValue {
        try #require(try JSONDecoder().decode(JSONValue.self, from: call)["parameters"])
    }

    private func decode<Value: Decodable>(_ type: Value.Type, _ text: String) throws -> Value {
        try JSONDecoder().decode(type, from: Data(text.utf8))
    }

    @Test("an app-refresh request leaves out the processing fields, and the daemon reads it as needing a network")
    func refreshRequest() throws {
        let message = AppInterface.TaskRequestMessage(identifier: "com.example.refresh", kind: "refresh", earliestBegin: 1_700_000_060)
        let call = try VarlinkCodec.encodeCall(AppInterface.Method.submitTask, AppInterface.SubmitParameters(request: message))
        #expect(
            try parameters(of: call)
                == ["request": ["identifier": "com.example.refresh", "kind": "refresh", "earliestBegin": 1_700_000_060]])

        let request = try message.request(submittedAt: Instant(secondsSinceEpoch: 1_700_000_000)).get()
        #expect(request.kind == .appRefresh)
        #expect(request.requiresNetwork)
        #expect(!request.requiresExternalPower)
        #expect(request.earliestBegin == Instant(secondsSinceEpoch: 1_700_000_060))
    }

    @Test("a processing request carries both conditions explicitly")
    func processingRequest() throws {
        let sent = try decode(
            AppInterface.SubmitParameters.self,
            #"{"request":{"identifier":"com.example.processing","kind":"processing","requiresNetwork":false,"requiresExternalPower":true}}"#)
        let request = try sent.request.request(submittedAt: Instant(secondsSinceEpoch: 0)).get()
        #expect(request.kind == .processing)
        #expect(!request.requiresNetwork)
        #expect(request.requiresExternalPower)
        #expect(request.earliestBegin == nil)
    }

    @Test("a pending request comes back in the form it was sent")
    func pendingRoundTrip() throws {
        let core = TaskRequest(
            identifier: "com.example.processing", kind: .processing, earliestBegin: Instant(secondsSinceEpoch: 1_800_000_000),
            requiresNetwork: true, requiresExternalPower: true, submittedAt: Instant(secondsSinceEpoch: 1_700_000_000))
        let reply = AppInterface.PendingReply(requests: [AppInterface.TaskRequestMessage(core)])
        let decoded = try JSONDecoder().decode(AppInterface.PendingReply.self, from: JSONEncoder().encode(reply))
        #expect(
            decoded.requests == [
                AppInterface.TaskRequestMessage(
                    identifier: "com.example.processing", kind: "processing", earliestBegin: 1_800_000_000,
                    requiresNetwork: true, requiresExternalPower: true)
            ])
    }

    @Test("the legacy fetch is not a request kind an app may submit")
    func fetchKindRefused() throws {
        let message = AppInterface.TaskRequestMessage(identifier: "fetch", kind: "fetch")
        let error = try #require(throws: AppInterface.InvalidField.self) {
            try message.request(submittedAt: Instant(secondsSinceEpoch: 0)).get()
        }
        #expect(error.name == "kind")
    }

    @Test("the three fetch intervals the SDK sends", arguments: [
        (#"{"interval":"never"}"#, FetchInterval.never),
        (#"{"interval":"minimum"}"#, FetchInterval.minimum),
        (#"{"interval":"seconds","seconds":900}"#, FetchInterval.seconds(900)),
    ])
    func fetchIntervals(text: String, interval: FetchInterval) throws {
        #expect(try decode(AppInterface.FetchIntervalParameters.self, text).fetchInterval.get() == interval)
        #expect(AppInterface.FetchIntervalParameters(interval).fetchInterval == .success(interval))
    }

    @Test("a seconds interval without its seconds names the missing field")
    func fetchIntervalWithoutSeconds() throws {
        let parameters = try decode(AppInterface.FetchIntervalParameters.self, #"{"interval":"seconds"}"#)
        let error = try #require(throws: AppInterface.InvalidField.self) { try parameters.fetchInterval.get() }
        #expect(error.name == "seconds")
    }

    @Test("runTask, performFetch and taskExpiring carry the run the SDK completes")
    func scheduledCallbacks() throws {
        let run = AppInterface.CallbackMessage(
            Callback(id: CallbackID(7), kind: .runTask(run: 42, identifier: "com.example.refresh", kind: .appRefresh), deadline: nil))
        #expect(run.kind == "runTask")
        #expect(run.run == 42)
        #expect(run.taskIdentifier == "com.example.refresh")
        #expect(run.taskKind == "refresh")

        let fetch = AppInterface.CallbackMessage(Callback(id: CallbackID(8), kind: .performFetch(run: 43), deadline: nil))
        #expect(fetch.kind == "performFetch")
        #expect(fetch.run == 43)
        #expect(fetch.taskIdentifier == nil)

        let expiring = AppInterface.CallbackMessage(Callback(id: CallbackID(9), kind: .taskExpiring(run: 42), deadline: nil))
        #expect(expiring.kind == "taskExpiring")
        #expect(expiring.run == 42)
    }

    @Test("a completion names the run and one of the three results")
    func completion() throws {
        let call = try VarlinkCodec.encodeCall(
            AppInterface.Method.completeTask, AppInterface.CompleteParameters(run: 42, result: TaskResult.noData.rawValue))
        #expect(try parameters(of: call) == ["run": 42, "result": "noData"])
        #expect(TaskResult.allCases.map(\.rawValue) == ["newData", "noData", "failed"])
    }
}
