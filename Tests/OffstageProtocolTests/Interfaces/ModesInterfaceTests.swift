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
        #expect(
            modes.methods == [
                "SetAudioSession", "SetAudioPlaying", "SetKeepAliveTimeout", "HandOffSocket", "StartUpdatingLocation",
                "StopUpdatingLocation", "StartMonitoringSignificantChanges", "StopMonitoringSignificantChanges",
                "RegisterAccessory", "UnregisterAccessory", "Accessories", "HandOffAccessorySession",
            ])
        let names = [
            ModesInterface.Method.setAudioSession, ModesInterface.Method.setAudioPlaying,
            ModesInterface.Method.setKeepAliveTimeout, ModesInterface.Method.handOffSocket,
            ModesInterface.Method.startUpdatingLocation, ModesInterface.Method.stopUpdatingLocation,
            ModesInterface.Method.startMonitoringSignificantChanges, ModesInterface.Method.stopMonitoringSignificantChanges,
            ModesInterface.Method.registerAccessory, ModesInterface.Method.unregisterAccessory,
            ModesInterface.Method.accessories, ModesInterface.Method.handOffAccessorySession,
        ]
        #expect(names.allSatisfy {
            modes.methods.contains(String($0.split(separator: ".").last!))
        })
        let control = try VarlinkIDLChecker.check(ModesControlInterface.definition)
        #expect(
            control.methods == [
                "AudioSessions", "AudioInterruption", "VoIPApps", "VoIPSocketEvent", "SystemEvent", "Location", "ReplayTrack",
                "SetLocation", "UseGpsd", "Accessories", "AccessoryEvent",
            ])
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

    @Test("MODE-3: the location types and methods have exactly the IDL's fields, in both interfaces")
    func locationMatchesIDL() throws {
        let text = ModesInterface.definition
        let start = try #require(IDLFields.method("StartUpdatingLocation", in: text))
        let parameters = ModesInterface.StartUpdatingLocationParameters(desiredAccuracy: 10, distanceFilter: 5, allowsBackground: true)
        #expect(try IDLFields.keys(of: parameters) == Set(start.input.keys))
        #expect(parameters.request == LocationRequest(desiredAccuracy: 10, distanceFilter: 5, allowsBackground: true))

        let fix = LocationFix(
            latitude: 48, longitude: 11, altitude: 500, horizontalAccuracy: 5, verticalAccuracy: 8, speed: 1.4, course: 90,
            timestamp: Instant(secondsSinceEpoch: 1_700_000_000))
        let location = AppInterface.LocationMessage(fix)
        #expect(location.fix == fix)
        let app = AppInterface.definition
        #expect(try IDLFields.keys(of: location) == Set(try #require(IDLFields.type("Location", in: app)).keys))
        let callback = AppInterface.CallbackMessage(Callback(id: CallbackID(3), kind: .locations([fix]), deadline: nil))
        let callbackFields = try #require(IDLFields.type("Callback", in: app)).keys
        #expect(callbackFields.contains("locations") && callbackFields.contains("locationError"))
        #expect(try IDLFields.keys(of: callback).isSubset(of: Set(callbackFields)))

        let control = ModesControlInterface.definition
        #expect(try IDLFields.keys(of: location) == Set(try #require(IDLFields.type("Position", in: control)).keys))
        let listener = ModesControlInterface.LocationAppMessage(
            app: "com.example.tracker", updating: nil, significantChanges: true, hold: nil)
        #expect(try IDLFields.keys(of: listener) == Set(try #require(IDLFields.type("LocationApp", in: control)).keys))
        let reply = ModesControlInterface.LocationReply(kind: "fixed", source: "s", status: "t", lastFix: location, apps: [listener])
        for method in ["Location", "ReplayTrack", "SetLocation", "UseGpsd"] {
            #expect(try IDLFields.keys(of: reply) == Set(try #require(IDLFields.method(method, in: control)).output.keys))
        }
        let replay = try #require(IDLFields.method("ReplayTrack", in: control))
        #expect(try IDLFields.keys(of: ModesControlInterface.ReplayTrackParameters(path: "/t.gpx", speed: 2, loop: true)) == Set(replay.input.keys))
        let set = try #require(IDLFields.method("SetLocation", in: control))
        #expect(try IDLFields.keys(of: ModesControlInterface.SetLocationParameters(latitude: 1, longitude: 2, accuracy: 3)) == Set(set.input.keys))
        let gpsd = try #require(IDLFields.method("UseGpsd", in: control))
        #expect(try IDLFields.keys(of: ModesControlInterface.UseGpsdParameters(host: "h", port: 1)) == Set(gpsd.input.keys))
    }

    @Test("MODE-3: a locations callback written by hand reads back the same through Foundation")
    func locationsCallbackRoundTrip() throws {
        let fixes = [
            LocationFix(latitude: 48, longitude: 11, horizontalAccuracy: 5, timestamp: Instant(secondsSinceEpoch: 1_700_000_000.5)),
            LocationFix(latitude: -33.9, longitude: 18.4, altitude: 12, horizontalAccuracy: 3, verticalAccuracy: 4, speed: 2,
                course: 180, timestamp: Instant(secondsSinceEpoch: 1_700_000_001)),
        ]
        let callback = AppInterface.CallbackMessage(Callback(id: CallbackID(9), kind: .locations(fixes), deadline: nil))
        var json = VarlinkDirectJSON()
        try callback.appendJSON(to: &json)
        let decoded = try JSONDecoder().decode(AppInterface.CallbackMessage.self, from: Data(json.bytes))
        #expect(decoded == callback)
        #expect(decoded.locations?.map(\.fix) == fixes)
        let error = AppInterface.CallbackMessage(Callback(id: CallbackID(10), kind: .locationError("gpsd went away"), deadline: nil))
        var errorJSON = VarlinkDirectJSON()
        try error.appendJSON(to: &errorJSON)
        #expect(try JSONDecoder().decode(AppInterface.CallbackMessage.self, from: Data(errorJSON.bytes)) == error)
    }
}
