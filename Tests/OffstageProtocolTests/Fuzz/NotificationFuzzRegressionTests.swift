import Foundation
import FuzzInputs
import Testing

/// Replays every committed input of the `notification-add` fuzz target through the same checks the fuzzer runs
/// (`NotificationFuzzChecks`): an app's Add call taken through the codec, the core, its firing and the user's
/// listing.
@Suite("Notification fuzz regressions (SPEC NT-1, §11 malformed input)")
struct NotificationFuzzRegressionTests {
    @Test(
        "NT-1, §11: an Add call is refused with a clear error changing nothing, or fires once as the listing shows it",
        arguments: FuzzInput.all(of: "notification-add"))
    func add(input: FuzzInput) {
        do {
            try NotificationFuzzChecks.checkAdd(input.bytes)
        } catch {
            Issue.record("\(input): \(error)")
        }
    }

    @Test("NT-1: the seeds go as far as their names say: the good ones fire, the 'refused-' ones are refused")
    func seedsGoAsFarAsNamed() throws {
        let seeds = FuzzInput.all(of: "notification-add").filter { $0.path.hasPrefix("Corpus/") }
        #expect(seeds.count >= 8, "no seeds under \(FuzzInput.root.path)")
        for seed in seeds {
            let outcome = try NotificationFuzzChecks.checkAdd(seed.bytes)
            if seed.path.contains("/refused-wrong-type") {
                #expect(outcome == .refusedParameters, "\(seed)")
            } else if seed.path.contains("/refused-") {
                #expect(outcome == .refusedRequest, "\(seed)")
            } else {
                #expect(outcome == .fired, "\(seed)")
            }
        }
    }
}
