import Foundation
import OffstageCore

@testable import OffstageProtocol

/// The properties every input of the `transfers-control` fuzz target must keep (SPEC TR-1..TR-6, CLI-1, §11). An input
/// is one Varlink message, as the CLI's `io.offstage.TransfersControl` call would be (`offstage transfers`, and pause,
/// resume or cancel by hand); it goes the way `TransfersControlService` takes it: the codec, the wire parameters, the
/// app or the change named, the core — in each of ``InterfaceFuzz/cores``, where the app and the other app each have a
/// download waiting.
///
/// A refusal is one of the errors TransfersControl declares, with a message and a fix, and changes nothing; an accepted
/// change leaves the task as the change says, and a listing shows only the app asked for.
enum TransfersControlFuzzChecks {
    typealias Outcome = InterfaceFuzz.Outcome
    typealias Violation = InterfaceFuzz.Violation

    static let declared = InterfaceFuzz.declaredErrors(TransfersControlInterface.definition)

    @discardableResult
    static func check(_ bytes: [UInt8]) throws(Violation) -> Outcome {
        try InterfaceFuzz.check(bytes, of: TransfersControlInterface.name) { call, core, now throws(Violation) in try check(call, in: core, at: now) }
    }

    private static func check(_ call: VarlinkReceivedCall, in start: OffstageCore, at now: Instant) throws(Violation) -> Outcome {
        let method = call.header.method
        switch method {
        case TransfersControlInterface.Method.list:
            guard let parameters = try InterfaceFuzz.parameters(call, as: TransfersControlInterface.ListParameters.self) else {
                return .refusedParameters
            }
            return try InterfaceFuzz.run(method, in: start, allowed: declared) { core in
                let app = try parameters.app.map { text throws(CoreError) in try InterfaceFuzz.installedApp(text, in: core) }
                let tasks = app.map { core.transfers.tasks(of: $0) } ?? core.transfers.tasks.values.sorted { $0.id < $1.id }
                guard tasks.allSatisfy({ app == nil || $0.app == app }), tasks.count <= core.transfers.tasks.count else {
                    throw Violation("the listing of \(String(describing: app)) shows another app's transfers")
                }
                for task in tasks { _ = core.transferWaitingFor(task, at: now) }
            }
        case TransfersControlInterface.Method.change:
            guard let parameters = try InterfaceFuzz.parameters(call, as: TransfersControlInterface.ChangeParameters.self) else {
                return .refusedParameters
            }
            return try InterfaceFuzz.run(method, in: start, allowed: declared) { core in
                let change = try TransfersInterface.change(parameters.change)
                let before = core.transfers.tasks[parameters.id]?.state
                _ = try core.changeTransfer(parameters.id, change, app: nil, at: now)
                guard let state = core.transfers.tasks[parameters.id]?.state else {
                    throw Violation("a change of transfer \(parameters.id), which does not exist, was accepted")
                }
                // A finished task stays as it ended; any other goes where the change sends it.
                let expected: Bool = switch change {
                case .cancel: state == .failed || (before?.isFinished == true && state == before)
                case .pause: state == .paused || (before?.isFinished == true && state == before)
                case .resume: state == .waiting || state == .running || (before?.isFinished == true && state == before)
                }
                guard expected else { throw Violation("after \(change) transfer \(parameters.id) went from \(String(describing: before)) to \(state)") }
            }
        default:
            return .notACall
        }
    }
}
