import Foundation
import FuzzInputs
import Testing

/// Replays every committed input of the Varlink fuzz targets through the same property checks the fuzzers run
/// (`VarlinkFuzzChecks`), so that each bug a fuzzer found stays fixed in the ordinary `swift test` run. The inputs are
/// the seeds (`Fuzz/Corpus/<target>/`) and the inputs that once failed (`Fuzz/Regressions/<target>/`); `scripts/fuzz`
/// does the fuzzing itself.
@Suite("Varlink fuzz regressions (SPEC §11 malformed input)")
struct VarlinkFuzzRegressionTests {
    @Test(
        "§11 malformed input: the framing delivers exactly the messages of the stream, or MessageTooLarge",
        arguments: FuzzInput.all(of: "varlink-framing"))
    func framing(input: FuzzInput) {
        do {
            try VarlinkFuzzChecks.checkFraming(input.bytes)
        } catch {
            Issue.record("\(input): \(error)")
        }
    }

    @Test(
        "§11 malformed input: the codec refuses with the documented error or decodes as Foundation reads, both ways",
        arguments: FuzzInput.all(of: "varlink-codec"))
    func codec(input: FuzzInput) {
        do {
            try VarlinkFuzzChecks.checkCodec(input.bytes)
        } catch {
            Issue.record("\(input): \(error)")
        }
    }

    @Test(
        "§11 malformed input: the envelope scanner agrees with Foundation on what is a JSON object and its members",
        arguments: FuzzInput.all(of: "json-envelope"))
    func envelopeScanner(input: FuzzInput) {
        do {
            try VarlinkFuzzChecks.checkEnvelopeScanner(input.bytes)
        } catch {
            Issue.record("\(input): \(error)")
        }
    }

    @Test("§11 malformed input: the committed fuzz inputs are found, so the replays above are not empty")
    func inputsAreFound() {
        for target in ["varlink-framing", "varlink-codec", "json-envelope"] {
            #expect(
                FuzzInput.all(of: target).count >= 5, "no committed inputs for \(target) under \(FuzzInput.root.path)")
        }
    }
}
