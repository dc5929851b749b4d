import Foundation
import OffstageCore

@testable import OffstageProtocol

/// The properties every input of the `hand-off` fuzz target must keep (SPEC MODE-2, MODE-4, §11). An input is what an
/// app sends on the hand-off socket: one Varlink call ended by a NUL byte, with a descriptor attached. It goes the way
/// `SocketHandOffServer` and `HandedOffChannels` take it: the bytes up to the first NUL, the codec, the parameters as
/// JSON, the call they make (``ModesInterface/HandOffCall``), then the core, as the app that declares every mode — in
/// each of ``InterfaceFuzz/cores``. The descriptor's own checks (a connected socket; a character device, FIFO or
/// socket) run on real descriptors in the integration tests; here it is taken to have passed them, with a new token.
///
/// A refusal is one Modes declares (or MethodNotFound, or the codec's), with a message and a fix, and changes nothing;
/// an accepted hand-off leaves the socket or the accessory's session with the new token.
enum HandOffFuzzChecks {
    typealias Outcome = InterfaceFuzz.Outcome
    typealias Violation = InterfaceFuzz.Violation

    static let token: UInt64 = 99

    @discardableResult
    static func check(_ bytes: [UInt8]) throws(Violation) -> Outcome {
        // The server reads up to the NUL that ends a call; without one the call is not complete.
        guard let end = bytes.firstIndex(of: 0), let call = try? VarlinkCodec.decodeCall(Data(bytes[..<end])) else { return .notACall }
        let parameters: JSONValue
        do throws(VarlinkError) {
            parameters = try call.decodeParameters(as: JSONValue.self)
        } catch {
            return try InterfaceFuzz.refusedParameter(error, of: call.header.method)
        }
        let handOff: ModesInterface.HandOffCall
        do throws(VarlinkError) {
            handOff = try ModesInterface.HandOffCall(method: call.header.method, parameters: parameters)
        } catch {
            if error.name == VarlinkError.Name.methodNotFound { return .notACall }
            guard error.name == "\(ModesInterface.name).InvalidArgument", error.stringParameter("message")?.isEmpty == false,
                error.stringParameter("fix")?.isEmpty == false
            else { throw Violation("a hand-off of \(call.header.method) refused as \(error)") }
            return .refused
        }
        return try InterfaceFuzz.each { core, now throws(Violation) in try check(handOff, in: core, at: now) }
    }

    private static func check(_ handOff: ModesInterface.HandOffCall, in start: OffstageCore, at now: Instant) throws(Violation) -> Outcome {
        let app = InterfaceFuzz.app, pid = InterfaceFuzz.pid
        return try InterfaceFuzz.run("hand-off \(handOff)", in: start, allowed: ModesFuzzChecks.declared) { core in
            switch handOff {
            case .socket:
                _ = try core.socketHandedOff(app, pid: pid, token: token, at: now)
                guard core.modes.voip.sockets[app]?.token == token else { throw Violation("the handed-off socket is not the app's") }
            case .accessorySession(let name):
                _ = try core.accessorySessionHandedOff(app, pid: pid, name: name, token: token, at: now)
                guard core.modes.accessories.links[app]?[name]?.session?.token == token else {
                    throw Violation("the session handed off to \(name.debugDescription) is not the accessory's")
                }
            }
        }
    }
}
