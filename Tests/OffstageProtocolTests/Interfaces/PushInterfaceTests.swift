import Foundation
import OffstageCore
import OffstageProtocol
import Testing

/// The push interfaces (SPEC NT-3, NT-4): valid IDL whose Swift types match it field for field, and the
/// remoteNotification callback intact through both coders.
@Suite("io.offstage.Push and io.offstage.PushControl")
struct PushInterfaceTests {
    @Test("the interface definitions are valid and declare the methods the Swift names call")
    func definitionsAreValid() throws {
        let app = try VarlinkIDLChecker.check(PushInterface.definition)
        #expect(app.name == PushInterface.name)
        #expect(app.methods == ["Register", "SubscribeWebPush", "UnsubscribeWebPush", "Unregister", "CompleteRemoteNotification"])
        let names = [
            PushInterface.Method.register, PushInterface.Method.subscribeWebPush, PushInterface.Method.unsubscribeWebPush,
            PushInterface.Method.unregister, PushInterface.Method.completeRemoteNotification,
        ]
        #expect(names.map { String($0.split(separator: ".").last!) } == app.methods)
        let control = try VarlinkIDLChecker.check(PushControlInterface.definition)
        #expect(control.name == PushControlInterface.name)
        #expect(control.methods == ["Status", "AddKey", "Keys", "RemoveKey", "Token"])
        let controlNames = [
            PushControlInterface.Method.status, PushControlInterface.Method.addKey, PushControlInterface.Method.keys,
            PushControlInterface.Method.removeKey, PushControlInterface.Method.token,
        ]
        #expect(controlNames.map { String($0.split(separator: ".").last!) } == control.methods)
    }

    @Test("NT-3, NT-4: every type and method of io.offstage.Push has exactly the IDL's fields")
    func pushMatchesIDL() throws {
        let text = PushInterface.definition
        let registration = PushInterface.RegistrationMessage(token: String(repeating: "a", count: 64), gateway: "http://127.0.0.1:1", topic: "com.example.a")
        #expect(try IDLFields.keys(of: registration) == Set(try #require(IDLFields.type("Registration", in: text)).keys))
        let register = try #require(IDLFields.method("Register", in: text))
        #expect(try IDLFields.keys(of: PushInterface.RegisterReply(registration: registration)) == Set(register.output.keys))
        let complete = try #require(IDLFields.method("CompleteRemoteNotification", in: text))
        #expect(try IDLFields.keys(of: PushInterface.CompleteParameters(run: 1, result: "newData")) == Set(complete.input.keys))
        let subscription = PushInterface.WebPushSubscriptionMessage(
            endpoint: "http://127.0.0.1:1/push/abc", p256dh: "BP", auth: "au", applicationServerKey: "BA")
        #expect(try IDLFields.keys(of: subscription) == Set(try #require(IDLFields.type("WebPushSubscription", in: text)).keys))
        let subscribe = try #require(IDLFields.method("SubscribeWebPush", in: text))
        #expect(try IDLFields.keys(of: PushInterface.SubscribeWebPushParameters(applicationServerKey: "BA")) == Set(subscribe.input.keys))
        #expect(try IDLFields.keys(of: PushInterface.SubscribeWebPushReply(subscription: subscription)) == Set(subscribe.output.keys))
    }

    @Test("NT-3..5: every type and method of io.offstage.PushControl has exactly the IDL's fields")
    func controlMatchesIDL() throws {
        let text = PushControlInterface.definition
        func type(_ name: String) throws -> Set<String> { Set(try #require(IDLFields.type(name, in: text)).keys) }
        func method(_ name: String) throws -> (input: Set<String>, output: Set<String>) {
            let fields = try #require(IDLFields.method(name, in: text))
            return (Set(fields.input.keys), Set(fields.output.keys))
        }
        let key = PushControlInterface.KeyMessage(id: "K", teamId: "T", topics: ["a.b"], addedAt: 1)
        #expect(try IDLFields.keys(of: key) == type("Key"))
        let gateway = PushControlInterface.GatewayMessage(embedded: false, address: "https://x:1", tls: true, linkError: "refused")
        #expect(try IDLFields.keys(of: gateway) == type("Gateway"))
        let apps = PushControlInterface.AppPushesMessage(app: "a.b", token: "t", webPushEndpoint: "http://x:1/push/s", held: "h", budget: 3)
        #expect(try IDLFields.keys(of: apps) == type("AppPushes"))
        let record = PushControlInterface.RecordMessage(
            id: "i", app: "a.b", type: "background", priority: 5, collapseId: "c", acceptedAt: 1, state: "done",
            outcome: "handled", detail: "newData", finishedAt: 2)
        #expect(try IDLFields.keys(of: record) == type("Record"))
        let status = PushControlInterface.StatusReply(
            gateway: gateway, connectedDevices: 1, stored: 0, held: 0, apps: [apps], records: [record])
        #expect(try IDLFields.keys(of: PushControlInterface.StatusParameters(app: "a.b", limit: 1)) == method("Status").input)
        #expect(try IDLFields.keys(of: status) == method("Status").output)
        let add = PushControlInterface.AddKeyParameters(id: "K", teamId: "T", publicKey: "p", topics: ["a.b"])
        #expect(try IDLFields.keys(of: add) == method("AddKey").input)
        #expect(try IDLFields.keys(of: PushControlInterface.AddKeyReply(key: key)) == method("AddKey").output)
        #expect(try IDLFields.keys(of: PushControlInterface.KeysReply(keys: [key])) == method("Keys").output)
        #expect(try IDLFields.keys(of: PushControlInterface.RemoveKeyParameters(id: "K")) == method("RemoveKey").input)
        #expect(try IDLFields.keys(of: PushControlInterface.TokenParameters(app: "a.b")) == method("Token").input)
        let token = PushControlInterface.TokenReply(token: "t", gateway: "g", topic: "a.b")
        #expect(try IDLFields.keys(of: token) == method("Token").output)
    }

    @Test("NT-4: a remoteNotification callback keeps its run, push id and payload (any text) through the hand-written and Foundation coders")
    func callbackRoundTrip() throws {
        let payload = #"{"aps":{"content-available":1},"m":"ünï \"q\" \\ /","n":[1,2.5,null]}"#
        let callback = Callback(
            id: CallbackID(7), kind: .remoteNotification(RemoteNotificationCall(run: 42, push: "6e2f0d47-6b0e-4d7e-9b7f-1f3c1d2a3b4c", payload: payload)),
            deadline: nil)
        let message = AppInterface.CallbackMessage(callback)
        #expect(message.kind == "remoteNotification" && message.run == 42)
        #expect(message.pushId == "6e2f0d47-6b0e-4d7e-9b7f-1f3c1d2a3b4c" && message.payload == payload)
        var direct = VarlinkDirectJSON()
        try message.appendJSON(to: &direct)
        let decoded = try JSONDecoder().decode(AppInterface.CallbackMessage.self, from: Data(direct.bytes))
        #expect(decoded == message)
    }
}
