/// libFuzzer's entry point for the `continued-processing` target. Each input is one Varlink message, as an app's call would be:
/// decoded and taken through the wire types into a real `OffstageCore`, the way the daemon takes it.
///
/// The properties live in `Tests/OffstageProtocolTests/Fuzz/ContinuedProcessingFuzzChecks.swift`, shared with the regression tests; a
/// broken one stops the run with its description, so libFuzzer keeps the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    do {
        try ContinuedProcessingFuzzChecks.check(Array(UnsafeBufferPointer(start: data, count: size)))
    } catch {
        fatalError("continued-processing: \(error)")
    }
    return 0
}
