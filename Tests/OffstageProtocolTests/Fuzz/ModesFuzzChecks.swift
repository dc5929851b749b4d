import Foundation
import OffstageCore

@testable import OffstageProtocol

/// The properties every input of the `modes` fuzz target must keep (SPEC MODE-1..MODE-4, MODE-6, §11). An input is one
/// Varlink message, as an app's `io.offstage.Modes` call would be (the hand-off socket's two methods are the `hand-off`
/// target's); it goes the way `ModesService` takes it: the codec, the wire parameters, their conversion, the core — in
/// each of ``InterfaceFuzz/cores``, as the app that declares every mode.
///
/// A refusal is one of the errors Modes declares, with a message and a fix, and changes nothing; an accepted call does
/// what it says (the keep-alive, the audio session, the location request or the accessory as given) and leaves state
/// that can be saved.
enum ModesFuzzChecks {
    typealias Outcome = InterfaceFuzz.Outcome
    typealias Violation = InterfaceFuzz.Violation

    /// What `ModesService` answers with: the core's codes it passes on, and AppNotRunning for the rest.
    static let declared: Set<CoreError.Code> = [.cannotInterruptOthers, .invalidArgument, .notPermitted, .appNotRunning]

    @discardableResult
    static func check(_ bytes: [UInt8]) throws(Violation) -> Outcome {
        try InterfaceFuzz.check(bytes, of: ModesInterface.name) { call, core, now throws(Violation) in try check(call, in: core, at: now) }
    }

    private static func check(_ call: VarlinkReceivedCall, in start: OffstageCore, at now: Instant) throws(Violation) -> Outcome {
        let app = InterfaceFuzz.app, pid = InterfaceFuzz.pid
        let method = call.header.method
        func run(_ body: (inout OffstageCore) throws -> Void) throws(Violation) -> Outcome {
            try InterfaceFuzz.run(method, in: start, allowed: declared, body)
        }
        switch method {
        case ModesInterface.Method.setAudioSession:
            guard let parameters = try InterfaceFuzz.parameters(call, as: ModesInterface.SetAudioSessionParameters.self) else {
                return .refusedParameters
            }
            return try run { core in
                let request = try parameters.session.request().get()
                _ = try core.setAudioSession(app, pid: pid, request, at: now)
                guard let session = core.modes.audio.session(of: app), session.category == request.category,
                    session.mixWithOthers == request.mixWithOthers, session.active == request.active
                else { throw Violation("after SetAudioSession the app's session is \(String(describing: core.modes.audio.session(of: app)))") }
            }
        case ModesInterface.Method.setAudioPlaying:
            guard let parameters = try InterfaceFuzz.parameters(call, as: ModesInterface.SetAudioPlayingParameters.self) else {
                return .refusedParameters
            }
            return try run { core in _ = try core.setAudioPlaying(app, pid: pid, playing: parameters.playing, at: now) }
        case ModesInterface.Method.setKeepAliveTimeout:
            guard let parameters = try InterfaceFuzz.parameters(call, as: ModesInterface.SetKeepAliveParameters.self) else {
                return .refusedParameters
            }
            return try run { core in
                _ = try core.setKeepAliveTimeout(app, pid: pid, seconds: parameters.seconds, at: now)
                let kept = core.modes.voip.keepAlives[app]
                if let seconds = parameters.seconds {
                    // SPEC MODE-2: at least 600 s, a number of seconds that a Duration and an Instant can carry.
                    guard seconds.isFinite, seconds >= core.configuration.keepAliveMinimumTimeout,
                        seconds <= CheckedNumber.longestDuration, let kept, kept.expiresAt > now
                    else { throw Violation("a keep-alive timeout of \(seconds) s was accepted as \(String(describing: kept))") }
                } else if kept != nil {
                    throw Violation("a null keep-alive timeout left \(String(describing: kept))")
                }
            }
        case ModesInterface.Method.startUpdatingLocation:
            guard let parameters = try InterfaceFuzz.parameters(call, as: ModesInterface.StartUpdatingLocationParameters.self) else {
                return .refusedParameters
            }
            return try run { core in
                _ = try core.startUpdatingLocation(app, pid: pid, parameters.request, at: now)
                // Negative values are Core Location's constants (kCLDistanceFilterNone: every fix); beyond the Earth's
                // circumference a distance means nothing.
                var request = parameters.request
                for (name, value) in [("desiredAccuracy", request.desiredAccuracy), ("distanceFilter", request.distanceFilter)]
                where !value.isFinite || abs(value) > LocationFix.earthCircumference {
                    throw Violation("a \(name) of \(value) m was accepted")
                }
                request.distanceFilter = max(0, request.distanceFilter)
                guard core.modes.location.updating[app]?.request == request else {
                    throw Violation("after StartUpdatingLocation the app updates with \(String(describing: core.modes.location.updating[app]))")
                }
            }
        case ModesInterface.Method.stopUpdatingLocation:
            return try run { core in
                _ = try core.stopUpdatingLocation(app, pid: pid, at: now)
                guard core.modes.location.updating[app] == nil else { throw Violation("StopUpdatingLocation left the updates on") }
            }
        case ModesInterface.Method.startMonitoringSignificantChanges:
            return try run { core in
                _ = try core.startMonitoringSignificantLocationChanges(app, pid: pid, at: now)
                guard core.modes.location.significant[app] != nil else { throw Violation("StartMonitoringSignificantChanges did not") }
            }
        case ModesInterface.Method.stopMonitoringSignificantChanges:
            return try run { core in
                _ = try core.stopMonitoringSignificantLocationChanges(app, pid: pid, at: now)
                guard core.modes.location.significant[app] == nil else { throw Violation("StopMonitoringSignificantChanges did not") }
            }
        case ModesInterface.Method.registerAccessory:
            guard let parameters = try InterfaceFuzz.parameters(call, as: ModesInterface.RegisterAccessoryParameters.self) else {
                return .refusedParameters
            }
            return try run { core in
                let registration = try parameters.registration().get()
                // The daemon asks the file system whether the path is there; here it is not.
                _ = try core.registerAccessory(app, pid: pid, registration, present: false, at: now)
                guard core.modes.accessories.links[app]?[registration.name]?.registration == registration else {
                    throw Violation("after RegisterAccessory the app has \(String(describing: core.modes.accessories.links[app]))")
                }
                try checkName(registration.name)
                guard registration.path.hasPrefix("/"), !registration.path.utf8.contains(0) else {
                    throw Violation("an accessory path \(registration.path.debugDescription) was accepted")
                }
            }
        case ModesInterface.Method.unregisterAccessory:
            guard let parameters = try InterfaceFuzz.parameters(call, as: ModesInterface.AccessoryNameParameters.self) else {
                return .refusedParameters
            }
            return try run { core in
                _ = try core.unregisterAccessory(app, pid: pid, name: parameters.name, at: now)
                guard core.modes.accessories.links[app]?[parameters.name] == nil else { throw Violation("UnregisterAccessory left it") }
            }
        case ModesInterface.Method.accessories:
            // A query: nothing to convert, nothing the core decides.
            return try InterfaceFuzz.parameters(call, as: VarlinkEmpty.self) == nil ? .refusedParameters : .accepted
        default:
            return .notACall
        }
    }

    /// An accessory's name, by MODE-4's rule written apart from the core's: 1 to 64 letters, digits, '.', '_' or '-'.
    private static func checkName(_ name: String) throws(Violation) {
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        guard (1...64).contains(name.count), name.allSatisfy(allowed.contains) else {
            throw Violation("an accessory named \(name.debugDescription) was accepted")
        }
    }
}
