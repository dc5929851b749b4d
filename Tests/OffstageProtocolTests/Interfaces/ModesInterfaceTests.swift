import Foundation
@testable import OffstageCore
import OffstageProtocol
import Testing

/// The modes interfaces: valid IDL, and Swift types that match the IDL text field for field, so the two cannot drift.
@Suite("io.offstage.Modes and io.offstage.ModesControl")
struct ModesInterfaceTests {
    @Test("the interface definitions are valid and declare the methods the Swift names call")
    func definitionsAreValid() throws {
        let modes = try VarlinkIDLChecker.check(ModesInterface.definition)
        #expect(modes.name == ModesInterface.name)
        #expect(modes.methods == ["SetAudioSession", "SetAudioPlaying", "SetKeepAliveTimeout", "HandOffSocket"])
        let names = [
            ModesInterface.Method.setAudioSession, ModesInterface.Method.setAudioPlaying,
            ModesInterface.Method.setKeepAliveTimeout, ModesInterface.Method.handOffSocket,
        ]
        #expect(names.allSatisfy {
            modes.methods.contains(String($0.split(separator: ".").last!))
        })
        let control = try VarlinkIDLChecker.check(ModesControlInterface.definition)
        #expect(control.methods == ["AudioSessions", "AudioInterruption", "VoIPApps", "VoIPSocketEvent", "SystemEvent"])
        let app = try VarlinkIDLChecker.check(AppInterface.definition)
        #expect(app.types.contains("AudioInterruption"))
    }

    @Test("MODE-1: the Swift parameter and reply types have exactly the IDL's fields")
    func swiftMatchesIDL() throws {
        let text = ModesInterface.definition
        let session = ModesInterface.AudioSessionMessage(
            category: "playback", mixWithOthers: true, active: true, notifyOthersOnDeactivation: true)
        #expect(try IDLFields.keys(of: session) == Set(try #require(IDLFields.type("AudioSession", in: text)).keys))
        let set = try #require(IDLFields.method("SetAudioSession", in: text))
        #expect(try IDLFields.keys(of: ModesInterface.SetAudioSessionParameters(session: session)) == Set(set.input.keys))
        #expect(
            try IDLFields.keys(of: ModesInterface.SetAudioSessionReply(backgroundAudio: false, reason: "r"))
                == Set(set.output.keys))
        #expect(set.output == ["backgroundAudio": false, "reason": true])
        let playing = try #require(IDLFields.method("SetAudioPlaying", in: text))
        #expect(try IDLFields.keys(of: ModesInterface.SetAudioPlayingParameters(playing: true)) == Set(playing.input.keys))

        let control = ModesControlInterface.definition
        var audio = AudioSession()
        audio.interruption = .init(by: .system, wasPlaying: true)
        let message = ModesControlInterface.AudioSessionMessage(
            app: "com.example.a", session: audio, hold: ModeHold(.audio, .holds, "playing"))
        #expect(try IDLFields.keys(of: message) == Set(try #require(IDLFields.type("AudioSession", in: control)).keys))
        let reply = ModesControlInterface.AudioSessionsReply(sessions: [message], interruption: true)
        for method in ["AudioSessions", "AudioInterruption"] {
            #expect(try IDLFields.keys(of: reply) == Set(try #require(IDLFields.method(method, in: control)).output.keys))
        }
        let interruption = try #require(IDLFields.method("AudioInterruption", in: control))
        #expect(try IDLFields.keys(of: ModesControlInterface.AudioInterruptionParameters(begin: true)) == Set(interruption.input.keys))

        var voip = VoIPMode()
        _ = try voip.setKeepAlive("com.example.a", seconds: 600, declared: true, minimum: 600, now: .epoch)
        _ = try voip.handOff("com.example.a", token: 1, declared: true, frozen: false)
        let voipApp = ModesControlInterface.VoIPAppMessage(app: "com.example.a", voip: voip)
        #expect(try IDLFields.keys(of: voipApp) == Set(try #require(IDLFields.type("VoIPApp", in: control)).keys))
        let voipReply = ModesControlInterface.VoIPAppsReply(apps: [voipApp])
        for method in ["VoIPApps", "VoIPSocketEvent"] {
            #expect(try IDLFields.keys(of: voipReply) == Set(try #require(IDLFields.method(method, in: control)).output.keys))
        }
        let socketEvent = try #require(IDLFields.method("VoIPSocketEvent", in: control))
        #expect(
            try IDLFields.keys(of: ModesControlInterface.VoIPSocketEventParameters(app: "a", closed: true))
                == Set(socketEvent.input.keys))
        let keepAlive = try #require(IDLFields.method("SetKeepAliveTimeout", in: text))
        #expect(try IDLFields.keys(of: ModesInterface.SetKeepAliveParameters(seconds: 600)) == Set(keepAlive.input.keys))
        let handOff = try #require(IDLFields.method("HandOffSocket", in: text))
        #expect(try IDLFields.keys(of: ModesInterface.HandOffReply(kind: "stream", domain: "inet")) == Set(handOff.output.keys))

        let callback = AppInterface.CallbackMessage(
            Callback(id: CallbackID(1), kind: .audioInterruption(.init(began: false, shouldResume: true, reason: "a call")), deadline: nil))
        let wire = try JSONSerialization.jsonObject(with: JSONEncoder().encode(callback)) as? [String: Any]
        let event = try #require(wire?["audioInterruption"] as? [String: Any])
        #expect(Set(event.keys) == Set(try #require(IDLFields.type("AudioInterruption", in: AppInterface.definition)).keys))
    }

    @Test("MODE-1: a category the system does not know is refused, naming it and the categories there are")
    func unknownCategory() throws {
        let message = ModesInterface.AudioSessionMessage(category: "loud", mixWithOthers: false, active: true)
        guard case .failure(let error) = message.request() else {
            Issue.record("an unknown category was accepted")
            return
        }
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains("'loud'"))
        #expect(error.fix.contains("playback") && error.fix.contains("playAndRecord"))
        let good = try ModesInterface.AudioSessionMessage(category: "playback", mixWithOthers: true, active: false).request().get()
        #expect(good == AudioSessionRequest(category: .playback, mixWithOthers: true, active: false))
    }

    @Test("MODE-1: an interruption callback travels intact through the hand-written and the Foundation coders")
    func interruptionCallbackRoundTrip() throws {
        let callback = AppInterface.CallbackMessage(
            Callback(id: CallbackID(7), kind: .audioInterruption(.init(began: true, reason: "an \"incoming\" call")), deadline: nil))
        var json = VarlinkDirectJSON()
        try callback.appendJSON(to: &json)
        let direct = Data(json.bytes)
        #expect(try JSONDecoder().decode(AppInterface.CallbackMessage.self, from: direct) == callback)
        #expect(try JSONDecoder().decode(AppInterface.CallbackMessage.self, from: JSONEncoder().encode(callback)) == callback)
    }
}
