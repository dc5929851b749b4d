import Foundation
@testable import OffstageCore
import OffstageProtocol
import Testing

/// The accessory half of the modes interfaces (SPEC MODE-4): Swift types that match the IDL text field for field, the
/// callback intact through both coders, and bad registrations refused with the thing that was wrong and the fix.
@Suite("io.offstage.Modes accessories (MODE-4)")
struct AccessoryInterfaceTests {
    @Test("MODE-4: the accessory types and methods have exactly the IDL's fields, in both interfaces")
    func accessoryMatchesIDL() throws {
        let text = ModesInterface.definition
        let register = try #require(IDLFields.method("RegisterAccessory", in: text))
        let parameters = ModesInterface.RegisterAccessoryParameters(name: "scanner", path: "/dev/ttyACM0", mode: "external-accessory")
        #expect(try IDLFields.keys(of: parameters) == Set(register.input.keys))
        let accessory = ModesInterface.AccessoryMessage(
            name: "scanner", path: "/dev/ttyACM0", mode: "external-accessory", connected: true, session: false)
        #expect(try IDLFields.keys(of: accessory) == Set(try #require(IDLFields.type("Accessory", in: text)).keys))
        #expect(try IDLFields.keys(of: ModesInterface.RegisterAccessoryReply(accessory: accessory)) == Set(register.output.keys))
        let unregister = try #require(IDLFields.method("UnregisterAccessory", in: text))
        #expect(try IDLFields.keys(of: ModesInterface.AccessoryNameParameters(name: "scanner")) == Set(unregister.input.keys))
        let handOff = try #require(IDLFields.method("HandOffAccessorySession", in: text))
        #expect(try IDLFields.keys(of: ModesInterface.AccessoryNameParameters(name: "scanner")) == Set(handOff.input.keys))
        #expect(try IDLFields.keys(of: ModesInterface.HandOffAccessorySessionReply(kind: "fifo")) == Set(handOff.output.keys))
        let list = try #require(IDLFields.method("Accessories", in: text))
        #expect(try IDLFields.keys(of: ModesInterface.AccessoriesReply(accessories: [accessory])) == Set(list.output.keys))

        let control = ModesControlInterface.definition
        let link = ModesControlInterface.AccessoryLinkMessage(
            app: "com.example.scanner", name: "scanner", path: "/dev/ttyACM0", mode: "external-accessory", connected: nil,
            session: true, watched: false, hold: nil)
        #expect(try IDLFields.keys(of: link) == Set(try #require(IDLFields.type("AccessoryLink", in: control)).keys))
        let reply = ModesControlInterface.AccessoryLinksReply(accessories: [link])
        for method in ["Accessories", "AccessoryEvent"] {
            #expect(try IDLFields.keys(of: reply) == Set(try #require(IDLFields.method(method, in: control)).output.keys))
        }
        let event = try #require(IDLFields.method("AccessoryEvent", in: control))
        #expect(
            try IDLFields.keys(of: ModesControlInterface.AccessoryEventParameters(app: "a", name: "b", event: "data"))
                == Set(event.input.keys))

        let callback = AppInterface.CallbackMessage(
            Callback(id: CallbackID(4), kind: .accessory(name: "scanner", event: .connected), deadline: nil))
        let callbackFields = try #require(IDLFields.type("Callback", in: AppInterface.definition)).keys
        #expect(try IDLFields.keys(of: callback).isSubset(of: Set(callbackFields)))
        #expect(callback.kind == "accessory" && callback.accessory == "scanner" && callback.accessoryEvent == "connected")
    }

    @Test("MODE-4: an accessory callback travels intact through the hand-written and the Foundation coders")
    func accessoryCallbackRoundTrip() throws {
        for event in AccessoryEvent.allCases {
            let callback = AppInterface.CallbackMessage(
                Callback(id: CallbackID(11), kind: .accessory(name: "heart-rate", event: event), deadline: nil))
            var json = VarlinkDirectJSON()
            try callback.appendJSON(to: &json)
            #expect(try JSONDecoder().decode(AppInterface.CallbackMessage.self, from: Data(json.bytes)) == callback)
            #expect(try JSONDecoder().decode(AppInterface.CallbackMessage.self, from: JSONEncoder().encode(callback)) == callback)
        }
    }

    @Test(
        "MODE-4: a bad registration is refused naming the thing that was wrong and the fix",
        arguments: [
            ("", "/dev/ttyACM0", "external-accessory", "is not an accessory name", "letters, digits"),
            ("a/b", "/dev/ttyACM0", "external-accessory", "'a/b' is not an accessory name", "letters, digits"),
            ("scanner", "dev/ttyACM0", "external-accessory", "not an absolute path", "absolute path"),
            ("scanner", "/dev/../etc/passwd", "external-accessory", "not an absolute path", "without '..'"),
            ("scanner", "/dev/ttyACM0", "audio", "'audio' is not an accessory mode", "bluetooth-central"),
            ("scanner", "/dev/ttyACM0", "usb", "'usb' is not an accessory mode", "external-accessory"),
        ])
    func badRegistration(name: String, path: String, mode: String, problem: String, fix: String) throws {
        let parameters = ModesInterface.RegisterAccessoryParameters(name: name, path: path, mode: mode)
        guard case .failure(let error) = parameters.registration() else {
            Issue.record("\(name) \(path) \(mode) was accepted")
            return
        }
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains(problem), "\(error.message)")
        #expect(error.fix.contains(fix), "\(error.fix)")
    }

    @Test("MODE-4: an accessory event the system does not know is refused, naming the events there are")
    func unknownEvent() throws {
        guard case .failure(let error) = ModesControlInterface.AccessoryEventParameters(app: "a", name: "b", event: "plugged")
            .accessoryEvent()
        else {
            Issue.record("an unknown event was accepted")
            return
        }
        #expect(error.message.contains("'plugged'"))
        #expect(error.fix.contains("connected, disconnected, data"))
        let good = try ModesControlInterface.AccessoryEventParameters(app: "a", name: "b", event: "data").accessoryEvent().get()
        #expect(good == .data)
    }
}
