/// libFuzzer's entry point for the `manifest-json` target. Each input is the bytes of a JSON manifest for
/// `ManifestParser`.
///
/// The properties live in `Tests/OffstageCoreTests/Fuzz/ManifestFuzzChecks.swift`, shared with the regression tests;
/// a broken one stops the run with its description, so libFuzzer keeps the input (see `scripts/fuzz`).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    do {
        try ManifestFuzzChecks.check(Array(UnsafeBufferPointer(start: data, count: size)), format: .json)
    } catch {
        fatalError("manifest-json: \(error)")
    }
    return 0
}
