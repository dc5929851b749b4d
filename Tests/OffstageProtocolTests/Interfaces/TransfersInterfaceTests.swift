import Foundation
import OffstageCore
@testable import OffstageProtocol
import Testing

/// The transfer interfaces (SPEC §5): valid IDL whose Swift types match it field for field, and the transferEvents
/// callback intact through both coders.
@Suite("io.offstage.Transfers and io.offstage.TransfersControl")
struct TransfersInterfaceTests {
    static func last(_ names: [String]) -> [String] { names.map { String($0.split(separator: ".").last!) } }

    @Test("the interface definitions are valid and declare the methods the Swift names call")
    func definitionsAreValid() throws {
        let app = try VarlinkIDLChecker.check(TransfersInterface.definition)
        #expect(app.name == TransfersInterface.name)
        #expect(app.methods == ["OpenSession", "CreateTask", "Tasks", "Acknowledge", "ChangeTask", "CompleteEvents"])
        let names = [
            TransfersInterface.Method.openSession, TransfersInterface.Method.createTask, TransfersInterface.Method.tasks,
            TransfersInterface.Method.acknowledge, TransfersInterface.Method.changeTask,
            TransfersInterface.Method.completeEvents,
        ]
        #expect(Self.last(names) == app.methods)
        #expect(names.allSatisfy { $0.hasPrefix(TransfersInterface.name + ".") })
        let control = try VarlinkIDLChecker.check(TransfersControlInterface.definition)
        #expect(control.name == TransfersControlInterface.name)
        #expect(control.methods == ["List", "Change"])
        let controlNames = [TransfersControlInterface.Method.list, TransfersControlInterface.Method.change]
        #expect(Self.last(controlNames) == control.methods)
        #expect(controlNames.allSatisfy { $0.hasPrefix(TransfersControlInterface.name + ".") })
    }

    /// A failure with every optional set.
    static let failure = TransfersInterface.FailureMessage(code: "http-status", status: 404, message: "Not Found")

