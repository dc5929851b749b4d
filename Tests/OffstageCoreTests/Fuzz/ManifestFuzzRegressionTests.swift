import Foundation
import FuzzInputs
import Testing

/// Replays every committed input of the manifest fuzz targets through the same property checks the fuzzers run
/// (`ManifestFuzzChecks`), so that each bug a fuzzer found stays fixed in the ordinary `swift test` run. The inputs are
/// the seeds (`Fuzz/Corpus/<target>/`: the example apps' manifests in every format) and the inputs that once failed
/// (`Fuzz/Regressions/<target>/`); `scripts/fuzz` does the fuzzing itself.
@Suite("Manifest fuzz regressions (SPEC MAN-2, §11 malformed input)")
struct ManifestFuzzRegressionTests {
    @Test(
        "MAN-2: a property list manifest is refused naming the file and a fix, or accepted valid and format-free",
        arguments: FuzzInput.all(of: "manifest-plist"))
    func propertyList(input: FuzzInput) {
        do {
            try ManifestFuzzChecks.check(input.bytes, format: .propertyList)
        } catch {
            Issue.record("\(input): \(error)")
        }
    }

    @Test(
        "MAN-2: a JSON manifest is refused naming the file and a fix, or accepted valid and format-free",
        arguments: FuzzInput.all(of: "manifest-json"))
    func json(input: FuzzInput) {
        do {
            try ManifestFuzzChecks.check(input.bytes, format: .json)
        } catch {
            Issue.record("\(input): \(error)")
        }
    }

    @Test("§11 malformed input: the committed fuzz inputs are found, so the replays above are not empty")
    func inputsAreFound() {
        for target in ["manifest-plist", "manifest-json"] {
            #expect(
                FuzzInput.all(of: target).count >= 5, "no committed inputs for \(target) under \(FuzzInput.root.path)")
        }
    }
}
