import Foundation
import OffstageCore

@testable import OffstageProtocol

/// The properties every input of the `modes-control` fuzz target must keep (SPEC MODE-1..MODE-4, CLI-1, §11). An input
/// is one Varlink message, as the CLI's `io.offstage.ModesControl` call would be; it goes the way `ModesControlService`
/// takes it: the codec, the wire parameters, their conversion (the app id, the system event, the accessory event, the
/// fixed position), the core — in each of ``InterfaceFuzz/cores``. A fixed position goes on to the core as the
/// location source would deliver it.
///
/// Reading a track file and connecting to gpsd are the location service's (its own thread, tested with real files and
/// a real gpsd); here their parameters are decoded. A refusal names what was wrong and changes nothing; an accepted
/// call does what it says and leaves state that can be saved.
enum ModesControlFuzzChecks {
    typealias Outcome = InterfaceFuzz.Outcome
    typealias Violation = InterfaceFuzz.Violation

    /// The errors `ModesControlService` may pass on from the conversions and the core: those ModesControl declares.
    static let declared = InterfaceFuzz.declaredErrors(ModesControlInterface.definition)

    @discardableResult
    static func check(_ bytes: [UInt8]) throws(Violation) -> Outcome {
        try InterfaceFuzz.check(bytes, of: ModesControlInterface.name) { call, core, now throws(Violation) in try check(call, in: core, at: now) }
    }

    private static func check(_ call: VarlinkReceivedCall, in start: OffstageCore, at now: Instant) throws(Violation) -> Outcome {
        let method = call.header.method
        func run(_ body: (inout OffstageCore) throws -> Void) throws(Violation) -> Outcome {
            try InterfaceFuzz.run(method, in: start, allowed: declared, body)
        }
        func query() throws(Violation) -> Outcome {
            try InterfaceFuzz.parameters(call, as: VarlinkEmpty.self) == nil ? .refusedParameters : .accepted
        }
        switch method {
        case ModesControlInterface.Method.audioSessions, ModesControlInterface.Method.voipApps,
            ModesControlInterface.Method.location, ModesControlInterface.Method.accessories:
            return try query()
        case ModesControlInterface.Method.audioInterruption:
            guard let parameters = try InterfaceFuzz.parameters(call, as: ModesControlInterface.AudioInterruptionParameters.self) else {
                return .refusedParameters
            }
            return try run { core in
                _ = try core.audioInterruption(began: parameters.begin, at: now)
                guard core.modes.audio.systemInterruption == parameters.begin else {
                    throw Violation("after AudioInterruption(begin: \(parameters.begin)) the interruption is \(core.modes.audio.systemInterruption)")
                }
            }
        case ModesControlInterface.Method.systemEvent:
            guard let parameters = try InterfaceFuzz.parameters(call, as: ModesControlInterface.SystemEventParameters.self) else {
                return .refusedParameters
            }
            return try run { core in
                let event = try parameters.event().get()
                let (told, _) = core.systemEvent(event, at: now)
                guard (0...core.apps.count).contains(told) else { throw Violation("a system event told \(told) apps of \(core.apps.count)") }
            }
        case ModesControlInterface.Method.voipSocketEvent:
            guard let parameters = try InterfaceFuzz.parameters(call, as: ModesControlInterface.VoIPSocketEventParameters.self) else {
                return .refusedParameters
            }
            return try run { core in
                let id = try InterfaceFuzz.appID(parameters.app)
                _ = try core.simulateVoIPSocketEvent(id, closed: parameters.closed, at: now)
                // The shell stops watching the socket until the app asks again, as a real event would make it.
                guard core.modes.voip.sockets[id]?.armed != true else { throw Violation("the socket is still watched after its event") }
            }
        case ModesControlInterface.Method.setLocation:
            guard let parameters = try InterfaceFuzz.parameters(call, as: ModesControlInterface.SetLocationParameters.self) else {
                return .refusedParameters
            }
            return try run { core in
                let fix = try LocationFix.fixed(
                    latitude: parameters.latitude, longitude: parameters.longitude,
                    horizontalAccuracy: parameters.accuracy ?? 65, at: now)
                guard fix.hasValidCoordinate, fix.horizontalAccuracy.isFinite, fix.horizontalAccuracy >= 0 else {
                    throw Violation("the position \(fix) was accepted")
                }
                _ = core.locationUpdated(fix, at: now)
                guard core.modes.location.lastFix == fix else { throw Violation("the source's fix is not the last one") }
            }
        case ModesControlInterface.Method.replayTrack:
            return try InterfaceFuzz.parameters(call, as: ModesControlInterface.ReplayTrackParameters.self) == nil
                ? .refusedParameters : .accepted
        case ModesControlInterface.Method.useGpsd:
            return try InterfaceFuzz.parameters(call, as: ModesControlInterface.UseGpsdParameters.self) == nil
                ? .refusedParameters : .accepted
        case ModesControlInterface.Method.accessoryEvent:
            guard let parameters = try InterfaceFuzz.parameters(call, as: ModesControlInterface.AccessoryEventParameters.self) else {
                return .refusedParameters
            }
            return try run { core in
                let id = try InterfaceFuzz.appID(parameters.app)
                let event = try parameters.accessoryEvent().get()
                _ = try core.simulateAccessoryEvent(id, name: parameters.name, event, at: now)
                guard let link = core.modes.accessories.links[id]?[parameters.name] else {
                    throw Violation("an event of an accessory \(id) never registered was accepted")
                }
                switch event {
                case .connected where link.connected != true, .disconnected where link.connected != false || link.session != nil:
                    throw Violation("after a simulated \(event) the accessory is \(link)")
                default: break
                }
            }
        default:
            return .notACall
        }
    }
}
