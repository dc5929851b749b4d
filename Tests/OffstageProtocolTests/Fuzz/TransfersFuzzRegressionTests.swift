import Foundation
import FuzzInputs
import Testing

/// Replays every committed input of the `transfers` fuzz target through the same checks the fuzzer runs
/// (`TransfersFuzzChecks`): an app's io.offstage.Transfers call taken through the codec, the conversion to the core's
/// request, the upload's file on disk and a core where another app has a session of the same name.
@Suite("Transfers fuzz regressions (SPEC TR-1..TR-6, §11 malformed input)")
struct TransfersFuzzRegressionTests {
    @Test(
        "TR-1, TR-6, §11: a Transfers call is refused with a clear error naming the field and changing nothing, or is kept, journaled and seen by its app alone within the limits",
        arguments: FuzzInput.all(of: "transfers"))
    func call(input: FuzzInput) {
        do {
            try TransfersFuzzChecks.check(input.bytes)
        } catch {
            Issue.record("\(input): \(error)")
        }
    }

    @Test("TR-1: the seeds go as far as their names say: 'refused-' ones are refused, 'bad-parameters-' ones are InvalidParameter, the others succeed")
    func seedsGoAsFarAsNamed() throws {
        let seeds = FuzzInput.all(of: "transfers").filter { $0.path.hasPrefix("Corpus/") }
        #expect(seeds.count >= 20, "no seeds under \(FuzzInput.root.path)")
        for seed in seeds {
            let outcome = try TransfersFuzzChecks.check(seed.bytes)
            if seed.path.contains("/bad-parameters-") {
                #expect(outcome == .refusedParameters, "\(seed)")
            } else if seed.path.contains("/refused-") {
                #expect(outcome == .refused, "\(seed)")
            } else {
                #expect(outcome == .accepted, "\(seed)")
            }
        }
    }

    @Test("TR-1, §11: every input that once broke a property is refused now")
    func regressionsAreRefused() throws {
        for input in FuzzInput.all(of: "transfers") where input.path.hasPrefix("Regressions/") {
            #expect(try TransfersFuzzChecks.check(input.bytes) == .refused, "\(input)")
        }
    }
}
