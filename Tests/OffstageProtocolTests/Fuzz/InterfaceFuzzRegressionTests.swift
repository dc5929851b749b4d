import Foundation
import FuzzInputs
import Testing

/// Replays every committed input of the interface fuzz targets through the checks the fuzzers run, and holds the seeds
/// to their names: a seed named `refused-…` is refused by the conversion or the core, `bad-parameters-…` as
/// InvalidParameter, any other is accepted in at least one of the cores.
@Suite("Interface fuzz regressions (SPEC §11 malformed input: a clear error, nothing changed)")
struct InterfaceFuzzRegressionTests {
    typealias Check = ([UInt8]) throws(InterfaceFuzz.Violation) -> InterfaceFuzz.Outcome

    @Test(
        "MODE-1..4, §11: an app's Modes call is refused with a declared error changing nothing, or does what it says",
        arguments: FuzzInput.all(of: "modes"))
    func modes(input: FuzzInput) { replay(input, ModesFuzzChecks.check) }

    @Test("MODE-1..4: the modes seeds go as far as their names say")
    func modesSeeds() throws { try seedsGoAsFarAsNamed("modes", ModesFuzzChecks.check) }

    @Test(
        "MODE-1..4, CLI-1, §11: the user's ModesControl call is refused with a declared error changing nothing, or does what it says",
        arguments: FuzzInput.all(of: "modes-control"))
    func modesControl(input: FuzzInput) { replay(input, ModesControlFuzzChecks.check) }

    @Test("CLI-1: the modes-control seeds go as far as their names say")
    func modesControlSeeds() throws { try seedsGoAsFarAsNamed("modes-control", ModesControlFuzzChecks.check) }

    @Test(
        "SCH-8, SCH-9, SET-1, §11: explain, its history, the task list and the debug commands refuse with a declared error changing nothing, or answer a reply that can be sent",
        arguments: FuzzInput.all(of: "control-explain"))
    func controlExplain(input: FuzzInput) { replay(input, ControlExplainFuzzChecks.check) }

    @Test("SCH-8: the control-explain seeds go as far as their names say")
    func controlExplainSeeds() throws { try seedsGoAsFarAsNamed("control-explain", ControlExplainFuzzChecks.check) }

    @Test(
        "TR-1..6, §11: the user's TransfersControl call is refused with a declared error changing nothing, or leaves the task as the change says",
        arguments: FuzzInput.all(of: "transfers-control"))
    func transfersControl(input: FuzzInput) { replay(input, TransfersControlFuzzChecks.check) }

    @Test("TR-1..6: the transfers-control seeds go as far as their names say")
    func transfersControlSeeds() throws { try seedsGoAsFarAsNamed("transfers-control", TransfersControlFuzzChecks.check) }

    @Test(
        "NT-3..5, §11: the user's PushControl call is refused with a declared error, or its checks and budgets hold",
        arguments: FuzzInput.all(of: "push-control"))
    func pushControl(input: FuzzInput) { replay(input, PushControlFuzzChecks.check) }

    @Test("NT-3..5: the push-control seeds go as far as their names say")
    func pushControlSeeds() throws { try seedsGoAsFarAsNamed("push-control", PushControlFuzzChecks.check) }

    @Test(
        "NT-2, CLI-2, §11: the user's NotificationsControl call is refused with a clear error changing nothing, or lists, taps or clears as it says",
        arguments: FuzzInput.all(of: "notifications-control"))
    func notificationsControl(input: FuzzInput) { replay(input, NotificationsControlFuzzChecks.check) }

    @Test("NT-2: the notifications-control seeds go as far as their names say")
    func notificationsControlSeeds() throws { try seedsGoAsFarAsNamed("notifications-control", NotificationsControlFuzzChecks.check) }

    @Test(
        "MODE-2, MODE-4, §11: a call on the hand-off socket is refused with a declared error changing nothing, or hands the socket or session over",
        arguments: FuzzInput.all(of: "hand-off"))
    func handOff(input: FuzzInput) { replay(input, HandOffFuzzChecks.check) }

    @Test("MODE-2, MODE-4: the hand-off seeds go as far as their names say")
    func handOffSeeds() throws { try seedsGoAsFarAsNamed("hand-off", HandOffFuzzChecks.check, atLeast: 6) }

    private func replay(_ input: FuzzInput, _ check: Check) {
        do {
            _ = try check(input.bytes)
        } catch {
            Issue.record("\(input): \(error)")
        }
    }

    private func seedsGoAsFarAsNamed(_ target: String, _ check: Check, atLeast count: Int = 10) throws {
        let seeds = FuzzInput.all(of: target).filter { $0.path.hasPrefix("Corpus/") }
        #expect(seeds.count >= count, "too few seeds under \(FuzzInput.root.path)/Corpus/\(target)")
        for seed in seeds {
            let outcome = try check(seed.bytes)
            let name = seed.path.split(separator: "/").last.map(String.init) ?? seed.path
            let expected: InterfaceFuzz.Outcome =
                name.hasPrefix("bad-parameters-") ? .refusedParameters : name.hasPrefix("refused-") ? .refused : .accepted
            #expect(outcome == expected, "\(seed) went to \(outcome)")
        }
    }
}
