import Foundation
import OffstageCore

@testable import OffstageProtocol

/// The properties every input of the `push-control` fuzz target must keep (SPEC NT-3..NT-5, §11). An input is one
/// Varlink message, as the CLI's `io.offstage.PushControl` call would be; it goes the way `PushControlService` takes it:
/// the codec, the wire parameters, their checks (the app named, the number of records, the key's names), and the core's
/// push budgets that the status reports — in each of ``InterfaceFuzz/cores``, where the other app has had a push.
///
/// What the service then asks of the store (records, tokens, keys: SQLite with bound parameters) and of the key's PEM
/// (swift-crypto) is tested against a real store and real keys; here their parameters are decoded and checked. A
/// refusal is one of the errors PushControl declares, with a message and a fix; a status reports budgets between none
/// and the burst.
enum PushControlFuzzChecks {
    typealias Outcome = InterfaceFuzz.Outcome
    typealias Violation = InterfaceFuzz.Violation

    static let declared = InterfaceFuzz.declaredErrors(PushControlInterface.definition)

    @discardableResult
    static func check(_ bytes: [UInt8]) throws(Violation) -> Outcome {
        try InterfaceFuzz.check(bytes, of: PushControlInterface.name) { call, core, now throws(Violation) in try check(call, in: core, at: now) }
    }

    private static func check(_ call: VarlinkReceivedCall, in start: OffstageCore, at now: Instant) throws(Violation) -> Outcome {
        let method = call.header.method
        func run(_ body: (inout OffstageCore) throws -> Void) throws(Violation) -> Outcome {
            try InterfaceFuzz.run(method, in: start, allowed: declared, body)
        }
        switch method {
        case PushControlInterface.Method.status:
            guard let parameters = try InterfaceFuzz.parameters(call, as: PushControlInterface.StatusParameters.self) else {
                return .refusedParameters
            }
            let limit: Int
            do throws(VarlinkError) {
                limit = try parameters.checkedLimit()
            } catch {
                return try InterfaceFuzz.refusedParameter(error, of: method)
            }
            return try run { core in
                let id = try parameters.app.map { text throws(CoreError) in try InterfaceFuzz.installedApp(text, in: core) }
                guard (0...10_000).contains(limit) else { throw Violation("a limit of \(limit) records was accepted") }
                let limits = core.pushLimits
                for app in id.map({ [$0] }) ?? core.apps.keys.sorted() {
                    let budget = core.pushes.budgets[app]?.wakes(at: now, limits) ?? limits.burst
                    guard (0...limits.burst).contains(budget) else { throw Violation("\(app) has a budget of \(budget) wakes") }
                }
            }
        case PushControlInterface.Method.addKey:
            guard let parameters = try InterfaceFuzz.parameters(call, as: PushControlInterface.AddKeyParameters.self) else {
                return .refusedParameters
            }
            return try run { _ in
                try parameters.checkNames()
                for name in [parameters.id, parameters.teamId] where !(1...64).contains(name.utf8.count) || !name.allSatisfy(\.isASCII) {
                    throw Violation("a key named \(name.debugDescription) was accepted")
                }
            }
        case PushControlInterface.Method.keys:
            return try InterfaceFuzz.parameters(call, as: VarlinkEmpty.self) == nil ? .refusedParameters : .accepted
        case PushControlInterface.Method.removeKey:
            return try InterfaceFuzz.parameters(call, as: PushControlInterface.RemoveKeyParameters.self) == nil
                ? .refusedParameters : .accepted
        case PushControlInterface.Method.token:
            guard let parameters = try InterfaceFuzz.parameters(call, as: PushControlInterface.TokenParameters.self) else {
                return .refusedParameters
            }
            return try run { core in _ = try InterfaceFuzz.installedApp(parameters.app, in: core) }
        default:
            return .notACall
        }
    }
}
