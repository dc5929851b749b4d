import Foundation
import FuzzInputs
import Testing

@testable import OffstagePush

/// Replays every committed input of the `push-request` fuzz target through the same checks the fuzzer runs
/// (`PushRequestFuzzChecks`): a provider API request through the gateway's request rules and payload parser.
@Suite("Push request fuzz regressions (SPEC NT-3, §11 malformed input)")
struct PushRequestFuzzRegressionTests {
    @Test(
        "NT-3, §11: a request is refused with an APNs reason and its documented status, or accepted as a push that re-validates identically",
        arguments: FuzzInput.all(of: "push-request"))
    func request(input: FuzzInput) {
        do {
            try PushRequestFuzzChecks.check(input.bytes)
        } catch {
            Issue.record("\(input): \(error)")
        }
    }

    @Test("NT-3: the seeds go as far as their names say: 'refused-<Reason>' ones are refused with that reason, the others accepted")
    func seedsGoAsFarAsNamed() throws {
        let seeds = FuzzInput.all(of: "push-request").filter { $0.path.hasPrefix("Corpus/") }
        #expect(seeds.count >= 10, "no seeds under \(FuzzInput.root.path)")
        for seed in seeds {
            let outcome = try PushRequestFuzzChecks.check(seed.bytes)
            let name = seed.path.split(separator: "/").last.map(String.init) ?? ""
            if name.hasPrefix("refused-") {
                let reason = try #require(APNsReason(rawValue: String(name.dropFirst("refused-".count).prefix { $0 != "-" })), "\(seed)")
                #expect(outcome == .refused(reason), "\(seed)")
            } else {
                #expect(outcome == .accepted, "\(seed)")
            }
        }
    }
}