    @Test("TR-1..6: every type and method of io.offstage.Transfers has exactly the IDL's fields")
    func transfersMatchesIDL() throws {
        let text = TransfersInterface.definition
        func type(_ name: String) throws -> Set<String> { Set(try #require(IDLFields.type(name, in: text)).keys) }
        func method(_ name: String) throws -> (input: Set<String>, output: Set<String>) {
            let fields = try #require(IDLFields.method(name, in: text))
            return (Set(fields.input.keys), Set(fields.output.keys))
        }
        #expect(try IDLFields.keys(of: Self.failure) == type("Failure"))
        let task = TransfersInterface.TaskMessage(
            id: 1, session: "com.example.s", kind: "download", url: "https://example.com/a", state: "completed",
            bytesDone: 10, bytesExpected: 10, file: "/data/Transfers/1-a", httpStatus: 200, failure: Self.failure,
            waitingFor: "no network", createdAt: 1, finishedAt: 2, responseBody: "AAE=", responseBodyTruncated: false)
        #expect(try IDLFields.keys(of: task) == type("Task"))
        let header = TransfersInterface.HeaderMessage(name: "Authorization", value: "Bearer x")
        #expect(try IDLFields.keys(of: header) == type("Header"))
        let open = TransfersInterface.OpenSessionParameters(
            identifier: "com.example.s", discretionary: true, sendsLaunchEvents: false, allowsMeteredNetwork: false)
        #expect(try IDLFields.keys(of: open) == method("OpenSession").input)
        #expect(try method("OpenSession").output.isEmpty)
        let create = TransfersInterface.CreateTaskParameters(
            session: "com.example.s", kind: "upload", url: "https://example.com/u", method: "POST", headers: [header],
            file: "/data/f", filename: "f", discretionary: true, earliestBegin: 5)
        #expect(try IDLFields.keys(of: create) == method("CreateTask").input)
        #expect(try IDLFields.keys(of: TransfersInterface.CreateTaskReply(task: task)) == method("CreateTask").output)
        #expect(try IDLFields.keys(of: TransfersInterface.TasksParameters(session: "s")) == method("Tasks").input)
        #expect(try IDLFields.keys(of: TransfersInterface.TasksReply(tasks: [task])) == method("Tasks").output)
        let acknowledge = TransfersInterface.AcknowledgeParameters(session: "s", ids: [1])
        #expect(try IDLFields.keys(of: acknowledge) == method("Acknowledge").input)
        #expect(try method("Acknowledge").output.isEmpty)
        let change = TransfersInterface.ChangeTaskParameters(id: 1, change: "pause")
        #expect(try IDLFields.keys(of: change) == method("ChangeTask").input)
        #expect(try method("ChangeTask").output.isEmpty)
        #expect(try IDLFields.keys(of: TransfersInterface.CompleteEventsParameters(run: 3)) == method("CompleteEvents").input)
        #expect(try method("CompleteEvents").output.isEmpty)
    }

    @Test("TR-1..6: every optional field of io.offstage.Transfers is optional in Swift, and only those")
    func transfersOptionality() throws {
        let text = TransfersInterface.definition
        // A value with every optional left nil encodes only the IDL's required fields.
        let task = TransfersInterface.TaskMessage(
            id: 1, session: "s", kind: "download", url: "u", state: "waiting", bytesDone: 0, bytesExpected: nil, file: nil,
            httpStatus: nil, failure: nil, waitingFor: nil, createdAt: 1, finishedAt: nil)
        let required = { (fields: [String: Bool]) in Set(fields.filter { !$0.value }.keys) }
        #expect(try IDLFields.keys(of: task) == required(try #require(IDLFields.type("Task", in: text))))
        let create = TransfersInterface.CreateTaskParameters(session: "s", kind: "download", url: "u")
        #expect(try IDLFields.keys(of: create) == required(try #require(IDLFields.method("CreateTask", in: text)).input))
        let open = TransfersInterface.OpenSessionParameters(identifier: "s")
        #expect(try IDLFields.keys(of: open) == required(try #require(IDLFields.method("OpenSession", in: text)).input))
    }

    @Test("TR-1..6: every type and method of io.offstage.TransfersControl has exactly the IDL's fields")
    func controlMatchesIDL() throws {
        let text = TransfersControlInterface.definition
        func method(_ name: String) throws -> (input: [String: Bool], output: [String: Bool]) {
            try #require(IDLFields.method(name, in: text))
        }
        #expect(try IDLFields.keys(of: Self.failure) == Set(try #require(IDLFields.type("Failure", in: text)).keys))
        let transferFields = try #require(IDLFields.type("Transfer", in: text))
        let full = TransfersControlInterface.TransferMessage(
            app: "com.example.a", session: "s", id: 1, kind: "download", url: "https://example.com/a", state: "failed",
            bytesDone: 1, bytesExpected: 2, discretionary: true, attempts: 3, waitingFor: ["no network"], retryAt: 4,
            lastError: "reset", httpStatus: 404, failure: Self.failure, createdAt: 5, finishedAt: 6)
        #expect(try IDLFields.keys(of: full) == Set(transferFields.keys))
        let bare = TransfersControlInterface.TransferMessage(
            app: "com.example.a", session: "s", id: 1, kind: "download", url: "u", state: "waiting", bytesDone: 0,
            bytesExpected: nil, discretionary: false, attempts: 0, waitingFor: [], retryAt: nil, lastError: nil,
            httpStatus: nil, failure: nil, createdAt: 5, finishedAt: nil)
        #expect(try IDLFields.keys(of: bare) == Set(transferFields.filter { !$0.value }.keys))
        let list = try method("List")
        #expect(try IDLFields.keys(of: TransfersControlInterface.ListParameters(app: "com.example.a")) == Set(list.input.keys))
        #expect(list.input == ["app": true])
        #expect(try IDLFields.keys(of: TransfersControlInterface.ListReply(transfers: [full])) == Set(list.output.keys))
        let change = try method("Change")
        #expect(try IDLFields.keys(of: TransfersControlInterface.ChangeParameters(id: 1, change: "cancel")) == Set(change.input.keys))
        #expect(change.output.isEmpty)
    }

    /// The wire form of a transferEvents callback for `session` and `run`.
    static func transferEvents(session: String, run: UInt64?) -> AppInterface.CallbackMessage {
        AppInterface.CallbackMessage(
            Callback(id: CallbackID(9), kind: .transferEvents(session: session, run: run), deadline: nil))
    }

    @Test(
        "TR-3: a transferEvents callback keeps its session and run (or none) through the hand-written and Foundation coders",
        arguments: [UInt64(42), nil, 0, UInt64.max])
    func callbackRoundTrip(run: UInt64?) throws {
        for session in ["com.example.downloads", "naïve 名前 🚀", "with \"quotes\" and \\ backslash"] {
            let message = Self.transferEvents(session: session, run: run)
            #expect(message.kind == "transferEvents" && message.id == 9)
            #expect(message.session == session && message.run == run)
            #expect(message.pushId == nil && message.payload == nil && message.taskIdentifier == nil)
            let reply = AppInterface.AttachReply(callback: message)
            // Written by hand, read by Foundation.
            var direct = VarlinkDirectJSON()
            try reply.appendJSON(to: &direct)
            let handText = Data(direct.bytes)
            #expect(try reply.decodedByFoundation(handText), "\(String(decoding: handText, as: UTF8.self))")
            let object = try #require(try JSONSerialization.jsonObject(with: handText) as? [String: Any])
            let callback = try #require(object["callback"] as? [String: Any])
            #expect(callback["session"] as? String == session)
            #expect((callback["run"] == nil) == (run == nil), "no run is left out, not written as another value")
            // Written by Foundation, read by the codec and, without escapes, by hand.
            let foundationText = try JSONEncoder().encode(reply)
            #expect(try reply.decodedByCodec(foundationText))
            let shown = String(decoding: foundationText, as: UTF8.self)
            if !shown.contains("\\") {
                #expect(reply.decodedByHand(foundationText), "\(shown)")
            }
            #expect(try reply.decodedByCodec(handText))
        }
    }
}
