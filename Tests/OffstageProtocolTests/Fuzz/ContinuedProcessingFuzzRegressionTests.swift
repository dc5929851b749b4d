import Foundation
import FuzzInputs
import Testing

/// Replays every committed input of the `continued-processing` fuzz target through the same checks the fuzzer runs
/// (`ContinuedProcessingFuzzChecks`): an app's SubmitTask of a continued-processing request, or its ReportTaskProgress,
/// taken through the codec and the wire types into a core with its slots free and one with them taken.
@Suite("Continued-processing fuzz regressions (SPEC SCH-11, §11 malformed input)")
struct ContinuedProcessingFuzzRegressionTests {
    @Test(
        "SCH-11, §11: a submission or progress report is refused with a clear error naming the field and changing nothing, or runs or queues within the slots with its title and progress as given",
        arguments: FuzzInput.all(of: "continued-processing"))
    func call(input: FuzzInput) {
        do {
            try ContinuedProcessingFuzzChecks.check(input.bytes)
        } catch {
            Issue.record("\(input): \(error)")
        }
    }

    @Test("SCH-11: the seeds go as far as their names say: 'refused-' ones are refused, 'bad-parameters-' ones are InvalidParameter, the others accepted")
    func seedsGoAsFarAsNamed() throws {
        let seeds = FuzzInput.all(of: "continued-processing").filter { $0.path.hasPrefix("Corpus/") }
        #expect(seeds.count >= 15, "no seeds under \(FuzzInput.root.path)")
        for seed in seeds {
            let outcome = try ContinuedProcessingFuzzChecks.check(seed.bytes)
            if seed.path.contains("/bad-parameters-") {
                #expect(outcome == .refusedParameters, "\(seed)")
            } else if seed.path.contains("/refused-") {
                #expect(outcome == .refused, "\(seed)")
            } else {
                #expect(outcome == .accepted, "\(seed)")
            }
        }
    }
}
